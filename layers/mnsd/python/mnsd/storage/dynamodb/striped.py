"""Standard queues' messages on the DynamoDB message table: one small lease item per message, the body inline when it
fits in 1 KB (the layout is `mnsd.storage.dynamodb.layout`).

A queue's messages spread over its stripes (partitions): a send writes each message to the stripe its id names; a
receive reads stripes in turn (`stripe_reads`: how, and the container's hints that steer it, `stripe_spans`). Where
they go and how a stripe is read follow the queue's `placement.Spread`, which the store keeps itself
(`placer.Placer`: growth with the load it sees, the ready index turned on and built, `ready_index`). A receive's
scan binds, into the `ReadyScan` it returns, the placement work its claims are followed by (`_ReceiveClaims`).

A claim is a conditional UpdateItem of the lease (`version` as observed, visible and unexpired), so two consumers
can never own one message; the index is eventually consistent on AWS, and a stale candidate just fails its claim.
A consumer that loses a claim leaves the rest of that page of its stripe to the winner. Nothing ever rewrites a
body: DynamoDB bills UpdateItem by the whole item, so only the small lease changes and TTL (`x`, free) removes what
retention ends. Deleting a message deletes its lease; an out-of-line body is left to TTL. Counts read a bounded
sample per stripe (`stripe_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from mnsd.model.messages import Message, MessageRef, MessageState
from mnsd.model.ports import Claim, ReadyScan, candidates
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.dynamodb import dead_letters, enqueued
from mnsd.storage.dynamodb.conditions import conditional
from mnsd.storage.dynamodb.layout import (
    held_lease,
    lease_item_key,
    message_items,
    message_of,
    partition_of,
    stripe_partition,
    visibility_set,
)
from mnsd.storage.dynamodb.message_table import MessageTable, throttled
from mnsd.storage.dynamodb.placer import IndexBuilder, Placer
from mnsd.storage.dynamodb.ready_index import ReadyIndex
from mnsd.storage.dynamodb.stripe_counts import StripeCounts
from mnsd.storage.dynamodb.stripe_reads import StripeReads
from mnsd.storage.dynamodb.stripes import CONTENDED_SPREAD


class StripedMessageStore:
    """`mnsd.model.ports.MessageStore` for standard queues (and their receivers)."""

    def __init__(self, client: Any, table: str, placer: Placer) -> None:
        self.items = MessageTable(client, table)
        self.placer = placer
        self.pressure = placer.growth.pressure
        self.index = ReadyIndex(self.items)
        self.reads = StripeReads(self.items, self.index)
        self.tallies = StripeCounts(self.items, self.index)

    @property
    def client(self) -> Any:
        return self.items.client

    @client.setter
    def client(self, client: Any) -> None:  # (a test or benchmark counting calls swaps it for every part)
        self.items.client = client

    @property
    def table(self) -> str:
        return self.items.name

    def _indexing(self, queue_id: str) -> bool:
        return self.placer.of(queue_id).spread.indexing

    # --- writes -------------------------------------------------------------------------------

    def new_ids(self, queue_id: str, count: int, now_ms: int) -> list[str]:
        """Ids naming stripes of the queue's send width (`Placer.new_ids`)."""
        return self.placer.new_ids(queue_id, count, now_ms)

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (with BatchWriteItem); the ids of those that could not be stored."""
        indexing = {m.queue_id: self._indexing(m.queue_id) for m in messages}
        items = [item for m in messages for item in message_items(m, indexing[m.queue_id])]
        failed = self.items.put(items, self.pressure.throttled)
        for queue_id in indexing:
            self.placer.written(queue_id)
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

    def _claim_some(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """Claim candidates in their order until `count` are owned. A lost claim means another consumer works
        the same page of that stripe: the rest of that stripe's candidates are left to it (the receive returns
        what it has, or reads again), so consumers that meet on one page lose about one claim, not one each."""
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
        return claimed

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """Delete each message whose lease is still the one a receipt handle names (`Message.held_by`)."""
        deletes = (held_lease(self.table, ref, version, now_ms) for ref, version in leases)
        return [conditional(self.client.delete_item, **delete) is not None for delete in deletes]

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a message whose lease is still the one a receipt handle names (`Message.retimed`)."""
        request = held_lease(self.table, ref, version, now_ms)
        request["UpdateExpression"] = f"SET {visibility_set(self._indexing(ref.queue_id))}, r = :next"
        request["ExpressionAttributeValues"].update({":vis": {"N": str(visible_at)}, ":next": {"N": str(version + 1)}})
        response = conditional(self.client.update_item, **request)
        return response is not None

    # --- reads --------------------------------------------------------------------------------

    def scan_ready(self, queue_id: str, now_ms: int, count: int) -> ReadyScan:
        """A receive's `candidates(count)` Active, unexpired messages (from the index, their leases only: `load_bodies`
        reads the rest), by priority then position among those read (`StripeReads.scan`): the stripes of the send
        width a minute ago (`Placement.read_spread`) besides its sweeps, until it has `count`, a page
        `CONTENDED_SPREAD` times wider while this container's receives of the queue lose many claims; its claim
        followed by the placement work the receive leaves (`_ReceiveClaims`)."""
        wanted = candidates(count)
        placement = self.placer.of(queue_id)
        page = wanted * CONTENDED_SPREAD if self.placer.growth.contended(queue_id) else wanted
        found = self.reads.scan(queue_id, now_ms, page, placement.read_spread(now_ms), count)
        seen = len(found.messages)
        scan = _ReceiveScan(queue_id, seen, seen < wanted, found.wasted)
        claims = _ReceiveClaims(self._claim_some, self.placer, self.index.build, scan)
        return ReadyScan(found.messages, found.next_visible_at, claimer=claims)

    def peek_ready(self, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        """Up to `wanted` Active, unexpired messages from every stripe (their leases only)."""
        return self.reads.scan(queue_id, now_ms, wanted, self.placer.of(queue_id).spread, wanted).messages

    def load_bodies(self, messages: list[Message]) -> None:
        """Complete what `scan_ready` (leases as the index holds them) or `claim` (bodies out of line) left out."""
        self.items.load_bodies(messages)

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        """Active / Inactive / Delayed messages, from a bounded sample per stripe (`StripeCounts.backlog`)."""
        return self.backlog(queue_id, now_ms).counts

    def backlog(self, queue_id: str, now_ms: int) -> Backlog:
        return self.tallies.backlog(queue_id, now_ms, self.placer.of(queue_id).spread)

    # --- dead letters and rewind (`dead_letters`) -----------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        indexed = self.placer.indexed(target)
        return dead_letters.move(self.client, self.table, source, now_ms, target, indexed)

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return dead_letters.delete_keeping(self.client, self.table, leases, now_ms)

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        spread = self.placer.of(queue_id).spread
        partitions = _partitions(queue_id, spread.stripes)
        return dead_letters.rewind(self.client, self.table, partitions, since_ms, now_ms, spread.indexing)

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
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


class _ReceiveClaims:
    """A receive's claim of what its scan found, and then the placement work the receive leaves
    (`Placer.received`: growth, the ready index turned on or built a step), done once, after the first claim."""

    def __init__(self, claim: Claim, placer: Placer, build: IndexBuilder, scan: _ReceiveScan) -> None:
        self.claim = claim
        self.placer = placer
        self.build = build
        self.scan: _ReceiveScan | None = scan

    def __call__(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        claimed = self.claim(candidates, count, now_ms, visible_at)
        scan, self.scan = self.scan, None
        if scan is not None:
            self.placer.received(scan.queue_id, scan.seen, scan.scarce, scan.wasted, self.build)
        return claimed


@dataclass(frozen=True)
class _ReceiveScan:
    """What a receive's scan saw, for the placement work after its claims (`Placer.received`)."""

    queue_id: str
    seen: int
    scarce: bool  # fewer candidates than it looked for
    wasted: int


def _partitions(queue_id: str, stripes: int) -> list[str]:
    return [stripe_partition(queue_id, stripe) for stripe in range(stripes)]
