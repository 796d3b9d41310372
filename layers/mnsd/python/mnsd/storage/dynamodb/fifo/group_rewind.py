"""A FIFO queue's rewind on the DynamoDB message table, group by group (`fifo_groups` says what a group item holds):
each group paused while its kept messages are restored and its in-flight ones made visible, then let go with its hold
rebuilt from what stays in flight; and the kept messages dropped when rewind is turned off."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pynamodb.expressions.update import Action

from mnsd.model.messages import MessageRef
from mnsd.storage.dynamodb.fifo import group_packs
from mnsd.storage.dynamodb.fifo.directory import GroupState
from mnsd.storage.dynamodb.fifo.group_writes import GROUP_EXISTS, GroupWrites
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.groups import GroupItem, GroupLease, held, hold, item_key, number_of, sort_key
from mnsd.storage.dynamodb.items.layout import Item
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import is_pack

_REWIND_PAUSE_MS = 60_000  # how long a rewind pauses a group at most (should it stop half way)


def _update_group(writes: GroupWrites, group: GroupState, actions: Sequence[Action]) -> int | None:
    """Update a group item where it was read, or, moved since, where its home says: its home, None if gone."""
    for d in (group.home, None):
        if d is None:
            home = writes.directory.locate(group.queue_id, group.name)
            if home is None or home.d == group.home:
                return None
            d = home.d
        request = writes.group_request(group.queue_id, group.name, d, actions, GROUP_EXISTS)
        if conditional(writes.client.update_item, **request) is not None:
            return d
    return None


def _outcomes(
    writes: GroupWrites, packs: PackWrites, items: list[Item], since_ms: int, now_ms: int
) -> Iterator[tuple[str, Item]]:
    """Each lease of a page (read with `dead_letters.REWIND_PROJECTION`) rewound, with its outcome
    (`dead_letters.rewind_lease`); a pack's entries each (`group_packs.rewind_pack`, the pack read whole)."""
    for item in items:
        if not is_pack(item):
            yield dead_letters.rewind_lease(writes.client, writes.table, item, since_ms, now_ms, False), item
            continue
        whole = _whole(writes, item)
        if whole is not None:
            yield from group_packs.rewind_pack(packs, whole, since_ms, now_ms)


def _whole(writes: GroupWrites, item: Item) -> Item | None:
    """A pack read whole (a page of leases read it with a projection), None if it is gone."""
    return writes.client.get_item(TableName=writes.table, Key=item_key(item), ConsistentRead=True).get("Item")


def rewind(writes: GroupWrites, packs: PackWrites, queue_id: str, since_ms: int, now_ms: int) -> int:
    """Per group: pause it, restore its kept messages and make its in-flight ones visible (those enqueued at or after
    `since_ms`), then let it go with what is still in flight as its hold (`fifo.Hold`) and `c` bumped."""
    rewound = 0
    for group in list(writes.directory.groups(queue_id, shuffled=False)):
        pause = [GroupItem.p.set(now_ms + _REWIND_PAUSE_MS), GroupItem.c.set(GroupItem.c + 1)]
        d = _update_group(writes, group, pause)
        if d is None:
            continue  # (forgotten since it was read: it kept nothing)
        restored, revisited = 0, 0
        held_at: dict[int, int] = {}  # what stays in flight, by position: the group's hold after
        pages = dead_letters.lease_pages(writes.client, writes.table, [group.partition], dead_letters.REWIND_PROJECTION)
        for items, _ in pages:
            for outcome, item in _outcomes(writes, packs, items, since_ms, now_ms):
                restored += outcome == "restored"
                revisited += outcome == "revisited"
                if outcome == "in flight":
                    held_at[MessageRef.from_key(queue_id, sort_key(item)).position] = number_of(GroupLease.v, item)
        actions = [
            GroupItem.q.set(GroupItem.q + restored),
            GroupItem.k.set((GroupItem.k | 0) - restored),
            GroupItem.c.set(GroupItem.c + 1),
            *(hold(p).set(held(p, v)) for p, v in held_at.items()),
            GroupItem.p.remove(),
            GroupItem.o.remove(),
            GroupItem.h.remove(),
            *(hold(p).remove() for p in group.hold.leases if p not in held_at),
        ]
        writes.client.update_item(**writes.group_request(queue_id, group.name, d, actions))
        rewound += restored + revisited
    return rewound


def drop_kept(writes: GroupWrites, packs: PackWrites, queue_id: str) -> int:
    """Delete the kept leases of the queue's groups (a pack's kept entries: `PackWrites.drop_kept`); how many."""

    def pack(item: Item) -> int:
        whole = _whole(writes, item)
        return 0 if whole is None else packs.drop_kept(whole)

    dropped = 0
    for group in list(writes.directory.groups(queue_id, shuffled=False)):
        dropped += dead_letters.drop_kept(writes.client, writes.table, [group.partition], pack)
        _update_group(writes, group, [GroupItem.k.set(0)])
    return dropped
