"""FIFO messages (a FIFO queue's) on the DynamoDB message table: each group's order kept by one small item.

A group's leases are the leases of any message (`layout.message_items`), in a partition of their own,
`{queue_id}#G{group}` (`layout.partition_of`): sorted by their key, so in position order, and read from the head
with a strongly consistent Query (order costs no read across partitions). A group's state is its *group item*,
`G{group}` in one of the queue's directory partitions `{queue_id}#D{d}`: how many there are grows with the queue's
load, and where each group's item lives is recorded in its *home item* (`#H` in the group's partition), written when
the group item is created and read by any writer that does not know it (`mnsd.storage.dynamodb.directory`):

    n  the last position given (`sequence`; a group made anew numbers from its time of creation on, in ms, so
       above every message of a former one, which has expired, been deleted or been sent over 1,000 a second)
    q  messages stored: a send adds (at `sequence`), a delete, a dead-letter move and a delete kept for rewind
       subtract, a rewind adds back. An emptied group item (`fifo.forgettable`: `q` 0, nothing kept or held) is
       deleted, then its home, by the scan that meets it, so the directory holds the groups that have messages (and
       those TTL has not ended yet); `q` counts a send's messages from its `sequence`, so none is on its way then.
    t{position}  its hold (`fifo.Hold`): the next visible time of each message of its run in flight not deleted
       yet. The group is *held* while any is later than now. A claim writes its run's in place of the former ones,
       a visibility change its message's (shorter or longer: a message given back releases the group at its new
       time), a delete or an expiry removes its message's. (`o`, `h`: how many and until when, on a group item whose
       run was claimed before holds were kept per message: it holds the group until `h`.)
    k  messages deleted and kept for rewind (a delete kept adds, a rewind and turning rewind off subtract): a group
       item with kept messages is not deleted, so a rewind finds them.
    c  bumped by every change of the hold and by a rewind, which also pauses the group while it works (`p`, until
       when): a claim is conditioned on the `c` its scan read (which found the hold lapsed), so a run built before
       the group was claimed, re-timed or rewound is refused.
    x  its TTL: the longest retention after its last send.
    i  its home item's token (absent on group items from before homes, which live where they always did).

Every write that changes what a group holds is one TransactWriteItems with its group item: a claim (`c` as read,
no rewind pausing it, each lease of the run as observed and Active; the group item then holds the run), a delete
(its hold entry removed, `q` less), a visibility change of a message of the hold (its entry re-timed, whether it
goes past the others or not: the group is released when its last lease lapses; a delayed message's, outside the
hold, is written alone), a dead-letter move, a delete kept for rewind. The
head condition (no message before the run's first) is the scan's: the run starts at the first lease the scan
read that is not deleted, kept or expired (a consistent read, after the group item); the claim refuses a run
that does not start there. Every write of a group item is conditioned on its existing, so a write at a home that is
no longer the group's (moved, or forgotten and made anew elsewhere) fails: the writer reads the home and tries again
(a send until it made or found the group; a delete or visibility change once: a group with a message in flight is
neither forgotten nor moved; a claim is refused and the next receive reads again).

A receive reads the directory partitions in turn from a random one, each from a random group on (and wraps),
skipping held groups, until it has enough runs; a free group it meets outside the home the queue's width gives it
now is moved there first (`GroupDirectory.move_items`), so a queue's groups follow its growth.

Capacity (`bench/results/capacity.md`, "A FIFO queue's directory grows with its load"): a message costs its group
item about 5 write units (the counter at send, the claim and the delete as transactions, billed double), one more
when its group is made anew and forgotten around it (made in a transaction with its home, which costs its group's
partition 2 more, and 1 to delete). The directory's width grows with the send rate (`GroupDirectory.width`: a
partition per stripe of the queue's placement, at least 8), so the queue's group-item writes spread with its load:
10,000 single-message lifecycles a second over 1,000 groups keep every directory partition under half of DynamoDB's
1,000 WCU/s. What does not spread is a group: its leases and its
home share its partition (about 5 write units a message there: the lease put, its claim and its delete, these two
billed double), and its group item one directory partition, so one group takes at most about 1,000 / 5 = 200
messages a second; and by FIFO's own rule it passes one run (up to 16 messages) per receive-to-delete round trip of
its consumer, so 16 / round trip messages a second.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from mnsd.queues import fifo
from mnsd.queues.model import Message, MessageRef, MessageState, QueueCounts
from mnsd.storage import ReadyScan
from mnsd.storage.dynamodb import dead_letters
from mnsd.storage.dynamodb.conditions import THROTTLES, conditional
from mnsd.storage.dynamodb.directory import (
    MIN_DIRECTORY_WIDTH,
    GroupDirectory,
    GroupState,
    Home,
    group_item_key,
    hold_attribute,
)
from mnsd.storage.dynamodb.layout import (
    LEASE,
    Item,
    held_lease,
    is_kept,
    keep_held_lease,
    lease_item_key,
    message_of,
    state_of,
)
from mnsd.storage.dynamodb.placer import Placer

_EXTRA_PAGES = 8  # Queries of group items one receive makes at most beyond one per directory partition
_RUN_SLACK = 4  # leases read past a run's wanted length (deleted-but-kept, expired ones on the way)
_HEAD_PAGES = 4  # pages of kept or expired leases a receive reads through at a group's head before giving up
_ATTEMPTS = 4  # of a delete's or a visibility change's transaction that meets a conflicting write or throttling
_SEQUENCE_ATTEMPTS = 6  # of a send's counter that meets a home no longer its group's or a racing creator
_COUNT_GROUPS = 64  # groups whose leases a count reads one by one; the others are counted from their group item
_REWIND_HOLD_MS = 60_000  # how long a rewind holds a group at most (should it stop half way)
_GROUP_EXISTS = "attribute_exists(n)"
# Not paused by a rewind, nor held by a run claimed before holds were kept per message (`o`, `h`).
_UNPAUSED = "(attribute_not_exists(p) OR p <= :now) AND (attribute_not_exists(o) OR o <= :zero OR h <= :now)"
# A forgotten group (`fifo.forgettable`): stores and keeps nothing, its hold as read (free) then.
_FORGETTABLE = f"q <= :zero AND c = :c AND (attribute_not_exists(k) OR k <= :zero) AND {_UNPAUSED}"

__all__ = ["MIN_DIRECTORY_WIDTH", "FifoGroups"]

_Heads = Mapping[tuple[str, str], "_Head"]  # what a scan saw of each group, by (queue_id, group)
_CountPlain = Callable[[str, int], dict[MessageState, float]]  # a partition's leases by state (read from the table)


@dataclass(frozen=True)
class _Head:
    """What a scan saw of a free group: its changes then, the position of its first message, its home and its hold
    (lapsed)."""

    changes: int
    position: int
    home: int
    hold: fifo.Hold


def _claimed(head: _Head, run: list[Message], now_ms: int) -> tuple[str, Item, str]:
    """The group item's part of a claim (update, values, condition): the run's hold (`fifo.Hold.claimed`, its
    messages as the claim leaves them) in place of the one before, `c` bumped; if the group is as the scan read it
    (`c`: its hold lapsed), no rewind pauses it and no former run holds it."""
    hold = fifo.Hold.claimed(run)
    sets = ", ".join(f"{hold_attribute(position)} = :vis" for position in hold.leases)
    gone = ", ".join(["o", "h", *(hold_attribute(p) for p in head.hold.leases if p not in hold.leases)])
    values = _values(vis=run[0].visible_at, one=1, zero=0, now=now_ms, c=head.changes)
    return f"SET {sets}, c = c + :one REMOVE {gone}", values, f"c = :c AND {_UNPAUSED}"


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


def _failed_items(exc: ClientError) -> set[int]:
    """The items of a cancelled transaction whose condition did not hold (all of them when it does not say)."""
    reasons = exc.response.get("CancellationReasons", [])
    failed = {n for n, reason in enumerate(reasons) if reason.get("Code") == "ConditionalCheckFailed"}
    return failed or set(range(100))


def _throttled(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") in THROTTLES


class GroupWrites:
    """Writes of group items: a group's counter (made with its home when it has none), the transactions that change
    what a group holds, at its home, and throttling counted as the queue's pressure."""

    def __init__(self, client: Any, table: str, placer: Placer, directory: GroupDirectory) -> None:
        self.client = client
        self.table = table
        self.placer = placer
        self.directory = directory

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        """`n` is the last position given, counted at the group's home (remembered, else read); where its item is
        not, the home is read again, and a group without one is made (`_create`). A group made anew starts from
        `fifo.first_position`; its item's TTL is `fifo.group_expires_at` its last send."""
        values = _values(count=count, zero=0, x=fifo.group_expires_at(now_ms) // 1000)
        for _ in range(_SEQUENCE_ATTEMPTS):
            d = self.directory.known(queue_id, group)
            seen: Home | None = None
            if d is None:
                seen = self.directory.locate(queue_id, group)
                d = None if seen is None else seen.d
            if d is not None:
                update = "SET n = n + :count, q = if_not_exists(q, :zero) + :count, x = :x"
                request = self.group_request(queue_id, group, d, update, values, _GROUP_EXISTS)
                response = self.write(queue_id, self.client.update_item, {**request, "ReturnValues": "UPDATED_NEW"})
                if response is not None:
                    return int(response["Attributes"]["n"]["N"]) - count + 1
                self.directory.unlearn(queue_id, group)
                if seen is None:
                    continue  # (a home remembered, no longer the group's: read it)
            if self.create(queue_id, group, count, now_ms, seen):
                return fifo.first_position(now_ms)
        raise RuntimeError(f"the group item of {group!r} kept changing under its sends")

    def create(self, queue_id: str, group: str, count: int, now_ms: int, seen: Home | None) -> bool:
        """Make the group's item, numbering from `fifo.first_position`, with its home (`GroupDirectory.create_items`);
        False if another writer made it (or its home changed) first."""
        first = fifo.first_position(now_ms)
        state = {
            "n": {"N": str(first - 1 + count)},
            **{name: {"N": str(value)} for name, value in (("q", count), ("c", 0))},
            "x": {"N": str(fifo.group_expires_at(now_ms) // 1000)},
        }
        d, items = self.directory.create_items(queue_id, group, seen, state)
        if self.transact(queue_id, items) is not None:
            return False
        self.directory.remember(queue_id, group, d)
        return True

    def write(self, queue_id: str, call: Callable[..., Any], request: Item, patient: bool = True) -> Item | None:
        """A conditional write (None: its condition did not hold). Throttling counts as the queue's pressure (its
        directory grows, `placer.Placer`) and is tried again (`patient`: a few times, then raised; else given up)."""
        for attempt in range(_ATTEMPTS):
            try:
                return conditional(call, **request)
            except ClientError as exc:
                if not _throttled(exc):
                    raise
                self.placer.growth.pressure.throttled(queue_id)
                if not patient:
                    return None
                if attempt == _ATTEMPTS - 1:
                    raise
            time.sleep(0.02 * 2**attempt * random.random())
        return None

    def transact(self, queue_id: str, items: list[Item], patient: bool = True) -> set[int] | None:
        """One TransactWriteItems: None when done, else the items whose condition did not hold. A conflicting write
        or throttling (which counts as the queue's pressure) is tried again (`patient`: a few times, then raised, as
        any write's throttling is; else given up as refused)."""
        for attempt in range(_ATTEMPTS):
            try:
                self.client.transact_write_items(TransactItems=items)
                return None
            except ClientError as exc:
                reasons = {reason.get("Code") for reason in exc.response.get("CancellationReasons", [])}
                if _throttled(exc) or "ThrottlingError" in reasons:
                    self.placer.growth.pressure.throttled(queue_id)
                refusal = _refusal(exc)
                if refusal == "condition":
                    return _failed_items(exc)
                if refusal == "busy" and not patient:
                    return set()
                if refusal != "busy" or attempt == _ATTEMPTS - 1:
                    raise
            time.sleep(0.02 * 2**attempt * random.random())
        return set()

    def at_home(self, ref: MessageRef, build: Callable[[int], list[Item]]) -> bool:
        """A transaction of a message's whose second item is its group item (`build`, given the group's home,
        remembered or read): if that item was not there, once more at its home read again."""
        d = self.directory.known(ref.queue_id, ref.group)
        located = d is None
        for _ in range(2):
            if d is None:
                home = self.directory.locate(ref.queue_id, ref.group)
                if home is None:
                    return False
                d = home.d
            failed = self.transact(ref.queue_id, build(d))
            if failed is None:
                return True
            if 1 not in failed or located:
                return False
            old, d, located = d, None, True
            home = self.directory.locate(ref.queue_id, ref.group)
            if home is None or home.d == old:
                return False  # (its home is right: the group item's own condition did not hold)
            d = home.d
        return False

    def group_request(self, queue_id: str, group: str, d: int, update: str, values: Item, condition: str = "") -> Item:
        """An UpdateItem request of a group item at directory partition `d` (alone, or a transaction's `Update`)."""
        request: Item = {
            "TableName": self.table,
            "Key": group_item_key(queue_id, group, d),
            "UpdateExpression": update,
            "ExpressionAttributeValues": values,
        }
        if condition:
            request["ConditionExpression"] = condition
        return request

    def group_update(self, ref: MessageRef, d: int, update: str, values: Item, condition: str = _GROUP_EXISTS) -> Item:
        """A transaction's update of the group item of a message, at `d`, where it must be."""
        return {"Update": self.group_request(ref.queue_id, ref.group, d, update, values, condition)}

    def release(self, ref: MessageRef, d: int, kept: bool = False) -> Item:
        """The group item's part of a delete: one message fewer stored, out of the hold (`fifo.Hold.released`: if it
        was in it), `c` bumped (and, when the message is `kept` for rewind, one more kept)."""
        update = "SET q = if_not_exists(q, :zero) - :one, c = if_not_exists(c, :zero) + :one"
        update += ", k = if_not_exists(k, :zero) + :one" if kept else ""
        return self.group_update(ref, d, f"{update} REMOVE {hold_attribute(ref.position)}", _values(zero=0, one=1))


class FifoGroups:
    """The groups part of the FIFO store (`fifo.DynamoFifoMessages`; see the module's docstring): claims, deletes and
    scans of groups."""

    def __init__(self, client: Any, table: str, placer: Placer) -> None:
        self.client = client
        self.table = table
        self.directory = GroupDirectory(client, table, placer)
        self.writes = GroupWrites(client, table, placer, self.directory)

    # --- writes ----------------------------------------------------------------------------------

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        return self.writes.sequence(queue_id, group, count, now_ms)

    def claim_runs(
        self, candidates: list[Message], count: int, now_ms: int, visible_at: int, heads: _Heads | None = None
    ) -> list[Message]:
        """The candidates' runs claimed as `fifo.claim_runs` says, each in one transaction (`_claim_run`); `heads`:
        what the scan that offered them saw."""
        return fifo.claim_runs(candidates, count, now_ms, lambda run: self._claim_run(run, now_ms, visible_at, heads))

    def _claim_run(self, run: list[Message], now_ms: int, visible_at: int, heads: _Heads | None) -> list[Message]:
        """A claimable run (`fifo.claimable`) taken if it starts at its group's head and the group is free (its
        group item at the home the scan read it from)."""
        first = run[0]
        head = self._head(first.queue_id, first.message_group_id, now_ms, heads or {})
        if head is None or head.position != first.position:
            return []  # a message before it remains (or the group is gone, or held)
        after = [m.received(now_ms, visible_at) for m in run]
        hold = self.writes.group_update(first.ref, head.home, *_claimed(head, after, now_ms))
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
        return after if self.writes.transact(first.queue_id, [hold, *leases], patient=False) is None else []

    def delete(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        lease = {"Delete": held_lease(self.table, ref, version, now_ms)}
        return self.writes.at_home(ref, lambda d: [lease, self.writes.release(ref, d)])

    def delete_keeping(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        keep = keep_held_lease(self.table, ref, version, now_ms)
        return self.writes.at_home(ref, lambda d: [{"Update": keep}, self.writes.release(ref, d, kept=True)])

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a lease, and its time in its group's hold with it, shorter or longer (`fifo.Hold.retimed`; one
        transaction, `c` bumped); a lease outside the hold (a delayed message's) alone. A run claimed before holds were
        kept per message adds its lease to the hold (its former hold stays until then)."""
        lease = held_lease(self.table, ref, version, now_ms)
        lease["UpdateExpression"] = "SET v = :vis, r = :next"
        lease["ExpressionAttributeValues"].update(_values(vis=visible_at, next=version + 1))
        name = hold_attribute(ref.position)

        def retime_hold(d: int) -> list[Item]:
            update = f"SET {name} = :vis, c = if_not_exists(c, :zero) + :one"
            condition = f"attribute_exists({name}) OR o > :zero"
            hold = self.writes.group_update(ref, d, update, _values(vis=visible_at, zero=0, one=1), condition)
            return [{"Update": lease}, hold]

        if self.writes.at_home(ref, retime_hold):
            return True
        return conditional(self.client.update_item, **lease) is not None

    def moved_out(self, source: Message) -> list[Item]:
        """What a dead-letter move of a FIFO message adds to its transaction: one message fewer in its group
        (the source is Active: its group is free, so it may have moved: its home is read)."""
        home = self.directory.locate(source.queue_id, source.message_group_id)
        d = home.d if home is not None else 0  # (no group item: its condition refuses the move)
        return [
            self.writes.group_update(source.ref, d, "SET q = if_not_exists(q, :zero) - :one", _values(zero=0, one=1))
        ]

    # --- reads ----------------------------------------------------------------------------------

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

    def _run(self, group: GroupState, now_ms: int, wanted: int) -> fifo.HeadRun:
        """A group's run (`fifo.head_run`), its leases read from the head as far as the run goes."""
        return fifo.head_run(self._stored(group, now_ms, wanted), now_ms, wanted)

    def _stored(self, group: GroupState, now_ms: int, wanted: int) -> Iterator[Message]:
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

    def _drop_expired(self, group: GroupState, item: Item, now_ms: int) -> None:
        """Delete a lease whose retention is over (TTL would, later), with one message fewer in its group."""
        gone = conditional(
            self.client.delete_item,
            TableName=self.table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            ConditionExpression="x <= :now_s",
            ExpressionAttributeValues=_values(now_s=now_ms // 1000),
        )
        if gone is not None:
            position = MessageRef.from_key(group.queue_id, item["sk"]["S"]).position
            update, values = "SET q = q - :one", _values(one=1)
            if position in group.hold.leases:  # (out of its hold: `fifo.Hold.released`)
                update = f"SET q = q - :one, c = c + :one REMOVE {hold_attribute(position)}"
            request = self.writes.group_request(
                group.queue_id, group.name, group.home, update, values, "attribute_exists(q)"
            )
            conditional(self.client.update_item, **request)

    def _forget(self, group: GroupState, now_ms: int) -> None:
        """Delete a group item that stores nothing and holds nothing, with its home (a send since makes it anew)."""
        self.directory.unlearn(group.queue_id, group.name)
        for delete in self.directory.forget_items(group, _FORGETTABLE, _values(zero=0, now=now_ms, c=group.changes)):
            if self.writes.write(group.queue_id, self.client.delete_item, delete["Delete"], patient=False) is None:
                return  # (changed since it was read; or its home already made anew by a send)

    def _settled(self, group: GroupState) -> GroupState | None:
        """A free group at the home its queue's width gives it now: moved there if it is not (None: the move was
        refused, the group changed since it was read)."""
        d = self.directory.misplaced(group)
        if d is None:
            return group
        moved, items = self.directory.move_items(group, d)
        if self.writes.transact(group.queue_id, items, patient=False) is not None:
            return None
        self.directory.remember(group.queue_id, group.name, d)
        return moved

    def scan(self, queue_id: str, now_ms: int, wanted: int, enough: int = 0) -> ReadyScan:
        """The runs of free groups from a random one on, until `enough` (or `wanted`) messages; claimed with the heads
        it saw (`claim_runs`)."""
        seen: dict[tuple[str, str], _Head] = {}
        found: list[Message] = []
        next_visible: int | None = None
        pages = self.directory.width(queue_id) + _EXTRA_PAGES
        met: set[str] = set()  # (a group moved ahead of the scan is met again at its new home)
        for group in self.directory.groups(queue_id, shuffled=True, pages=pages):
            if group.name in met:
                continue
            met.add(group.name)
            settled: GroupState | None = group
            if group.held(now_ms):
                wake: int | None = group.wakes_at()
            elif group.stored <= 0:
                if group.forgettable(now_ms):
                    self._forget(group, now_ms)
                continue
            elif (settled := self._settled(group)) is None:
                continue
            else:
                run = self._run(settled, now_ms, wanted - len(found))
                if run.head is not None:
                    seen[(queue_id, group.name)] = _Head(settled.changes, run.head, settled.home, settled.hold)
                    self.directory.remember(queue_id, group.name, settled.home)
                wake = run.wakes_at
                found += run.messages
            if wake is not None:
                next_visible = wake if next_visible is None else min(next_visible, wake)
            if len(found) >= (enough or wanted):
                break
        claim = functools.partial(self.claim_runs, heads=seen)
        return ReadyScan(found, None if found else next_visible, claimer=claim)

    def _head(self, queue_id: str, group: str, now_ms: int, heads: _Heads) -> _Head | None:
        """What the scan that offered a run saw of its group; read now (at its home) if it saw nothing of it."""
        if (queue_id, group) in heads:
            return heads[(queue_id, group)]
        d = self.directory.known(queue_id, group)
        if d is None:
            home = self.directory.locate(queue_id, group)
            if home is None:
                return None
            d = home.d
        state = self.directory.read(queue_id, group, d)
        if state is None:
            self.directory.unlearn(queue_id, group)
            return None
        if state.held(now_ms):
            return None
        head = self._run(state, now_ms, 1).head
        return None if head is None else _Head(state.changes, head, state.home, state.hold)

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        held = []
        for group in self.directory.groups(queue_id, shuffled=False):
            if group.held(now_ms):
                held.append(group.name)
                if len(held) >= limit:
                    break
        return held

    def counts(self, queue_id: str, now_ms: int, count_plain: _CountPlain) -> QueueCounts:
        """Exact for the first `_COUNT_GROUPS` groups (their leases read, `count_plain`), from the group items for
        the others: a held group's run in flight, the rest of what it stores Active."""
        found = dict.fromkeys(MessageState, 0.0)
        for n, group in enumerate(self.directory.groups(queue_id, shuffled=False)):
            if n < _COUNT_GROUPS:
                states = count_plain(group.partition, now_ms)
            else:
                out = group.in_flight(now_ms)
                states = {MessageState.INACTIVE: out, MessageState.ACTIVE: max(0, group.stored - out)}
            for state, k in states.items():
                found[state] += k
        return QueueCounts(
            *(round(found[s]) for s in (MessageState.ACTIVE, MessageState.INACTIVE, MessageState.DELAYED))
        )

    # --- rewind ---------------------------------------------------------------------------------

    def _update_group(self, group: GroupState, update: str, values: Item) -> int | None:
        """Update a group item where it was read, or, moved since, where its home says: its home, None if gone."""
        for d in (group.home, None):
            if d is None:
                home = self.directory.locate(group.queue_id, group.name)
                if home is None or home.d == group.home:
                    return None
                d = home.d
            request = self.writes.group_request(group.queue_id, group.name, d, update, values, _GROUP_EXISTS)
            if conditional(self.client.update_item, **request) is not None:
                return d
        return None

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        """Per group: hold it, restore its kept messages and make its in-flight ones visible (those enqueued at
        or after `since_ms`), then let it go with what is still in flight as its run and `c` bumped."""
        rewound = 0
        for group in list(self.directory.groups(queue_id, shuffled=False)):
            pause = _values(until=now_ms + _REWIND_HOLD_MS, one=1)
            d = self._update_group(group, "SET p = :until, c = c + :one", pause)
            if d is None:
                continue  # (forgotten since it was read: it kept nothing)
            restored, revisited = 0, 0
            hold: dict[int, int] = {}  # what stays in flight: the group's hold after (`fifo.Hold`)
            pages = dead_letters.lease_pages(self.client, self.table, [group.partition], dead_letters.REWIND_PROJECTION)
            for items, _ in pages:
                for item in items:
                    outcome = dead_letters.rewind_lease(self.client, self.table, item, since_ms, now_ms, False)
                    restored += outcome == "restored"
                    revisited += outcome == "revisited"
                    if outcome == "in flight":
                        hold[MessageRef.from_key(queue_id, item["sk"]["S"]).position] = int(item["v"]["N"])
            sets = "".join(f", {hold_attribute(p)} = :v{n}" for n, p in enumerate(hold))
            gone = "".join(f", {hold_attribute(p)}" for p in group.hold.leases if p not in hold)
            update = f"SET q = q + :restored, k = if_not_exists(k, :zero) - :restored, c = c + :one{sets} REMOVE p, o, h{gone}"
            values = _values(restored=restored, one=1, zero=0, **{f"v{n}": v for n, v in enumerate(hold.values())})
            self.client.update_item(**self.writes.group_request(queue_id, group.name, d, update, values))
            rewound += restored + revisited
        return rewound

    def drop_kept(self, queue_id: str) -> int:
        """Delete the kept leases of the queue's groups; how many."""
        dropped = 0
        for group in list(self.directory.groups(queue_id, shuffled=False)):
            dropped += dead_letters.drop_kept(self.client, self.table, [group.partition])
            self._update_group(group, "SET k = :zero", _values(zero=0))
        return dropped
