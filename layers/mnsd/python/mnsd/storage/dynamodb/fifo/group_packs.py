"""A FIFO queue's packs on the DynamoDB message table: a batch send's run of one group stored as one body item and one
lease item, its *pack* (`packs`: what a pack holds; `fifo_groups`: the group item), and the pack's part of each
transaction of its group.

A batch send gives each group's messages (2 to `packs.MAX_PACK` of them; more make more packs) ids that name one pack
and their entry in it (`packed_ids`), and its group's counter gives them consecutive positions (`fifo.positions`): so
entry n is at the pack's position + n, and the pack's key, `L{priority}{first position}{pack}~{group}`, sorts in its
group's partition where its first entry would (`packs.pack_key`). A reader of the group from its head sees the pack
as its entries, in position order, each with its own state (`packs.entries`); nothing reads a FIFO pack's place `v`
(a group is read from its head, never by time): the claim leaves it as it was.

The group item stays what it was (`fifo_groups`): the counter bumped once by the send, the run's hold per message,
`c`, `q`. Each write of a message is still one transaction with its group item; a pack is one write of it, whatever
number of its entries the transaction changes:

- claim: the run's entries of each pack it spans, one UpdateItem a pack (per entry: its version as observed and
  receivable: `pack_writes.claim_entries`), beside the group item's hold (the group item's `c` as the scan read it);
- delete by receipt handles: one write a pack (`pack_writes.deletion`: the pack deleted when the handles name its
  whole batch, else their entries removed), kept for rewind (`pack_writes.keeping`); an emptied pack is deleted by
  the scan that meets it (`dropped`) or ends with its TTL;
- visibility change: the entry alone (`pack_writes.retiming`), its time in the hold with it;
- dead-letter move: the entry removed (`PackWrites.removal`);
- expiry: a scan that meets an expired pack removes its entries that are not kept (the pack with them when it keeps
  none), as many fewer in its group (`dropped`);
- rewind: entry by entry (`rewind_pack`, `PackWrites.rewind_entry`) while the group is paused.

The invariant that makes it safe: **every write of an entry is conditioned on that entry alone** (its version, its
visibility, the pack's expiry), so a message of a pack keeps its own owner, visibility, count and place in its group
whatever happens to its siblings; and **every entry's position is its pack's plus its index**, so the pack sorts at
its first entry and a run read from the group's head meets the entries in their order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mnsd.model.messages import Message, MessageRef
from mnsd.storage.dynamodb.fifo.group_writes import numbers
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.layout import (
    Item,
    actor_set,
    held_lease,
    keep_held_lease,
    lease_item_key,
    message_id_of,
    number,
)
from mnsd.storage.dynamodb.items.pack_writes import (
    PackWrites,
    claim_entries,
    deletion,
    keeping,
    removed_entries,
    retiming,
)
from mnsd.storage.dynamodb.items.packs import (
    MAX_PACK,
    Stored,
    by_pack,
    entries,
    entry_of,
    indexes_of,
    pack_ids,
    pack_of,
)


def packed_ids(ids: list[str], groups: Sequence[str], now_ms: int) -> list[str]:
    """The ids of a batch send (`ids`, one a message) with each group's messages (of `groups`, the messages'
    groups in order) named as a pack's, `MAX_PACK` at most a pack; a group's single message keeps its id."""
    if len(groups) != len(ids):
        return ids
    runs: dict[str, list[int]] = {}
    for n, group in enumerate(groups):
        runs.setdefault(group, []).append(n)
    packed = list(ids)
    for members in runs.values():
        for start in range(0, len(members), MAX_PACK):
            chunk = members[start : start + MAX_PACK]
            if len(chunk) > 1:  # (a FIFO pack's partition is its group's: the id's stripe is none)
                for n, message_id in zip(chunk, pack_ids(len(chunk), 0, now_ms), strict=True):
                    packed[n] = message_id
    return packed


def _claim_lease(table: str, before: Message, after: Message, now_ms: int) -> Item:
    """A claim transaction's update of one lease of its run: as observed (`r`), Active and unexpired."""
    values = numbers(
        vis=after.visible_at, next=after.version, one=1, now=now_ms, now_s=now_ms // 1000, ver=before.version
    )
    who, named = actor_set()
    return {
        "Update": {
            "TableName": table,
            "Key": lease_item_key(before.ref),
            "UpdateExpression": f"SET v = :vis, r = :next, d = d + :one, f = if_not_exists(f, :now){who}",
            "ConditionExpression": "r = :ver AND v <= :now AND x > :now_s",
            "ExpressionAttributeValues": {**values, **named},
        }
    }


def claim_writes(table: str, run: list[Message], after: list[Message], now_ms: int) -> list[Item]:
    """A claim transaction's writes of a run's messages (as observed: `run`; as claimed: `after`): each single
    lease's, and one a pack for its entries in the run (`packs.by_pack`)."""
    stored = by_pack([m.ref for m in run])
    writes = [_claim_lease(table, run[s.places[0]], after[s.places[0]], now_ms) for s in stored if s.pack is None]
    for pack in (s for s in stored if s.pack is not None):
        sets, conditions, values = claim_entries([run[n] for n in pack.places])
        values.update(numbers(vis=after[0].visible_at, now=now_ms, now_s=now_ms // 1000, one=1))
        update = {
            "TableName": table,
            "Key": _item_key(pack),
            "UpdateExpression": "SET " + ", ".join(sets),
            "ConditionExpression": " AND ".join(["x > :now_s", *conditions]),
            "ExpressionAttributeValues": values,
        }
        writes.append({"Update": update})
    return writes


def delete_writes(table: str, leases: list[tuple[MessageRef, int]], now_ms: int, kept: bool) -> list[Item]:
    """A delete transaction's writes of held leases of one group (distinct), deleted or `kept` for rewind: each
    single lease's, one a pack for its entries (`packs.by_pack`)."""
    writes: list[Item] = []
    stored = by_pack([ref for ref, _ in leases])
    for ref, version in (leases[s.places[0]] for s in stored if s.pack is None):
        if kept:
            writes.append({"Update": keep_held_lease(table, ref, version, now_ms)})
        else:
            writes.append({"Delete": held_lease(table, ref, version, now_ms)})
    for pack in (s for s in stored if s.pack is not None):
        members = [leases[n] for n in pack.places]
        writes.append(keeping(table, members, now_ms) if kept else deletion(table, members, now_ms))
    return writes


def _item_key(stored: Stored) -> Item:
    assert stored.pack is not None
    return {"pk": {"S": stored.pack[0]}, "sk": {"S": stored.pack[1]}}


def retime_request(table: str, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> Item:
    """The UpdateItem request re-timing a held lease (a single one, or a pack's entry)."""
    if pack_of(ref) is not None:
        return retiming(table, ref, version, now_ms, visible_at)
    lease = held_lease(table, ref, version, now_ms)
    who, named = actor_set()
    lease["UpdateExpression"] = f"SET v = :vis, r = :next{who}"
    lease["ExpressionAttributeValues"].update({**numbers(vis=visible_at, next=version + 1), **named})
    return lease


def _index(lease: Item) -> int:
    """The index of a pack's entry, given as its lease (`packs.entries`)."""
    entry = entry_of(message_id_of(lease))
    assert entry is not None
    return entry.index


def positions(pack: Item, indexes: list[int]) -> list[int]:
    """The positions of entries of a FIFO pack."""
    return [MessageRef.from_key("", lease["sk"]["S"]).position for lease in entries(pack) if _index(lease) in indexes]


def dropped(packs: PackWrites, pack: Item, now_ms: int) -> list[int]:
    """A pack a scan met that holds no message to give: emptied (deleted, `PackWrites.settle`) or expired (its
    entries that are not kept removed, the pack with them if it keeps none). The positions of the messages it
    removed (none if it changed since it was read), which its group no longer stores."""
    indexes = indexes_of(pack)
    if not indexes:
        packs.settle(pack, now_ms, False)
        return []
    if (number(pack, "x") or 0) > now_ms // 1000:
        return []
    gone = [n for n in indexes if f"k{n}" not in pack]
    if not gone:
        return []  # (kept for rewind: TTL ends them)
    key = {"pk": pack["pk"], "sk": pack["sk"]}
    condition = " AND ".join(["x <= :now_s", *(f"attribute_exists(r{n}) AND attribute_not_exists(k{n})" for n in gone)])
    request = {
        "TableName": packs.table,
        "Key": key,
        "ConditionExpression": condition,
        "ExpressionAttributeValues": numbers(now_s=now_ms // 1000),
    }
    if len(gone) == len(indexes):
        done = conditional(packs.client.delete_item, **request)
    else:
        done = conditional(packs.client.update_item, **request, UpdateExpression=removed_entries(gone))
    return [] if done is None else positions(pack, gone)


def rewind_pack(packs: PackWrites, pack: Item, since_ms: int, now_ms: int) -> Iterator[tuple[str, Item]]:
    """Rewind a FIFO pack read whole, entry by entry (`PackWrites.rewind_entry`): each entry's outcome as
    `dead_letters.rewind_lease` names them, with its lease as read (`packs.entries`)."""
    if (number(pack, "x") or 0) <= now_ms // 1000:
        return
    for lease in entries(pack):
        if (number(pack, "e") or 0) < since_ms:
            yield ("in flight" if dead_letters.in_flight(lease, now_ms) else "done"), lease
        else:
            yield packs.rewind_entry(pack, _index(lease), now_ms, False) or "done", lease
