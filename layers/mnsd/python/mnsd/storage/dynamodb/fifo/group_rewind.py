"""A FIFO queue's rewind on the DynamoDB message table, group by group (`fifo_groups` says what a group item holds):
each group paused while its kept messages are restored and its in-flight ones made visible, then let go with its hold
rebuilt from what stays in flight; and the kept messages dropped when rewind is turned off."""

from __future__ import annotations

from collections.abc import Iterator

from mnsd.model.messages import MessageRef
from mnsd.storage.dynamodb.fifo import group_packs
from mnsd.storage.dynamodb.fifo.directory import GroupState, hold_attribute, hold_value
from mnsd.storage.dynamodb.fifo.group_writes import GROUP_EXISTS, GroupWrites, numbers
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.layout import Item
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import is_pack

_REWIND_PAUSE_MS = 60_000  # how long a rewind pauses a group at most (should it stop half way)


def _update_group(writes: GroupWrites, group: GroupState, update: str, values: Item) -> int | None:
    """Update a group item where it was read, or, moved since, where its home says: its home, None if gone."""
    for d in (group.home, None):
        if d is None:
            home = writes.directory.locate(group.queue_id, group.name)
            if home is None or home.d == group.home:
                return None
            d = home.d
        request = writes.group_request(group.queue_id, group.name, d, update, values, GROUP_EXISTS)
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
    key = {"pk": item["pk"], "sk": item["sk"]}
    return writes.client.get_item(TableName=writes.table, Key=key, ConsistentRead=True).get("Item")


def rewind(writes: GroupWrites, packs: PackWrites, queue_id: str, since_ms: int, now_ms: int) -> int:
    """Per group: pause it, restore its kept messages and make its in-flight ones visible (those enqueued at or after
    `since_ms`), then let it go with what is still in flight as its hold (`fifo.Hold`) and `c` bumped."""
    rewound = 0
    for group in list(writes.directory.groups(queue_id, shuffled=False)):
        pause = numbers(until=now_ms + _REWIND_PAUSE_MS, one=1)
        d = _update_group(writes, group, "SET p = :until, c = c + :one", pause)
        if d is None:
            continue  # (forgotten since it was read: it kept nothing)
        restored, revisited = 0, 0
        hold: dict[int, int] = {}  # what stays in flight, by position: the group's hold after
        pages = dead_letters.lease_pages(writes.client, writes.table, [group.partition], dead_letters.REWIND_PROJECTION)
        for items, _ in pages:
            for outcome, item in _outcomes(writes, packs, items, since_ms, now_ms):
                restored += outcome == "restored"
                revisited += outcome == "revisited"
                if outcome == "in flight":
                    hold[MessageRef.from_key(queue_id, item["sk"]["S"]).position] = int(item["v"]["N"])
        sets = "".join(f", {hold_attribute(p)} = :v{n}" for n, p in enumerate(hold))
        gone = "".join(f", {hold_attribute(p)}" for p in group.hold.leases if p not in hold)
        update = (
            f"SET q = q + :restored, k = if_not_exists(k, :zero) - :restored, c = c + :one{sets} REMOVE p, o, h{gone}"
        )
        values = numbers(restored=restored, one=1, zero=0)
        values.update({f":v{n}": hold_value(p, v) for n, (p, v) in enumerate(hold.items())})
        writes.client.update_item(**writes.group_request(queue_id, group.name, d, update, values))
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
        _update_group(writes, group, "SET k = :zero", numbers(zero=0))
    return dropped
