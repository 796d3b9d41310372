"""Ordered messages (a FIFO queue's) on the DynamoDB message table: each group's order kept by one small item.

A group's leases are the leases of any message (`layout.message_items`), in a partition of their own,
`{queue_id}#G{group}` (`layout.partition_of`): sorted by their key, so in position order, and read from the head
with a strongly consistent Query (order costs no read across partitions). A group's state is its *group item*,
`G{group}` in one of the queue's `ORDERED_STRIPES` directory partitions `{queue_id}#D{n}`, chosen by a hash of
the group (`group_item_key`):

    n  the last position given (`sequence`; a group made anew numbers from its time of creation on, in ms, so
       above every message of a former one, which has expired, been deleted or been sent over 1,000 a second)
    q  messages stored: a send adds (at `sequence`), a delete, a dead-letter move and a delete kept for rewind
       subtract, a rewind adds back. A group item whose `q` is 0 and that holds nothing is deleted by the scan
       that meets it, so the directory holds the groups that have messages (and those TTL has not ended yet).
    o, h  the run in flight: how many of its messages are not deleted yet, and until when it holds the group (the
       latest visibility of any of them). The group is *held* while `o > 0` and `h > now`.
    k  messages deleted and kept for rewind (a delete kept adds, a rewind and turning rewind off subtract): a group
       item with kept messages is not deleted, so a rewind finds them.
    c  bumped by a rewind, which also holds the group while it works (`p`, until when): a claim is conditioned on
       the `c` its scan read, so a run built before a rewind brought earlier messages back is refused.
    x  its TTL: the longest retention after its last send.

Every write that changes what a group holds is one TransactWriteItems with its group item: a claim (the group
item not held and `c` as read, each lease of the run as observed and Active; the group item then holds the run),
a delete (`o` and `q` less), a visibility change that goes past `h` (`h` raised with it; one that shortens a
visibility leaves `h`, so the group stays held until then), a dead-letter move, a delete kept for rewind. The
head condition (no message before the run's first) is the scan's: the run starts at the first lease the scan
read that is not deleted, kept or expired (a consistent read, after the group item); the claim refuses a run
that does not start there.

A receive reads the directory partitions in turn from a random one, each from a random group on (and wraps),
skipping held groups, until it has enough runs; a busy queue's groups all write to `ORDERED_STRIPES` partitions
(about 5 write units of group items per message received alone: see `bench/results/capacity.md`).
"""

from __future__ import annotations

import functools
import random
import string
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from mnsd.queues import fifo
from mnsd.queues.model import Message, MessageRef, MessageState, QueueCounts
from mnsd.storage import ReadyScan
from mnsd.storage.dynamodb import dead_letters
from mnsd.storage.dynamodb.conditions import THROTTLES, conditional
from mnsd.storage.dynamodb.layout import (
    KEEP_UPDATE,
    KEEP_VALUES,
    LEASE,
    Item,
    group_partition,
    is_kept,
    lease_item_key,
    message_of,
    number,
    state_of,
)

ORDERED_STRIPES = 8  # directory partitions of a FIFO queue's group items
GROUP = "G"
_DIRECTORY_PAGE = 100  # group items a receive reads per Query
_DIRECTORY_PAGES = ORDERED_STRIPES + 8  # Queries of group items one receive makes at most
_RUN_SLACK = 4  # leases read past a run's wanted length (deleted-but-kept, expired ones on the way)
_HEAD_PAGES = 4  # pages of kept or expired leases a receive reads through at a group's head before giving up
_ATTEMPTS = 4  # of a delete's or a visibility change's transaction that meets a conflicting write or throttling
_COUNT_GROUPS = 64  # groups whose leases a count reads one by one; the others are counted from their group item
_REWIND_HOLD_MS = 60_000  # how long a rewind holds a group at most (should it stop half way)
_START_CHARACTERS = string.printable[:94]  # where a shuffled read of a directory partition may start (`G` + one)


def directory_partition(queue_id: str, group: str) -> str:
    return f"{queue_id}#D{zlib.crc32(group.encode()) % ORDERED_STRIPES}"


def group_item_key(queue_id: str, group: str) -> Item:
    return {"pk": {"S": directory_partition(queue_id, group)}, "sk": {"S": GROUP + group}}


def _directories(queue_id: str) -> list[str]:
    return [f"{queue_id}#D{n}" for n in range(ORDERED_STRIPES)]


_Heads = Mapping[tuple[str, str], "_Head"]  # what a scan saw of each group, by (queue_id, group)
_CountPlain = Callable[[str, int], dict[MessageState, float]]  # a partition's leases by state (read from the table)


@dataclass(frozen=True)
class _Group:
    """A group item as read: its group, and its state."""

    queue_id: str
    name: str
    stored: int  # q
    out: int  # o
    held_until: int  # h
    changes: int  # c
    paused_until: int  # p
    kept: int  # k

    @classmethod
    def of(cls, item: Item) -> _Group:
        queue_id = item["pk"]["S"].rsplit("#D", 1)[0]
        q, o, h, c, p, k = (number(item, name) or 0 for name in "qohcpk")
        return cls(queue_id, item["sk"]["S"][1:], q, o, h, c, p, k)

    def held(self, now_ms: int) -> bool:
        return (self.out > 0 and self.held_until > now_ms) or self.paused_until > now_ms

    @property
    def partition(self) -> str:
        return group_partition(self.queue_id, self.name)


@dataclass(frozen=True)
class _Head:
    """What a scan saw of a group: its rewind count then and the position of its first message."""

    changes: int
    position: int


def _values(**values: int) -> Item:
    return {f":{name}": {"N": str(value)} for name, value in values.items()}


def _refusal(exc: ClientError) -> str:
    """Why a transaction failed: "condition" (one did not hold), "busy" (a conflicting write or throttling: worth
    trying again), "" (anything else)."""
    error = exc.response.get("Error", {}).get("Code")
    reasons = {reason.get("Code") for reason in exc.response.get("CancellationReasons", [])}
    if error == "TransactionCanceledException" and ("ConditionalCheckFailed" in reasons or not reasons):
        return "condition"
    if error in ("TransactionCanceledException", "TransactionConflictException", *THROTTLES):
        return "busy"
    return ""


class OrderedMessages:
    """The ordered part of the FIFO store (`fifo.DynamoFifoMessages`) (see the module's docstring)."""

    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        self._deep: set[str] = set()  # directory partitions that held more than a page when last read

    # --- writes ----------------------------------------------------------------------------------

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        """`n` is the last position given: a group made anew starts from just before `fifo.first_position`; its
        item's TTL is `fifo.group_expires_at` its last send."""
        before = fifo.first_position(now_ms) - 1
        expires_at = fifo.group_expires_at(now_ms) // 1000
        response = self.client.update_item(
            TableName=self.table,
            Key=group_item_key(queue_id, group),
            UpdateExpression="SET n = if_not_exists(n, :before) + :count, q = if_not_exists(q, :zero) + :count, "
            "o = if_not_exists(o, :zero), c = if_not_exists(c, :zero), x = :x",
            ExpressionAttributeValues=_values(before=before, count=count, zero=0, x=expires_at),
            ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["n"]["N"]) - count + 1

    def _transact(self, items: list[Item], patient: bool = True) -> bool:
        """One TransactWriteItems; False when a condition did not hold. A conflicting write or throttling: tried
        again (`patient`: a few times, then raised, as any write's throttling is; else given up as refused)."""
        for attempt in range(_ATTEMPTS):
            try:
                self.client.transact_write_items(TransactItems=items)
                return True
            except ClientError as exc:
                refusal = _refusal(exc)
                if refusal == "condition" or (refusal == "busy" and not patient):
                    return False
                if refusal != "busy" or attempt == _ATTEMPTS - 1:
                    raise
            time.sleep(0.02 * 2**attempt * random.random())
        return False

    def _group_request(self, queue_id: str, group: str, update: str, values: Item, condition: str = "") -> Item:
        """An UpdateItem request of a group item (alone, or a transaction's `Update`)."""
        request: Item = {
            "TableName": self.table,
            "Key": group_item_key(queue_id, group),
            "UpdateExpression": update,
            "ExpressionAttributeValues": values,
        }
        if condition:
            request["ConditionExpression"] = condition
        return request

    def _group_update(self, ref: MessageRef, update: str, values: Item, condition: str = "") -> Item:
        """A transaction's update of the group item of a message."""
        return {"Update": self._group_request(ref.queue_id, ref.group, update, values, condition)}

    def _release(self, ref: MessageRef, kept: bool = False) -> Item:
        """The group item's part of a delete: one message fewer stored, one fewer of the run in flight (and, when
        the message is `kept` for rewind, one more kept)."""
        update = "SET o = if_not_exists(o, :zero) - :one, q = if_not_exists(q, :zero) - :one"
        return self._group_update(
            ref, update + (", k = if_not_exists(k, :zero) + :one" if kept else ""), _values(zero=0, one=1)
        )

    def _held_lease(self, ref: MessageRef, version: int, now_ms: int) -> Item:
        """A write's key and condition on a lease still held by the receipt handle that names `version`."""
        return {
            "TableName": self.table,
            "Key": lease_item_key(ref),
            "ConditionExpression": "r = :ver AND v > :now AND x > :now_s",
            "ExpressionAttributeValues": _values(ver=version, now=now_ms, now_s=now_ms // 1000),
        }

    def claim_runs(
        self, candidates: list[Message], count: int, now_ms: int, visible_at: int, heads: _Heads | None = None
    ) -> list[Message]:
        """The candidates' runs claimed as `fifo.claim_runs` says, each in one transaction (`_claim_run`); `heads`:
        what the scan that offered them saw."""
        return fifo.claim_runs(candidates, count, now_ms, lambda run: self._claim_run(run, now_ms, visible_at, heads))

    def _claim_run(self, run: list[Message], now_ms: int, visible_at: int, heads: _Heads | None) -> list[Message]:
        """A claimable run (`fifo.claimable`) taken if it starts at its group's head and the group is free."""
        first = run[0]
        head = self._head(first.queue_id, first.message_group_id, now_ms, heads or {})
        if head is None or head.position != first.position:
            return []  # a message before it remains (or the group is gone)
        after = [m.received(now_ms, visible_at) for m in run]
        hold = self._group_update(
            first.ref,
            "SET o = :k, h = :vis",
            _values(k=len(run), vis=visible_at, zero=0, now=now_ms, c=head.changes),
            "(o <= :zero OR h <= :now) AND c = :c AND (attribute_not_exists(p) OR p <= :now)",
        )
        leases = [
            {
                "Update": {
                    "TableName": self.table,
                    "Key": lease_item_key(m.ref),
                    "UpdateExpression": "SET v = :vis, r = :next, d = d + :one, f = if_not_exists(f, :now)",
                    "ConditionExpression": "r = :ver AND v <= :now AND x > :now_s",
                    "ExpressionAttributeValues": _values(
                        vis=visible_at, next=m.version + 1, one=1, now=now_ms, now_s=now_ms // 1000, ver=m.version
                    ),
                }
            }
            for m in run
        ]
        return after if self._transact([hold, *leases], patient=False) else []

    def delete(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        return self._transact([{"Delete": self._held_lease(ref, version, now_ms)}, self._release(ref)])

    def delete_keeping(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        keep = self._held_lease(ref, version, now_ms)
        keep["UpdateExpression"] = KEEP_UPDATE
        keep["ExpressionAttributeValues"].update(KEEP_VALUES)
        return self._transact([{"Update": keep}, self._release(ref, kept=True)])

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a lease; past the group's hold, the hold goes with it (one transaction), else the lease alone."""
        lease = self._held_lease(ref, version, now_ms)
        lease["UpdateExpression"] = "SET v = :vis, r = :next"
        lease["ExpressionAttributeValues"].update(_values(vis=visible_at, next=version + 1))
        raise_hold = self._group_update(ref, "SET h = :vis", _values(vis=visible_at), "h < :vis")
        if self._transact([{"Update": lease}, raise_hold]):
            return True
        return conditional(self.client.update_item, **lease) is not None

    def moved_out(self, source: Message) -> list[Item]:
        """What a dead-letter move of an ordered message adds to its transaction: one message fewer in its group
        (the source is Active: its group's run is not in flight)."""
        return [self._group_update(source.ref, "SET q = if_not_exists(q, :zero) - :one", _values(zero=0, one=1))]

    # --- reads ----------------------------------------------------------------------------------

    def _directory_page(
        self, partition: str, condition: str, values: Item, after: Item | None
    ) -> tuple[list[Item], Item | None]:
        kwargs: dict[str, Any] = {"ExclusiveStartKey": after} if after else {}
        response = self.client.query(
            TableName=self.table,
            KeyConditionExpression=f"pk = :p AND {condition}",
            ExpressionAttributeValues={":p": {"S": partition}, **values},
            Limit=_DIRECTORY_PAGE,
            **kwargs,
        )
        return list(response["Items"]), response.get("LastEvaluatedKey")

    def _groups(self, queue_id: str, shuffled: bool, pages: int | None = None) -> Iterator[_Group]:
        """The queue's group items: in order; or (`shuffled`) from a random directory partition on, and in one that
        held more than a page when last read, from a random group on and then from its first group up to there.
        At most `pages` Queries (None: all)."""
        directories = _directories(queue_id)
        if shuffled:
            first = random.randrange(ORDERED_STRIPES)
            directories = directories[first:] + directories[:first]
        budget = [pages]
        for partition in directories:
            for condition, values in self._ranges(partition, shuffled):
                for item in self._directory_pages(partition, condition, values, budget):
                    if not (condition.startswith("sk BETWEEN") and item["sk"] == values[":s"]):  # (read already)
                        yield _Group.of(item)

    def _ranges(self, partition: str, shuffled: bool) -> list[tuple[str, Item]]:
        """How to read a directory partition: whole, or from a random group on, then up to it."""
        if not (shuffled and partition in self._deep):
            return [("begins_with(sk, :g)", {":g": {"S": GROUP}})]
        start = {":s": {"S": GROUP + random.choice(_START_CHARACTERS)}}
        return [("sk >= :s", start), ("sk BETWEEN :g AND :s", {":g": {"S": GROUP}, **start})]

    def _directory_pages(
        self, partition: str, condition: str, values: Item, budget: list[int | None]
    ) -> Iterator[Item]:
        """The group items of one range of a directory partition, while `budget[0]` Queries remain (None: any)."""
        after: Item | None = None
        first = True
        while budget[0] is None or budget[0] > 0:
            items, after = self._directory_page(partition, condition, values, after)
            if budget[0] is not None:
                budget[0] -= 1
            if after is not None:
                self._deep.add(partition)
            elif first and condition.startswith("begins_with"):
                self._deep.discard(partition)
            first = False
            yield from items
            if after is None:
                return

    def _leases(self, partition: str, limit: int, after: Item | None) -> tuple[list[Item], Item | None]:
        """A page of a group's leases in position order, read consistently (a claim relies on its head)."""
        kwargs: dict[str, Any] = {"ExclusiveStartKey": after} if after else {}
        response = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :p AND begins_with(sk, :lease)",
            ExpressionAttributeValues={":p": {"S": partition}, ":lease": {"S": LEASE}},
            Limit=limit,
            ConsistentRead=True,
            **kwargs,
        )
        return list(response["Items"]), response.get("LastEvaluatedKey")

    def _run(self, group: _Group, now_ms: int, wanted: int) -> fifo.HeadRun:
        """A group's run (`fifo.head_run`), its leases read from the head as far as the run goes."""
        return fifo.head_run(self._stored(group, now_ms, wanted), now_ms, wanted)

    def _stored(self, group: _Group, now_ms: int, wanted: int) -> Iterator[Message]:
        """A group's unexpired messages in position order, page by page as they are taken (at most `_HEAD_PAGES`);
        the expired leases met on the way are deleted (those kept for rewind stay)."""
        after: Item | None = None
        for _ in range(_HEAD_PAGES):
            items, after = self._leases(group.partition, wanted + _RUN_SLACK, after)
            for item in items:
                if state_of(item, now_ms) is not MessageState.EXPIRED:
                    yield message_of(item)
                elif not is_kept(item):
                    self._drop_expired(group, item, now_ms)
            if after is None:
                return

    def _drop_expired(self, group: _Group, item: Item, now_ms: int) -> None:
        """Delete a lease whose retention is over (TTL would, later), with one message fewer in its group."""
        gone = conditional(
            self.client.delete_item,
            TableName=self.table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            ConditionExpression="x <= :now_s",
            ExpressionAttributeValues=_values(now_s=now_ms // 1000),
        )
        if gone is not None:
            request = self._group_request(
                group.queue_id, group.name, "SET q = q - :one", _values(one=1), "attribute_exists(q)"
            )
            conditional(self.client.update_item, **request)

    def _forget(self, group: _Group, now_ms: int) -> None:
        """Delete a group item that stores nothing and holds nothing (a send since makes it anew)."""
        conditional(
            self.client.delete_item,
            TableName=self.table,
            Key=group_item_key(group.queue_id, group.name),
            ConditionExpression="q <= :zero AND (o <= :zero OR h <= :now) AND (attribute_not_exists(p) OR p <= :now) "
            "AND (attribute_not_exists(k) OR k <= :zero)",
            ExpressionAttributeValues=_values(zero=0, now=now_ms),
        )

    def scan(self, queue_id: str, now_ms: int, wanted: int, enough: int = 0) -> ReadyScan:
        """The runs of free groups from a random one on, until `enough` (or `wanted`) messages; claimed with the heads
        it saw (`claim_runs`)."""
        seen: dict[tuple[str, str], _Head] = {}
        found: list[Message] = []
        next_visible: int | None = None
        for group in self._groups(queue_id, shuffled=True, pages=_DIRECTORY_PAGES):
            if group.held(now_ms):
                wake: int | None = max(group.held_until, group.paused_until)
            elif group.stored <= 0:
                if group.kept <= 0:
                    self._forget(group, now_ms)
                continue
            else:
                run = self._run(group, now_ms, wanted - len(found))
                if run.head is not None:
                    seen[(queue_id, group.name)] = _Head(group.changes, run.head)
                wake = run.wakes_at
                found += run.messages
            if wake is not None:
                next_visible = wake if next_visible is None else min(next_visible, wake)
            if len(found) >= (enough or wanted):
                break
        claim = functools.partial(self.claim_runs, heads=seen)
        return ReadyScan(found, None if found else next_visible, claimer=claim)

    def _head(self, queue_id: str, group: str, now_ms: int, heads: _Heads) -> _Head | None:
        """What the scan that offered a run saw of its group; read now if it saw nothing of it."""
        if (queue_id, group) in heads:
            return heads[(queue_id, group)]
        item = self.client.get_item(TableName=self.table, Key=group_item_key(queue_id, group), ConsistentRead=True)
        if "Item" not in item:
            return None
        state = _Group.of(item["Item"])
        head = self._run(state, now_ms, 1).head
        return None if head is None else _Head(state.changes, head)

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        held = []
        for group in self._groups(queue_id, shuffled=False):
            if group.held(now_ms):
                held.append(group.name)
                if len(held) >= limit:
                    break
        return held

    def counts(self, queue_id: str, now_ms: int, count_plain: _CountPlain) -> QueueCounts:
        """Exact for the first `_COUNT_GROUPS` groups (their leases read, `count_plain`), from the group items for
        the others: a held group's run in flight, the rest of what it stores Active."""
        found = dict.fromkeys(MessageState, 0.0)
        for n, group in enumerate(self._groups(queue_id, shuffled=False)):
            if n < _COUNT_GROUPS:
                states = count_plain(group.partition, now_ms)
            else:
                out = group.out if group.held(now_ms) else 0
                states = {MessageState.INACTIVE: out, MessageState.ACTIVE: max(0, group.stored - out)}
            for state, k in states.items():
                found[state] += k
        return QueueCounts(
            *(round(found[s]) for s in (MessageState.ACTIVE, MessageState.INACTIVE, MessageState.DELAYED))
        )

    # --- rewind ---------------------------------------------------------------------------------

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        """Per group: hold it, restore its kept messages and make its in-flight ones visible (those enqueued at
        or after `since_ms`), then let it go with what is still in flight as its run and `c` bumped."""
        rewound = 0
        for group in list(self._groups(queue_id, shuffled=False)):
            hold = _values(until=now_ms + _REWIND_HOLD_MS, one=1)
            self.client.update_item(**self._group_request(queue_id, group.name, "SET p = :until, c = c + :one", hold))
            restored, revisited, out = 0, 0, 0
            pages = dead_letters.lease_pages(self.client, self.table, [group.partition], dead_letters.REWIND_PROJECTION)
            for items, _ in pages:
                for item in items:
                    outcome = dead_letters.rewind_lease(self.client, self.table, item, since_ms, now_ms, False)
                    restored += outcome == "restored"
                    revisited += outcome == "revisited"
                    out += outcome == "in flight"
            update = "SET o = :out, q = q + :restored, k = if_not_exists(k, :zero) - :restored, c = c + :one REMOVE p"
            values = _values(out=out, restored=restored, one=1, zero=0)
            self.client.update_item(**self._group_request(queue_id, group.name, update, values))
            rewound += restored + revisited
        return rewound

    def drop_kept(self, queue_id: str) -> int:
        """Delete the kept leases of the queue's groups; how many."""
        dropped = 0
        for group in list(self._groups(queue_id, shuffled=False)):
            dropped += dead_letters.drop_kept(self.client, self.table, [group.partition])
            self.client.update_item(**self._group_request(queue_id, group.name, "SET k = :zero", _values(zero=0)))
        return dropped
