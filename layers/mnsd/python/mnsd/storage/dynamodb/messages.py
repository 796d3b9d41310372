"""The message table on DynamoDB: one small lease item per message, the body inline when it fits in 1 KB.

The layout is `mnsd.storage.dynamodb.layout`. A queue's messages spread over its stripes (partitions):
a send writes each message to the stripe its id names; a receive reads stripes in turn from a random one
while it has too few, and sorts what it read by priority, then position (priority is best effort: within
what it read). How it reads a stripe depends on the queue's `placement.Spread`, which the store keeps itself
(`placer.Placer`: growth with the load it sees, the ready index turned on and built):
- a quiet queue's stripe (its writes do not keep the ready index): the leases in queue order from the
  table, in flight and delayed ones included, as many as it takes to find enough (on a stripe deeper than a
  page, mostly from a random point of its ready leases, as from the index: `_plain_ready`). The scan reports how many
  it read in vain (`ReadyScan.wasted`): too many, and the store turns the index on (`placer.Placer.received`).
- an indexing queue's stripe: the ready index (`pk = stripe AND w <= now`, a small page; on a stripe deeper
  than a page, mostly from a random point down, so concurrent consumers read different pages: `_window`).
  A consumer that loses a claim leaves the rest of that page to the winner. So a receive never reads a lease
  it cannot take (in flight or delayed: `w > now`); an expired lease it meets (retention over, TTL not yet
  done) it deletes, so each is read about once. Until the index is built over the leases written before it
  was kept (`build_index`), the stripes that hold them are read from the table; so is every stripe while the
  index cannot be read yet (created on an existing table, DynamoDB still backfilling it). A claim is a conditional
UpdateItem of the lease (`version` as observed, visible and unexpired), so two consumers can never own one
message; the index is eventually consistent on AWS, and a stale candidate just fails its claim. Nothing
ever rewrites a body: DynamoDB bills UpdateItem by the whole item, so only the small lease changes and TTL
(`x`, free) removes what retention ends. Deleting a message deletes its lease; an out-of-line body is left
to TTL. Counts read a bounded sample per stripe (of the index, or of the table) and estimate beyond it.

Ordered messages (a FIFO queue's: `Message.ordered`, a group in their key) are not striped: each group has a partition
of its own and a group item; `mnsd.storage.dynamodb.ordered` reads and claims them, and this store hands it every
call that concerns them.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from mnsd.queues.model import Backlog, Message, MessageRef, MessageState, QueueCounts
from mnsd.storage import ReadyScan
from mnsd.storage.dynamodb import dead_letters, enqueued
from mnsd.storage.dynamodb.conditions import THROTTLES, conditional
from mnsd.storage.dynamodb.layout import (
    BODY,
    INDEX_KEY,
    LEASE,
    READY_INDEX,
    Item,
    body_of,
    candidate_of,
    enqueued_at,
    is_kept,
    lease_item_key,
    lease_key,
    message_id_of,
    message_items,
    message_of,
    partition_of,
    queue_id_of,
    state_of,
    stripe_of,
    stripe_partition,
    visibility_set,
)
from mnsd.storage.dynamodb.ordered import OrderedMessages
from mnsd.storage.dynamodb.placement import Spread
from mnsd.storage.dynamodb.placer import Placer
from mnsd.storage.dynamodb.stripes import CONTENDED_SPREAD

_BATCH_WRITE_LIMIT = 25
_BATCH_GET_LIMIT = 100
# Pages of expired leases a receive clears from one stripe's head before moving on.
_EXPIRED_PAGES = 4
# Stripes whose next visible time an empty receive reads (a long poll's wake-up), chosen at random.
_NEXT_VISIBLE_STRIPES = 4
# Index items a count reads per state range, shared by the stripes (each reads at least the minimum).
COUNT_ITEMS = 1000
MIN_COUNT_ITEMS = 64
# Leases a count reads from the table per stripe the index does not cover (whole leases, not index items).
PLAIN_COUNT_ITEMS = 250
# After a read of the ready index failed because it cannot be read yet, the table is read instead this long.
_INDEX_RETRY_SECONDS = 30.0
# Receives read a stripe at its head in this share of reads, from its newest ready lease down in as many, and
# from a random point between in the rest, once it holds more than a page (`DynamoMessageStore._window`).
_HEAD_SHARE = 0.125
_SPANS = 10_000  # stripes whose span of ready `v` a container remembers
# A receive of a queue that sends over fewer stripes than it has (`Spread.width`) reads the others too at most
# this often per container (a sweep), and while a sweep found messages there, for this long after.
_SWEEP_MS = 5_000
_WIDE_MS = 60_000


def throttled(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") in THROTTLES


class _IndexUnavailable(Exception):
    """The ready index cannot be read: DynamoDB is still building it on an existing table (or it is not there)."""


def _index_unavailable(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    codes = ("ValidationException", "ResourceNotFoundException")  # (still backfilling; absent)
    return error.get("Code") in codes and "index" in str(error.get("Message", "")).lower()


@dataclass
class _Sweep:
    """When a container last read a queue's stripes beyond its send width, and until when it reads them all."""

    last: int
    wide_until: int = 0


@dataclass
class _Span:
    """What a container saw of the ready leases of one stripe: `v` of the oldest and of the newest, and whether
    the last read from its head left more unread (a stripe deeper than a page); read from the table, the
    priority they all had (-1: several)."""

    low: int
    high: int
    deep: bool
    priority: int = -1


@dataclass(frozen=True)
class _ReceiveScan:
    """What a receive's scan saw, for the placement work after its claims (`Placer.received`)."""

    queue_id: str
    seen: int
    scarce: bool  # fewer candidates than it looked for
    wasted: int


class DynamoMessageStore:
    def __init__(self, client: Any, table: str, placer: Placer) -> None:
        self.client = client
        self.table = table
        self.placer = placer
        self.ordered = OrderedMessages(client, table, placer)
        self.pressure = placer.growth.pressure
        self._spans: dict[str, _Span] = {}
        self._sweeps: dict[str, _Sweep] = {}
        self._index_down_until = 0.0  # (time.monotonic) the index could not be read: the table is, till then
        self._receives = threading.local()  # a receive's scan, until its claims (one thread does both)

    def _indexing(self, queue_id: str) -> bool:
        return self.placer.of(queue_id).spread.indexing

    # --- writes -------------------------------------------------------------------------------

    def new_ids(self, queue_id: str, count: int, now_ms: int, sent: bool = True) -> list[str]:
        """Ids naming stripes of the queue's send width (`Placer.new_ids`)."""
        return self.placer.new_ids(queue_id, count, now_ms, sent)

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (with BatchWriteItem); the ids of those that could not be stored."""
        queues = {m.queue_id: self._indexing(m.queue_id) for m in messages if not m.ordered}
        failed = self._put(messages, queues)
        for queue_id in queues:
            self.placer.written(queue_id)
        return failed

    def _put(self, messages: list[Message], indexing: dict[str, bool]) -> set[str]:
        requests = [
            {"PutRequest": {"Item": item}}
            for m in messages
            for item in message_items(m, not m.ordered and indexing[m.queue_id])  # (a group is read from the table)
        ]
        failed: set[str] = set()
        for start in range(0, len(requests), _BATCH_WRITE_LIMIT):
            pending = requests[start : start + _BATCH_WRITE_LIMIT]
            for attempt in range(6):
                try:
                    response = self.client.batch_write_item(RequestItems={self.table: pending})
                except ClientError as exc:
                    if not throttled(exc):
                        raise
                    response = {"UnprocessedItems": {self.table: pending}}
                pending = response.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                for queue_id in {queue_id_of(r["PutRequest"]["Item"]["pk"]["S"]) for r in pending}:
                    self.pressure.throttled(queue_id)
                time.sleep(0.02 * 2**attempt * random.random())
            failed |= {message_id_of(r["PutRequest"]["Item"]) for r in pending}
        return failed

    def _claim(self, message: Message, now_ms: int, visible_at: int) -> Message | None | bool:
        """The claimed message; None if another consumer changed the lease first; False if throttled."""
        after = message.received(now_ms, visible_at)
        try:
            response = conditional(
                self.client.update_item,
                TableName=self.table,
                Key=lease_item_key(message.ref),
                UpdateExpression=f"SET {visibility_set(self._indexing(message.queue_id))}, r = :next, d = d + :one, "
                "f = if_not_exists(f, :now)",
                ConditionExpression="r = :ver AND v <= :now AND x > :now_s",
                ExpressionAttributeValues={
                    ":vis": {"N": str(after.visible_at)},
                    ":next": {"N": str(after.version)},
                    ":one": {"N": "1"},
                    ":now": {"N": str(now_ms)},
                    ":now_s": {"N": str(now_ms // 1000)},
                    ":ver": {"N": str(message.version)},
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if not throttled(exc):
                raise
            self.pressure.throttled(message.queue_id)
            return False
        return None if response is None else message_of(response["Attributes"])

    def claim(self, message: Message, now_ms: int, visible_at: int) -> Message | None:
        """Take the lease of an Active message as observed; None if another consumer changed it first."""
        claimed = self.claim_some([message], 1, now_ms, visible_at)
        return claimed[0] if claimed else None

    def claim_some(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """Claim candidates in their order until `count` are owned. A lost claim means another consumer works
        the same page of that stripe: the rest of that stripe's candidates are left to it (the receive returns
        what it has, or reads again), so consumers that meet on one page lose about one claim, not one each. Ordered
        candidates are claimed run by run (`OrderedMessages.claim_runs`)."""
        if candidates and candidates[0].ordered:
            return self.ordered.claim_runs(candidates, count, now_ms, visible_at)
        claimed: list[Message] = []
        lost: dict[str, int] = {}
        left: set[str] = set()  # stripes (partitions) where a claim was lost
        for candidate in candidates:
            if len(claimed) >= count:
                break
            if partition_of(candidate.ref) in left or candidate.state_at(now_ms) is not MessageState.ACTIVE:
                continue
            outcome = self._claim(candidate, now_ms, visible_at)
            if isinstance(outcome, Message):
                claimed.append(outcome)
            elif outcome is None:
                lost[candidate.queue_id] = lost.get(candidate.queue_id, 0) + 1
                left.add(partition_of(candidate.ref))
        for queue_id in {m.queue_id for m in candidates}:
            won = sum(1 for m in claimed if m.queue_id == queue_id)
            self.pressure.claims(queue_id, won, lost.get(queue_id, 0))
        scan: _ReceiveScan | None = getattr(self._receives, "scan", None)
        if scan is not None:
            self._receives.scan = None
            self.placer.received(scan.queue_id, scan.seen, scan.scarce, scan.wasted, self.build_index)
        return claimed

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return [self.delete(ref, version, now_ms) for ref, version in leases]

    def delete(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        """Delete a message whose lease is still the one a receipt handle names (`Message.held_by`)."""
        if ref.group:
            return self.ordered.delete(ref, version, now_ms)
        response = conditional(
            self.client.delete_item,
            TableName=self.table,
            Key=lease_item_key(ref),
            ConditionExpression="r = :ver AND v > :now AND x > :now_s",
            ExpressionAttributeValues={
                ":ver": {"N": str(version)},
                ":now": {"N": str(now_ms)},
                ":now_s": {"N": str(now_ms // 1000)},
            },
        )
        return response is not None

    def _delete_expired(self, item: Item, now_ms: int) -> None:
        """Remove a lease whose retention is over (TTL would, later); a no-op if it is gone or not expired."""
        conditional(
            self.client.delete_item,
            TableName=self.table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            ConditionExpression="x <= :now_s",
            ExpressionAttributeValues={":now_s": {"N": str(now_ms // 1000)}},
        )

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a message whose lease is still the one a receipt handle names (`Message.retimed`)."""
        if ref.group:
            return self.ordered.change_visibility(ref, version, now_ms, visible_at)
        response = conditional(
            self.client.update_item,
            TableName=self.table,
            Key=lease_item_key(ref),
            UpdateExpression=f"SET {visibility_set(self._indexing(ref.queue_id))}, r = :next",
            ConditionExpression="r = :ver AND v > :now AND x > :now_s",
            ExpressionAttributeValues={
                ":vis": {"N": str(visible_at)},
                ":next": {"N": str(version + 1)},
                ":ver": {"N": str(version)},
                ":now": {"N": str(now_ms)},
                ":now_s": {"N": str(now_ms // 1000)},
            },
        )
        return response is not None

    # --- reads --------------------------------------------------------------------------------

    def _index_page(
        self, partition: str, condition: str, values: Item, limit: int, start: Item | None = None, forward: bool = True
    ) -> tuple[list[Item], Item | None]:
        """One page of the ready index (items in `w` order) and where the next one starts."""
        if time.monotonic() < self._index_down_until:
            raise _IndexUnavailable()
        kwargs: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
        try:
            response = self.client.query(
                TableName=self.table,
                IndexName=READY_INDEX,
                KeyConditionExpression=f"pk = :p AND {condition}",
                ExpressionAttributeValues={":p": {"S": partition}, **values},
                Limit=limit,
                ScanIndexForward=forward,
                **kwargs,
            )
        except ClientError as exc:
            if not _index_unavailable(exc):
                raise
            self._index_down_until = time.monotonic() + _INDEX_RETRY_SECONDS
            raise _IndexUnavailable() from exc
        return list(response["Items"]), response.get("LastEvaluatedKey")

    def _lease_page(
        self, partition: str, limit: int, start: Item | None = None, forward: bool = True, projection: str = ""
    ) -> tuple[list[Item], Item | None]:
        return dead_letters.lease_page(self.client, self.table, partition, limit, start, forward, projection)

    def _plain_ready(
        self, partition: str, now_ms: int, wanted: int, enough: int
    ) -> tuple[list[Message], int | None, int]:
        """Up to `wanted` Active leases of a stripe read from the table in queue order, every lease on the way
        included (an expired one it deletes): from its head, or on a stripe deeper than a page mostly from a random
        point of the ready leases seen there (`_window`, as from the index); when the next one it read becomes
        receivable; how many it read and could not take."""
        span = self._spans.get(partition)
        below = self._window(partition, now_ms) if span is not None and span.priority >= 0 else None
        if span is not None and below is not None:
            first = f"{LEASE}{span.priority:02d}{min(below, now_ms):013d}"
            ready, later, wasted, more = self._read_plain(partition, now_ms, wanted, first)
            if more or len(ready) >= enough:
                self._saw_plain(partition, ready, None)
                return ready, later, wasted
        ready, later, wasted, more = self._read_plain(partition, now_ms, wanted, "")
        self._saw_plain(partition, ready, more)
        return ready, later, wasted

    def _saw_plain(self, partition: str, ready: list[Message], deep: bool | None) -> None:
        """`_saw` for a read from the table: the span kept only while what it read has one priority."""
        head = min((m.visible_at for m in ready), default=None) if deep is not None else None
        self._saw(partition, ready, head, deep)
        span = self._spans.get(partition)
        if span is not None:
            priorities = {m.priority for m in ready}
            span.priority = priorities.pop() if len(priorities) == 1 else -1

    def _read_plain(
        self, partition: str, now_ms: int, wanted: int, first: str
    ) -> tuple[list[Message], int | None, int, bool]:
        ready: list[Message] = []
        next_visible: int | None = None
        wasted = 0
        more = False
        pages = dead_letters.lease_pages(self.client, self.table, [partition], None, max(1, wanted), first)
        for items, unread in pages:
            more = unread
            for item in items:
                state = state_of(item, now_ms)
                if state is MessageState.ACTIVE:
                    ready.append(message_of(item))
                    continue
                wasted += 1
                if state is MessageState.EXPIRED and not is_kept(item):
                    self._delete_expired(item, now_ms)
                elif state is not MessageState.EXPIRED:
                    visible_at = int(item["v"]["N"])
                    next_visible = visible_at if next_visible is None else min(next_visible, visible_at)
            if len(ready) >= wanted:
                break
        return ready[:wanted], next_visible, wasted, more

    def _ready_in(self, partition: str, now_ms: int, wanted: int, enough: int) -> list[Message]:
        """Up to `wanted` Active leases of one stripe: at its head, or (`_window`) older than a random point of
        the span of `v` this container saw there; expired ones met on the way are deleted."""
        below = self._window(partition, now_ms)
        if below is not None:
            ready, _, more = self._read_ready(partition, now_ms, wanted, below)
            if more or len(ready) >= enough:  # (else it met the head with too few: the head has more)
                self._saw(partition, ready, None, None)
                return ready
        ready, head, more = self._read_ready(partition, now_ms, wanted, None)
        self._saw(partition, ready, head, more)
        return ready

    def _read_ready(
        self, partition: str, now_ms: int, wanted: int, below: int | None
    ) -> tuple[list[Message], int | None, bool]:
        """Active leases from the head (`below` None) or downwards from `v <= below`; the oldest `v` read (from
        the head: the stripe's head) and whether more were left unread."""
        ready: list[Message] = []
        start = None
        oldest: int | None = None
        bound = now_ms if below is None else min(below, now_ms)
        for _ in range(_EXPIRED_PAGES):
            items, start = self._index_page(
                partition, "w <= :now", {":now": {"N": str(bound)}}, wanted, start, forward=below is None
            )
            expired = 0
            for item in items:
                v = int(item[INDEX_KEY]["N"])
                oldest = v if oldest is None else min(oldest, v)
                if state_of(item, now_ms) is MessageState.ACTIVE:
                    ready.append(candidate_of(item))
                else:
                    self._delete_expired(item, now_ms)
                    expired += 1
            if not expired or start is None or len(ready) >= wanted:
                break
        return ready, oldest, start is not None

    def _window(self, partition: str, now_ms: int) -> int | None:
        """Where this receive reads a stripe from: None for its head; else a point of the span of ready `v` seen
        there, the newest (`now`) in `_HEAD_SHARE` of the reads. Consumers of a stripe deeper than a page then
        read different pages instead of all racing for the same head, and the head is still read often."""
        span = self._spans.get(partition)
        if span is None or not span.deep:
            return None
        draw = random.random()
        if draw < _HEAD_SHARE:
            return None
        if draw < 2 * _HEAD_SHARE:
            return now_ms
        return random.randint(span.low, max(span.low, span.high))

    def _saw(self, partition: str, ready: list[Message], head: int | None, deep: bool | None) -> None:
        """Remember the span of ready `v` read in a stripe (`head`: its oldest, when the read reached it; `deep`:
        whether a read from the head left more unread, None if the read did not start there)."""
        if not ready:
            self._spans.pop(partition, None)
            return
        newest = max(m.visible_at for m in ready)
        span = self._spans.get(partition)
        if span is None:
            if len(self._spans) >= _SPANS:
                self._spans.clear()
            span = self._spans[partition] = _Span(newest if head is None else head, newest, bool(deep))
        if head is not None:  # (a hint only: a read from a point below the head falls back to the head)
            span.low = head
        if deep is not None:
            span.deep = deep
        span.high = max(span.high, newest)

    def _next_visible(self, partition: str, now_ms: int) -> int | None:
        try:
            items, _ = self._index_page(partition, "w > :now", {":now": {"N": str(now_ms)}}, 1)
        except _IndexUnavailable:
            return None
        return int(items[0][INDEX_KEY]["N"]) if items else None

    def scan_ready(self, queue_id: str, now_ms: int, wanted: int, enough: int = 0, ordered: bool = False) -> ReadyScan:
        """Up to `wanted` Active, unexpired messages (from the index, their leases only: `load_bodies` reads the
        rest), by priority then position among those read, from stripes taken in turn from a random one until
        `enough` are found; when none, when the next one becomes receivable. A receive's scan (`enough` given)
        reads the stripes of the send width a minute ago (`Placement.read_spread`) besides its sweeps, a page
        `CONTENDED_SPREAD` times wider while this container's receives of the queue lose many claims, and leaves
        what it saw for the placement work after the receive's claims (`claim_some`); others read every stripe."""
        if ordered:
            return self.ordered.scan(queue_id, now_ms, wanted, enough)
        placement = self.placer.of(queue_id)
        if not enough:
            return self._scan(queue_id, now_ms, wanted, placement.spread, wanted)
        page = wanted * CONTENDED_SPREAD if self.placer.growth.contended(queue_id) else wanted
        scan = self._scan(queue_id, now_ms, page, placement.read_spread(now_ms), enough)
        seen = len(scan.messages)
        self._receives.scan = _ReceiveScan(queue_id, seen, seen < wanted, scan.wasted)
        return scan

    def _scan(self, queue_id: str, now_ms: int, wanted: int, spread: Spread, enough: int) -> ReadyScan:
        ready: list[Message] = []
        wasted = 0
        next_visible: int | None = None
        order, sweep = self._order(queue_id, spread, now_ms)
        for stripe in order:
            partition = stripe_partition(queue_id, stripe)
            want, enough_here = wanted - len(ready), (enough or wanted) - len(ready)
            try:
                if not spread.reads_index(stripe):
                    raise _IndexUnavailable()
                ready += self._ready_in(partition, now_ms, want, enough_here)
            except _IndexUnavailable:
                found, later, waste = self._plain_ready(partition, now_ms, want, enough_here)
                ready += found
                wasted += waste
                if later is not None:
                    next_visible = later if next_visible is None else min(later, next_visible)
            if len(ready) >= (enough or wanted):
                break
        if ready:
            next_visible = None
        else:  # (a wake-up in an indexed stripe not looked at is seen by the next poll)
            indexed = [stripe_partition(queue_id, s) for s in order if spread.reads_index(s)]
            times = [t for t in (self._next_visible(p, now_ms) for p in indexed[:_NEXT_VISIBLE_STRIPES]) if t]
            next_visible = min([*times, *([next_visible] if next_visible else [])], default=None)
        if sweep:
            self._swept(queue_id, now_ms, any(stripe_of(m.message_id) >= spread.width for m in ready))
        ready.sort(key=lambda m: (m.priority, m.position))
        return ReadyScan(ready, next_visible, wasted)

    def _order(self, queue_id: str, spread: Spread, now_ms: int) -> tuple[list[int], bool]:
        """The stripes a receive reads, in turn, and whether it sweeps those beyond the send width: every stripe
        from a random one; or, when the queue sends over fewer (`Spread.width`), those from a random one of them,
        after the others in a sweep (due every `_SWEEP_MS`, and at each receive while sweeps find messages there:
        the others first, so a sweep that finds none there has read them all)."""

        def turn(low: int, high: int) -> list[int]:
            first = random.randrange(high - low)
            return [low + (first + i) % (high - low) for i in range(high - low)]

        width = spread.width or spread.stripes
        if width >= spread.stripes:
            return turn(0, spread.stripes), False
        sweep = self._sweeps.get(queue_id)
        if sweep is None or now_ms < sweep.wide_until or now_ms - sweep.last >= _SWEEP_MS:
            return turn(width, spread.stripes) + turn(0, width), True
        return turn(0, width), False

    def _swept(self, queue_id: str, now_ms: int, found_beyond: bool) -> None:
        if len(self._sweeps) >= _SPANS and queue_id not in self._sweeps:
            self._sweeps.clear()
        self._sweeps[queue_id] = _Sweep(now_ms, now_ms + _WIDE_MS if found_beyond else 0)

    def _get_many(self, keys: list[Item]) -> dict[tuple[str, str], Item]:
        """Items by (pk, sk), read with BatchGetItem (100 keys a call)."""
        found: dict[tuple[str, str], Item] = {}
        for start in range(0, len(keys), _BATCH_GET_LIMIT):
            pending = keys[start : start + _BATCH_GET_LIMIT]
            while pending:
                response = self.client.batch_get_item(RequestItems={self.table: {"Keys": pending}})
                for item in response.get("Responses", {}).get(self.table, []):
                    found[(item["pk"]["S"], item["sk"]["S"])] = item
                pending = response.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", [])
        return found

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        return self.ordered.sequence(queue_id, group, count, now_ms)

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        return self.ordered.held_groups(queue_id, now_ms, limit)

    def load_bodies(self, messages: list[Message]) -> None:
        """Complete what `scan_ready` (leases as the index holds them) or `claim` (bodies out of line) left out."""
        partial = [m for m in messages if m.body_md5 == ""]
        leases = self._get_many([lease_item_key(m.ref) for m in partial])
        for message in partial:
            item = leases.get((partition_of(message.ref), lease_key(message.ref)))
            if item is not None:  # deleted since it was read: left as it was seen
                message.__dict__.update(message_of(item).__dict__)
        missing = [m for m in messages if m.body is None and m.body_md5 != ""]
        bodies = self._get_many([{"pk": {"S": partition_of(m.ref)}, "sk": {"S": BODY + m.message_id}} for m in missing])
        for message in missing:
            item = bodies.get((partition_of(message.ref), BODY + message.message_id))
            if item is not None:
                message.body = body_of(item)

    def _count_range(self, partition: str, later: bool, now_ms: int, limit: int) -> _Sample:
        """The states of the leases of one indexed stripe before (`w <= now`) or after `now`: exact when the
        range holds at most `2 x limit` leases; else estimated from its first and last `limit` (`_tally`)."""
        condition = "w > :now" if later else "w <= :now"
        values = {":now": {"N": str(now_ms)}}
        head, more = self._index_page(partition, condition, values, limit)
        tail = [] if more is None else self._index_page(partition, condition, values, limit, forward=False)[0]
        return _Sample(_tally(head, tail, now_ms, lambda item: int(item[INDEX_KEY]["N"])), _oldest(head + tail, now_ms))

    def _plain_count(self, partition: str, now_ms: int, limit: int) -> _Sample:
        """The states of the leases of a stripe read from the table: exact up to `2 x limit` leases; else estimated
        from its first and last `limit` in queue order (`_tally`): how many between by the density of their send
        times (the first in queue order were mostly sent first, the last last, whatever their delays and
        priorities), in the proportions of the states read."""
        head, more = self._lease_page(partition, limit)
        tail = [] if more is None else self._lease_page(partition, limit, forward=False)[0]
        return _Sample(_tally(head, tail, now_ms, lambda item: int(item["e"]["N"])), _oldest(head + tail, now_ms))

    def counts(self, queue_id: str, now_ms: int, ordered: bool = False) -> QueueCounts:
        """Active / Inactive / Delayed messages: exact up to `2 x COUNT_ITEMS` leases per state range (Active
        ones; the others) and stripe count, estimated beyond; bounded whatever the queue's size: at most
        `4 x max(COUNT_ITEMS, stripes x MIN_COUNT_ITEMS)` small index items read in `4 x stripes` Queries, and
        for each stripe the index does not cover `2 x PLAIN_COUNT_ITEMS` leases in 2 Queries."""
        return self.backlog(queue_id, now_ms, ordered).counts

    def backlog(self, queue_id: str, now_ms: int, ordered: bool = False) -> Backlog:
        """The counts (`counts`), and the oldest enqueue time among the Active and Inactive leases they read: exact
        where they are, else of the leases read (a range's first page in `w` order holds its longest receivable)."""
        samples: list[_Sample] = []

        def plain(partition: str, now: int) -> dict[MessageState, float]:
            samples.append(self._plain_count(partition, now, PLAIN_COUNT_ITEMS))
            return samples[-1].states

        if ordered:
            counts = self.ordered.counts(queue_id, now_ms, plain)
            return Backlog(counts, min((s.oldest for s in samples if s.oldest is not None), default=None))
        spread = self.placer.of(queue_id).spread
        limit = max(MIN_COUNT_ITEMS, COUNT_ITEMS // spread.stripes)
        for stripe in range(spread.stripes):
            partition = stripe_partition(queue_id, stripe)
            try:
                if not spread.reads_index(stripe):
                    raise _IndexUnavailable()
                samples += [self._count_range(partition, later, now_ms, limit) for later in (False, True)]
            except _IndexUnavailable:
                plain(partition, now_ms)
        found = dict.fromkeys(MessageState, 0.0)
        for sample in samples:
            for state, n in sample.states.items():
                found[state] += n
        active, inactive, delayed = (
            round(found[s]) for s in (MessageState.ACTIVE, MessageState.INACTIVE, MessageState.DELAYED)
        )
        oldest = min((s.oldest for s in samples if s.oldest is not None), default=None)
        return Backlog(QueueCounts(active, inactive, delayed), oldest)

    # --- dead letters and rewind (`dead_letters`) -----------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        indexed = not target.ordered and self._indexing(target.queue_id)
        also = self.ordered.moved_out(source) if source.ordered else []
        return dead_letters.move(self.client, self.table, source, now_ms, target, indexed, also)

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        if leases and leases[0][0].group:
            return [self.ordered.delete_keeping(ref, version, now_ms) for ref, version in leases]
        return dead_letters.delete_keeping(self.client, self.table, leases, now_ms)

    def rewind(self, queue_id: str, since_ms: int, now_ms: int, ordered: bool = False) -> int:
        if ordered:
            return self.ordered.rewind(queue_id, since_ms, now_ms)
        spread = self.placer.of(queue_id).spread
        partitions = _partitions(queue_id, spread.stripes)
        return dead_letters.rewind(self.client, self.table, partitions, since_ms, now_ms, spread.indexing)

    def drop_kept(self, queue_id: str, now_ms: int, ordered: bool = False) -> int:
        if ordered:
            return self.ordered.drop_kept(queue_id)
        return dead_letters.drop_kept(self.client, self.table, _partitions(queue_id, self.placer.of(queue_id).stripes))

    # --- receivers (`enqueued`) ---------------------------------------------------------------

    def enqueued_since(
        self, queue_id: str, since_ms: int, until_ms: int, now_ms: int, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        stripes = self.placer.of(queue_id).stripes
        found, cursor = enqueued.enqueued_since(
            self.client, self.table, queue_id, stripes, (since_ms, until_ms, now_ms), after, limit
        )
        self.load_bodies(found)
        return [m for m in found if m.body is not None], cursor  # (a body gone since: its message was deleted)

    # --- the ready index ---------------------------------------------------------------------

    def build_index(self, queue_id: str, spread: Spread, cursor: str, now_ms: int, budget: int) -> str | None:
        """Give `w = v` to the leases that lack it (or whose `w` a container still writing without the index left
        behind), stripe by stripe in queue order: up to `budget` leases read from `cursor` (`{stripe}|{sort key}`)
        on, one conditional UpdateItem each that needs it. Done (None) once every stripe is and the index answers.
        """
        number, _, after = cursor.partition("|")
        stripe = int(number or 0)
        while stripe < spread.stripes and budget > 0:
            partition = stripe_partition(queue_id, stripe)
            start = {"pk": {"S": partition}, "sk": {"S": after}} if after else None
            items, more = self._lease_page(partition, budget, start, projection="pk, sk, v, w")
            for item in items:
                if "v" in item and item.get(INDEX_KEY) != item["v"]:
                    conditional(
                        self.client.update_item,
                        TableName=self.table,
                        Key={"pk": item["pk"], "sk": item["sk"]},
                        UpdateExpression="SET w = v",
                        ConditionExpression="attribute_exists(v)",
                    )
            budget -= max(1, len(items))
            stripe, after = (stripe, more["sk"]["S"]) if more else (stripe + 1, "")
        if stripe < spread.stripes:
            return f"{stripe}|{after}"
        try:
            self._index_page(queue_id, "w <= :now", {":now": {"N": str(now_ms)}}, 1)
        except _IndexUnavailable:
            return f"{stripe}|"
        return None


@dataclass(frozen=True)
class _Sample:
    """What a count read of a range of leases: their states (estimated beyond what it read), and the oldest enqueue
    time of the Active and Inactive ones it read."""

    states: dict[MessageState, float]
    oldest: int | None


def _oldest(items: list[Item], now_ms: int) -> int | None:
    """The oldest enqueue time of the Active and Inactive leases among `items` (`layout.enqueued_at`)."""
    times = [
        enqueued_at(item) for item in items if state_of(item, now_ms) in (MessageState.ACTIVE, MessageState.INACTIVE)
    ]
    return min((t for t in times if t is not None), default=None)


def _tally(head: list[Item], tail: list[Item], now_ms: int, key: Callable[[Item], int]) -> dict[MessageState, float]:
    """The states of the leases of a range read as its first page (`head`) and, when more followed, its last
    (`tail`, in reverse): exact when the pages meet; else the leases between are estimated from the density of
    `key` in both pages (`_between`), in the proportions of the states read."""
    found = dict.fromkeys(MessageState, 0.0)
    seen = {item["sk"]["S"] for item in head}
    tail = [item for item in tail if item["sk"]["S"] not in seen]
    for item in head + tail:
        found[state_of(item, now_ms)] += 1
    if not tail:
        return found
    unread = _between(sorted(key(i) for i in head), sorted(key(i) for i in tail))
    read = len(head) + len(tail)
    return {state: n * (1 + unread / read) for state, n in found.items()}


def _between(head: list[int], tail: list[int]) -> float:
    """The leases not read between a range's first page (`v` of its leases, ascending) and its last, estimated
    from the density of both pages. Leases may share a `v` (a batch sent in one millisecond), and a page may end
    inside such a group: each page's density counts only the leases strictly inside its span, and the closed
    span between the pages holds one group more than its length times the density (the average group size)."""
    low, high = head[-1], tail[0]
    if high <= low:  # the two pages meet: nothing between
        return 0.0
    inside = sum(1 for v in head if v < low) + sum(1 for v in tail if v > high)
    span = (low - head[0]) + (tail[-1] - high)
    if span <= 0:  # each page holds one time only: no density to go by
        return 0.0
    density = inside / span
    group = (len(head) + len(tail)) / (len(set(head)) + len(set(tail)))
    read_at_ends = sum(1 for v in head if v == low) + sum(1 for v in tail if v == high)
    return max(0.0, density * (high - low) + group - read_at_ends)


def _partitions(queue_id: str, stripes: int) -> list[str]:
    return [stripe_partition(queue_id, stripe) for stripe in range(stripes)]
