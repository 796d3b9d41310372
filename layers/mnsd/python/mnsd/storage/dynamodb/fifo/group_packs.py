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
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.model.messages import Message, MessageRef
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.groups import (
    ENTRIES,
    GroupLease,
    GroupPackItem,
    delete_request,
    enqueued_of,
    entry_attributes,
    expiry_of,
    item_key,
    kept_entry,
    sort_key,
    update_request,
)
from mnsd.storage.dynamodb.items.layout import Item, acted, held_request, keep_request, lease_item_key, message_id_of
from mnsd.storage.dynamodb.items.pack_writes import PackWrites, deletion, keeping, retiming
from mnsd.storage.dynamodb.items.packs import (
    MAX_PACK,
    Entry,
    Stored,
    by_pack,
    entries,
    entry_of,
    indexes_of,
    pack_ids,
    pack_of,
)
from mnsd.storage.dynamodb.items.wire import key_of


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


def _claimed(
    v: Any, r: Any, d: Any, f: Any, a: Any, before: Message, after: Message, now_ms: int
) -> tuple[Sequence[Action], Condition]:
    """A claim of one message (a lease's attributes, or a pack's entry's): its new visibility and version, counted,
    first dequeued now if never before, and who claims it (a logging queue's: `layout.acted`); if it is as
    observed (`r`) and Active."""
    actions = [v.set(after.visible_at), r.set(after.version), d.set(d + 1), f.set(f | now_ms), *acted(a)]
    return actions, (r == before.version) & (v <= now_ms)


def _claim_lease(table: str, before: Message, after: Message, now_ms: int) -> Item:
    """A claim transaction's update of one lease of its run: as observed (`r`), Active and unexpired."""
    lease = GroupLease
    actions, condition = _claimed(lease.v, lease.r, lease.d, lease.f, lease.a, before, after, now_ms)
    return {
        "Update": update_request(table, lease_item_key(before.ref), actions, condition & (lease.x > now_ms // 1000))
    }


def claim_writes(table: str, run: list[Message], after: list[Message], now_ms: int) -> list[Item]:
    """A claim transaction's writes of a run's messages (as observed: `run`; as claimed: `after`): each single
    lease's, and one a pack for its entries in the run (`packs.by_pack`)."""
    stored = by_pack([m.ref for m in run])
    writes = [_claim_lease(table, run[s.places[0]], after[s.places[0]], now_ms) for s in stored if s.pack is None]
    for pack in (s for s in stored if s.pack is not None):
        actions: list[Action] = []
        condition: Condition = GroupPackItem.x > now_ms // 1000
        for n in pack.places:
            index = _entry(run[n].message_id).index
            its = ENTRIES[index]
            v, r, d, f, a = its.v, its.r, its.d, its.f, its.a
            its_actions, its_condition = _claimed(v, r, d, f, a, run[n], after[n], now_ms)
            actions += its_actions
            condition &= its_condition
        writes.append({"Update": update_request(table, _item_key(pack), actions, condition)})
    return writes


def _entry(message_id: str) -> Entry:
    entry = entry_of(message_id)
    assert entry is not None
    return entry


def delete_writes(table: str, leases: list[tuple[MessageRef, int]], now_ms: int, kept: bool) -> list[Item]:
    """A delete transaction's writes of held leases of one group (distinct), deleted or `kept` for rewind: each
    single lease's, one a pack for its entries (`packs.by_pack`)."""
    writes: list[Item] = []
    stored = by_pack([ref for ref, _ in leases])
    for ref, version in (leases[s.places[0]] for s in stored if s.pack is None):
        if kept:
            writes.append({"Update": keep_request(table, ref, version, now_ms)})
        else:
            writes.append({"Delete": held_request(table, ref, version, now_ms)})
    for pack in (s for s in stored if s.pack is not None):
        members = [leases[n] for n in pack.places]
        writes.append(keeping(table, members, now_ms) if kept else deletion(table, members, now_ms))
    return writes


def _item_key(stored: Stored) -> Item:
    assert stored.pack is not None
    return key_of(GroupPackItem, *stored.pack)


def retime_request(table: str, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> Item:
    """The UpdateItem request re-timing a held lease (a single one, or a pack's entry)."""
    if pack_of(ref) is not None:
        return retiming(table, ref, version, now_ms, visible_at)
    actions = [GroupLease.v.set(visible_at), GroupLease.r.set(version + 1), *acted(GroupLease.a)]
    return held_request(table, ref, version, now_ms, *actions)


def _index(lease: Item) -> int:
    """The index of a pack's entry, given as its lease (`packs.entries`)."""
    return _entry(message_id_of(lease)).index


def positions(pack: Item, indexes: list[int]) -> list[int]:
    """The positions of entries of a FIFO pack."""
    return [MessageRef.from_key("", sort_key(lease)).position for lease in entries(pack) if _index(lease) in indexes]


def dropped(packs: PackWrites, pack: Item, now_ms: int) -> list[int]:
    """A pack a scan met that holds no message to give: emptied (deleted, `PackWrites.settle`) or expired (its
    entries that are not kept removed, the pack with them if it keeps none). The positions of the messages it
    removed (none if it changed since it was read), which its group no longer stores."""
    indexes = indexes_of(pack)
    if not indexes:
        packs.settle(pack, now_ms, False)
        return []
    if (expiry_of(pack) or 0) > now_ms // 1000:
        return []
    gone = [n for n in indexes if not kept_entry(pack, n)]
    if not gone:
        return []  # (kept for rewind: TTL ends them)
    condition: Condition = GroupPackItem.x <= now_ms // 1000
    for n in gone:
        condition &= ENTRIES[n].r.exists() & ENTRIES[n].k.does_not_exist()
    if len(gone) == len(indexes):
        done = conditional(packs.client.delete_item, **delete_request(packs.table, item_key(pack), condition))
    else:
        removed = [attribute.remove() for n in gone for attribute in entry_attributes(n)]
        done = conditional(packs.client.update_item, **update_request(packs.table, item_key(pack), removed, condition))
    return [] if done is None else positions(pack, gone)


def rewind_pack(packs: PackWrites, pack: Item, since_ms: int, now_ms: int) -> Iterator[tuple[str, Item]]:
    """Rewind a FIFO pack read whole, entry by entry (`PackWrites.rewind_entry`): each entry's outcome as
    `dead_letters.rewind_lease` names them, with its lease as read (`packs.entries`)."""
    if (expiry_of(pack) or 0) <= now_ms // 1000:
        return
    for lease in entries(pack):
        if (enqueued_of(pack) or 0) < since_ms:
            yield ("in flight" if dead_letters.in_flight(lease, now_ms) else "done"), lease
        else:
            yield packs.rewind_entry(pack, _index(lease), now_ms, False) or "done", lease
