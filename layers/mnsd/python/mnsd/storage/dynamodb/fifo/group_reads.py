"""Reads of a FIFO queue's groups on the DynamoDB message table (`fifo_groups` says how they are stored): the runs of
free groups a scan finds, and the upkeep it does on the way (expired leases deleted, emptied groups forgotten, groups
moved to their home at the queue's width); a group's head read for a claim; the held groups; the counts.

A scan reads the directory partitions in turn from a random one, each from a random group on (and wraps), skipping
held groups, until it has enough runs; a free group it meets outside the home the queue's width gives it now is
moved there first (`directory.GroupDirectory.move_items`), so a queue's groups follow its growth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pynamodb.expressions.condition import Condition

from mnsd.model import fifo
from mnsd.model.messages import Message, MessageRef, MessageState
from mnsd.model.queues import QueueCounts
from mnsd.storage.dynamodb.fifo import group_packs
from mnsd.storage.dynamodb.fifo.directory import GroupState
from mnsd.storage.dynamodb.fifo.group_writes import GroupWrites
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.groups import (
    GroupItem,
    GroupLease,
    delete_request,
    hold,
    item_key,
    query_request,
    sort_key,
)
from mnsd.storage.dynamodb.items.layout import LEASE, Item, is_kept, message_of, state_of
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import entries, is_pack

_EXTRA_PAGES = 8  # Queries of group items one receive makes at most beyond one per directory partition
_RUN_SLACK = 4  # leases read past a run's wanted length (deleted-but-kept, expired ones on the way)
_HEAD_PAGES = 4  # pages of kept or expired leases a receive reads through at a group's head before giving up
_COUNT_GROUPS = 64  # groups whose leases a count reads one by one; the others are counted from their group item


def unpaused(now_ms: int) -> Condition:
    """Not paused by a rewind, nor held by a run claimed before holds were kept per message (`o`, `h`)."""
    paused = GroupItem.p.does_not_exist() | (GroupItem.p <= now_ms)
    return paused & (GroupItem.o.does_not_exist() | (GroupItem.o <= 0) | (GroupItem.h <= now_ms))


def _forgettable(group: GroupState, now_ms: int) -> Condition:
    """A forgotten group (`fifo.forgettable`): stores and keeps nothing, its hold as read (free) then."""
    kept = GroupItem.k.does_not_exist() | (GroupItem.k <= 0)
    return (GroupItem.q <= 0) & (GroupItem.c == group.changes) & kept & unpaused(now_ms)


CountPlain = Callable[[str, int], dict[MessageState, float]]  # a partition's leases by state (read from the table)


@dataclass(frozen=True)
class Head:
    """What a scan saw of a free group: its changes then, the position of its first message, its home and its hold
    (lapsed)."""

    changes: int
    position: int
    home: int
    hold: fifo.Hold


Heads = Mapping[tuple[str, str], Head]  # what a scan saw of each group, by (queue_id, group)


@dataclass(frozen=True)
class FreeRuns:
    """What a scan found: the runs of free groups, when the first held or delayed one it met becomes free (if it
    found none), and the heads it saw (a claim of its runs is conditioned on them)."""

    messages: list[Message]
    next_visible_at: int | None
    heads: dict[tuple[str, str], Head] = field(default_factory=dict)


def _leases(writes: GroupWrites, partition: str, limit: int, after: Item | None) -> tuple[list[Item], Item | None]:
    """A page of a group's leases in position order, read consistently (a claim relies on its head)."""
    kwargs: dict[str, Any] = {"ExclusiveStartKey": after} if after else {}
    keys = (GroupLease.pk == partition) & GroupLease.sk.startswith(LEASE)
    response = writes.client.query(**query_request(writes.table, keys, Limit=limit, ConsistentRead=True, **kwargs))
    return list(response["Items"]), response.get("LastEvaluatedKey")


def _run(writes: GroupWrites, group: GroupState, now_ms: int, wanted: int) -> fifo.HeadRun:
    """A group's run (`fifo.head_run`), its leases read from the head as far as the run goes."""
    return fifo.head_run(_stored(writes, group, now_ms, wanted), now_ms, wanted)


def _stored(writes: GroupWrites, group: GroupState, now_ms: int, wanted: int) -> Iterator[Message]:
    """A group's unexpired messages in position order, page by page as they are taken (at most `_HEAD_PAGES`); the
    expired leases met on the way are deleted (those kept for rewind stay); a pack gives its entries (`_unpacked`)."""
    after: Item | None = None
    for _ in range(_HEAD_PAGES):
        items, after = _leases(writes, group.partition, wanted + _RUN_SLACK, after)
        for item in items:
            if is_pack(item):
                yield from _unpacked(writes, group, item, now_ms)
            elif state_of(item, now_ms) is not MessageState.EXPIRED:
                yield message_of(item)
            elif not is_kept(item):
                _drop_expired(writes, group, item, now_ms)
        if after is None:
            return


def _unpacked(writes: GroupWrites, group: GroupState, pack: Item, now_ms: int) -> list[Message]:
    """A pack's unexpired messages (`packs.entries`); a pack with none to give, emptied or expired, removed with as
    many fewer in its group (`group_packs.dropped`)."""
    found = [message_of(lease) for lease in entries(pack) if state_of(lease, now_ms) is not MessageState.EXPIRED]
    if not found:
        _fewer(writes, group, group_packs.dropped(PackWrites(writes.client, writes.table), pack, now_ms))
    return found


def _drop_expired(writes: GroupWrites, group: GroupState, item: Item, now_ms: int) -> None:
    """Delete a lease whose retention is over (TTL would, later), with one message fewer in its group (and out of its
    hold: `fifo.Hold.released`)."""
    expired = delete_request(writes.table, item_key(item), GroupLease.x <= now_ms // 1000)
    if conditional(writes.client.delete_item, **expired) is not None:
        _fewer(writes, group, [MessageRef.from_key(group.queue_id, sort_key(item)).position])


def _fewer(writes: GroupWrites, group: GroupState, positions: list[int]) -> None:
    """Messages of a group removed (expired): as many fewer stored, and out of its hold (`fifo.Hold.released`)."""
    if not positions:
        return
    actions = [GroupItem.q.set(GroupItem.q - len(positions))]
    held = [hold(p).remove() for p in positions if p in group.hold.leases]
    if held:
        actions += [GroupItem.c.set(GroupItem.c + 1), *held]
    request = writes.group_request(group.queue_id, group.name, group.home, actions, GroupItem.q.exists())
    conditional(writes.client.update_item, **request)


def _forget(writes: GroupWrites, group: GroupState, now_ms: int) -> None:
    """Delete an emptied group's item (`fifo.forgettable`), with its home (a send since makes it anew)."""
    writes.directory.unlearn(group.queue_id, group.name)
    for delete in writes.directory.forget_items(group, _forgettable(group, now_ms)):
        if writes.write(group.queue_id, writes.client.delete_item, delete["Delete"], patient=False) is None:
            return  # (changed since it was read; or its home already made anew by a send)


def _settled(writes: GroupWrites, group: GroupState) -> GroupState | None:
    """A free group at the home its queue's width gives it now: moved there if it is not (None: the move was refused,
    the group changed since it was read)."""
    d = writes.directory.misplaced(group)
    if d is None:
        return group
    moved, items = writes.directory.move_items(group, d)
    if writes.transact(group.queue_id, items, patient=False) is not None:
        return None
    writes.directory.remember(group.queue_id, group.name, d)
    return moved


def free_runs(writes: GroupWrites, queue_id: str, now_ms: int, wanted: int, enough: int) -> FreeRuns:
    """The runs of free groups from a random one on, until `enough` messages (or `wanted`, at most)."""
    found = FreeRuns([], None)
    next_visible: int | None = None
    pages = writes.directory.width(queue_id) + _EXTRA_PAGES
    met: set[str] = set()  # (a group moved ahead of the scan is met again at its new home)
    for group in writes.directory.groups(queue_id, shuffled=True, pages=pages):
        if group.name in met:
            continue
        met.add(group.name)
        settled: GroupState | None = group
        if group.held(now_ms):
            wake: int | None = group.wakes_at()
        elif group.stored <= 0:
            if group.forgettable(now_ms):
                _forget(writes, group, now_ms)
            continue
        elif (settled := _settled(writes, group)) is None:
            continue
        else:
            run = _run(writes, settled, now_ms, wanted - len(found.messages))
            if run.head is not None:
                found.heads[(queue_id, group.name)] = Head(settled.changes, run.head, settled.home, settled.hold)
                writes.directory.remember(queue_id, group.name, settled.home)
            wake = run.wakes_at
            found.messages.extend(run.messages)
        if wake is not None:
            next_visible = wake if next_visible is None else min(next_visible, wake)
        if len(found.messages) >= min(enough, wanted):
            break
    return FreeRuns(found.messages, None if found.messages else next_visible, found.heads)


def head_of(writes: GroupWrites, queue_id: str, group: str, now_ms: int, heads: Heads) -> Head | None:
    """What the scan that offered a run saw of its group; read now (at its home) if it saw nothing of it (None: the
    group is gone or held)."""
    if (queue_id, group) in heads:
        return heads[(queue_id, group)]
    d = writes.directory.known(queue_id, group)
    if d is None:
        home = writes.directory.locate(queue_id, group)
        if home is None:
            return None
        d = home.d
    state = writes.directory.read(queue_id, group, d)
    if state is None:
        writes.directory.unlearn(queue_id, group)
        return None
    if state.held(now_ms):
        return None
    head = _run(writes, state, now_ms, 1).head
    return None if head is None else Head(state.changes, head, state.home, state.hold)


def held_groups(writes: GroupWrites, queue_id: str, now_ms: int, limit: int) -> list[str]:
    held = []
    for group in writes.directory.groups(queue_id, shuffled=False):
        if group.held(now_ms):
            held.append(group.name)
            if len(held) >= limit:
                break
    return held


def counts(writes: GroupWrites, queue_id: str, now_ms: int, count_plain: CountPlain) -> QueueCounts:
    """Exact for the first `_COUNT_GROUPS` groups (their leases read, `count_plain`), from the group items for the
    others: the messages of a group's hold in flight, the rest of what it stores Active."""
    found = dict.fromkeys(MessageState, 0.0)
    for n, group in enumerate(writes.directory.groups(queue_id, shuffled=False)):
        if n < _COUNT_GROUPS:
            states = count_plain(group.partition, now_ms)
        else:
            out = group.in_flight(now_ms)
            states = {MessageState.INACTIVE: out, MessageState.ACTIVE: max(0, group.stored - out)}
        for state, k in states.items():
            found[state] += k
    return QueueCounts(*(round(found[s]) for s in (MessageState.ACTIVE, MessageState.INACTIVE, MessageState.DELAYED)))
