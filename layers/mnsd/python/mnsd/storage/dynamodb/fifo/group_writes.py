"""Writes of a FIFO queue's group items on the DynamoDB message table (`fifo_groups` says what a group item holds):
a group's counter (made with its home when it has none, `directory.GroupDirectory.create_items`), the transactions
that change what a group holds, at its home, and throttling counted as the queue's pressure (`placer.Placer`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from botocore.exceptions import ClientError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.model import fifo
from mnsd.model.messages import MessageRef
from mnsd.storage.dynamodb.fifo.directory import GroupDirectory, Home
from mnsd.storage.dynamodb.items.conditions import THROTTLES, conditional
from mnsd.storage.dynamodb.items.groups import GroupItem, group_key, hold, number_of, update_request
from mnsd.storage.dynamodb.items.layout import Item
from mnsd.storage.dynamodb.items.wire import set_value
from mnsd.storage.dynamodb.placement.placer import Placer

_ATTEMPTS = 4  # of a delete's or a visibility change's transaction that meets a conflicting write or throttling
_SEQUENCE_ATTEMPTS = 6  # of a send's counter that meets a home no longer its group's or a racing creator
GROUP_EXISTS = GroupItem.n.exists()


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
        counted = [
            GroupItem.n.set(GroupItem.n + count),
            GroupItem.q.set((GroupItem.q | 0) + count),
            set_value(GroupItem.x, fifo.group_expires_at(now_ms) // 1000),
        ]
        for _ in range(_SEQUENCE_ATTEMPTS):
            d = self.directory.known(queue_id, group)
            seen: Home | None = None
            if d is None:
                seen = self.directory.locate(queue_id, group)
                d = None if seen is None else seen.d
            if d is not None:
                request = self.group_request(queue_id, group, d, counted, GROUP_EXISTS)
                response = self.write(queue_id, self.client.update_item, {**request, "ReturnValues": "UPDATED_NEW"})
                if response is not None:
                    return number_of(GroupItem.n, response["Attributes"]) - count + 1
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
        state = GroupItem(n=first - 1 + count, q=count, c=0, x=fifo.group_expires_at(now_ms) // 1000)
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

    def group_request(
        self, queue_id: str, group: str, d: int, actions: Sequence[Action], condition: Condition | None = None
    ) -> Item:
        """An UpdateItem request of a group item at directory partition `d` (alone, or a transaction's `Update`)."""
        return update_request(self.table, group_key(queue_id, group, d), actions, condition)

    def group_update(
        self, ref: MessageRef, d: int, actions: Sequence[Action], condition: Condition = GROUP_EXISTS
    ) -> Item:
        """A transaction's update of the group item of a message, at `d`, where it must be."""
        return {"Update": self.group_request(ref.queue_id, ref.group, d, actions, condition)}

    def release(self, refs: list[MessageRef], d: int, kept: bool = False) -> Item:
        """The group item's part of a delete of messages of one group (one, or a run): as many fewer stored, out of
        the hold (`fifo.Hold.released`: those in it), `c` bumped (and, when they are `kept` for rewind, as many more
        kept)."""
        actions = [GroupItem.q.set((GroupItem.q | 0) - len(refs)), GroupItem.c.set((GroupItem.c | 0) + 1)]
        if kept:
            actions.append(GroupItem.k.set((GroupItem.k | 0) + len(refs)))
        actions += [hold(position).remove() for position in dict.fromkeys(ref.position for ref in refs)]
        return self.group_update(refs[0], d, actions)
