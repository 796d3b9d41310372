"""The writes of packed batches (`packs`: what a pack holds, and the invariant on its place `v` / `w`): each one
conditional write of the pack, with a condition per entry it changes, so each message keeps its own visibility,
version, count and owner whatever happens to its siblings.

- claim: the entries a receive takes from one pack, one UpdateItem (each entry as observed and Active); the pack's
  place moved to the earliest of its other entries (as read) and the claimed ones' new time, on condition that no
  other entry is receivable earlier by then (a sibling given back or rewound meanwhile refuses the claim: read again);
- delete by receipt handles: the pack deleted when the handles name every entry of its batch (one DeleteItem), else
  the entries removed (one UpdateItem), the pack deleted once it holds none; a delete kept for rewind marks the entry
  kept (`k{n}`, without `v{n}`);
- a visibility change of an entry, with the pack's place lowered in the same write when the entry becomes receivable
  before it; a rewind of an entry, receivable now, the place with it;
- the parts of a pack's writes a FIFO pack's transactions with its group item (`group_packs`) take as they are, built
  by the same rules: entries deleted (`deletion`), kept (`keeping`), re-timed (`retiming`); and a claim's actions and
  conditions per entry (`claimed_entries`);
- `settle`: a pack read with no receivable entry (its place earlier than needed: claims raced) moved to its earliest
  entry, or deleted when it holds none.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.model.messages import Message, MessageRef
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.dead_letters import REWOUND
from mnsd.storage.dynamodb.items.layout import Item, acted, message_of, request, visible
from mnsd.storage.dynamodb.items.leases import ENTRIES, PackItem, key_of, place_of, read
from mnsd.storage.dynamodb.items.packs import ENTRY_ATTRIBUTES, Entry, entries, entry_of, indexes_of, pack_key, pack_of

_PACK: Any = PackItem  # (its entries' attributes: `ENTRIES`)


def _entry(message_id: str) -> Entry:
    entry = entry_of(message_id)
    if entry is None:
        raise ValueError(f"{message_id} is not a packed message")
    return entry


def _all(conditions: Iterable[Condition]) -> Condition:
    return functools.reduce(operator.and_, conditions)


def _held(n: int, version: int, now_ms: int) -> Condition:
    """Entry n still held by the receipt handle of `version` (hidden until later)."""
    return (ENTRIES[n].r == version) & (ENTRIES[n].v > now_ms)


def _unexpired(now_ms: int) -> Condition:
    return _PACK.x > now_ms // 1000


def removed(indexes: list[int]) -> list[Action]:
    """The entries' attributes removed (the entries gone from the pack)."""
    return [getattr(ENTRIES[n], name).remove() for n in indexes for name in ENTRY_ATTRIBUTES]


def claimed_entries(taken: list[Message], now_ms: int, visible_at: int) -> tuple[list[Action], list[Condition]]:
    """A claim's actions per entry of one pack it takes (`taken`, as observed): hidden till `visible_at`, a version
    more, a dequeue more, the first dequeue time kept or now, who acted; and the conditions (its version as observed
    and receivable at `now_ms`)."""
    actions: list[Action] = []
    conditions: list[Condition] = []
    for m in taken:
        entry = ENTRIES[_entry(m.message_id).index]
        actions += [
            entry.v.set(visible_at),
            entry.r.set(m.version + 1),
            entry.d.set(entry.d + 1),
            entry.f.set(entry.f | now_ms),
            *acted(entry.a),
        ]
        conditions.append((entry.r == m.version) & (entry.v <= now_ms))
    return actions, conditions


def _held_entries(leases: list[tuple[MessageRef, int]], now_ms: int) -> tuple[Item, list[int], Condition]:
    """Entries of one pack named by receipt handles: the pack's key, their indexes, and the condition that each is
    still held by its handle (and the pack unexpired)."""
    entries_ = [_entry(ref.message_id) for ref, _ in leases]
    indexes = [e.index for e in entries_]
    held = [_held(n, version, now_ms) for n, (_, version) in zip(indexes, leases, strict=True)]
    return pack_key(leases[0][0], entries_[0]), indexes, _all([_unexpired(now_ms), *held])


def deletion(table: str, leases: list[tuple[MessageRef, int]], now_ms: int) -> Item:
    """A transaction's write deleting entries of one pack (distinct) still held by their handles: the pack when
    they are every entry of its batch, else the entries (an emptied pack is left to `PackWrites.settle`)."""
    key, indexes, held = _held_entries(leases, now_ms)
    if len(indexes) == _entry(leases[0][0].message_id).size:
        return {"Delete": request(table, key, held)}
    return {"Update": request(table, key, held, *removed(indexes))}


def keeping(table: str, leases: list[tuple[MessageRef, int]], now_ms: int) -> Item:
    """A transaction's write keeping entries of one pack (distinct) for rewind, each still held by its handle:
    `k{n}` set, `v{n}` removed."""
    key, indexes, held = _held_entries(leases, now_ms)
    kept = [action for n in indexes for action in (ENTRIES[n].k.set(True), ENTRIES[n].v.remove())]
    return {"Update": request(table, key, held, *kept)}


def _retimed(ref: MessageRef, version: int, now_ms: int, visible_at: int) -> tuple[Item, list[Action], Condition]:
    """An entry's re-timing: the pack's key, the actions, the condition that the handle of `version` holds it."""
    key, (n,), held = _held_entries([(ref, version)], now_ms)
    entry = ENTRIES[n]
    return key, [entry.v.set(visible_at), entry.r.set(version + 1), *acted(entry.a)], held


def retiming(table: str, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> Item:
    """The UpdateItem request re-timing an entry still held by the handle of `version` (the pack's place apart)."""
    key, actions, held = _retimed(ref, version, now_ms, visible_at)
    return request(table, key, held, *actions)


def messages_of(pack: Item, indexes: set[int]) -> list[Message]:
    """The messages of some entries of a pack item, in index order (bodies apart)."""
    return [message_of(lease) for lease in entries(pack) if _entry(_id(lease)).index in indexes]


def _id(lease: Item) -> str:
    return place_of(lease)[1][16:]


class PackWrites:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def _update(self, key: Item, update: list[Action], condition: Condition, new: bool = False) -> Item | None:
        written = request(self.table, key, condition, *update)
        return conditional(self.client.update_item, **written, **({"ReturnValues": "ALL_NEW"} if new else {}))

    def read(self, ref: MessageRef) -> Item | None:
        """A packed message's pack, read now."""
        key = pack_key(ref, _entry(ref.message_id))
        return self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")

    # --- claims -----------------------------------------------------------------------------------

    def claim(self, pack: Item, taken: list[Message], now_ms: int, visible_at: int, indexing: bool) -> list[Message]:
        """Take `taken` (entries of `pack`, as read) in one conditional UpdateItem (see the module's docstring); the
        claimed messages, none if the pack changed under any of them."""
        indexes = {_entry(m.message_id).index: m for m in taken}
        others = [n for n in indexes_of(pack) if n not in indexes]
        place = min([visible_at, *(read(pack, ENTRIES[n].v, visible_at) for n in others)])
        actions, claimed = claimed_entries(taken, now_ms, visible_at)
        later = [ENTRIES[n].v.does_not_exist() | (ENTRIES[n].v >= place) for n in others]
        update = [*actions, *visible(place, indexing, _PACK)]
        response = self._update(key_of(pack), update, _all([_unexpired(now_ms), *claimed, *later]), new=True)
        if response is None:
            return []
        return messages_of(response["Attributes"], set(indexes))

    def settle(self, pack: Item, now_ms: int, indexing: bool) -> None:
        """A pack read with no entry receivable at `now_ms`: its place moved to its earliest entry's time, if every
        entry is still no earlier; deleted if it holds no entry."""
        indexes = indexes_of(pack)
        if not indexes:
            empty = _all(ENTRIES[n].r.does_not_exist() for n in range(read(pack, _PACK.p)))
            conditional(self.client.delete_item, **request(self.table, key_of(pack), empty))
            return
        times = [read(pack, ENTRIES[n].v) for n in indexes if ENTRIES[n].v.attr_name in pack]
        if not times or min(times) <= now_ms:
            return
        place = min(times)
        others = (ENTRIES[n].v.does_not_exist() | (ENTRIES[n].v >= place) for n in indexes)
        condition = _all([_PACK.x.exists(), *others])  # (a pack deleted since is not made anew)
        self._update(key_of(pack), visible(place, indexing, _PACK), condition)

    # --- by receipt handle ------------------------------------------------------------------------

    def delete(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """Delete entries of one pack whose leases are still the ones the handles name (see the module's
        docstring): all in one write, or, when that is refused, each alone."""
        key, indexes, held = _held_entries(leases, now_ms)
        if len(set(indexes)) < len(indexes):  # (a handle twice: one write each)
            return [self._delete_one(ref, version, now_ms) for ref, version in leases]
        if len(indexes) == _entry(leases[0][0].message_id).size:  # every entry of the batch: the pack goes
            if conditional(self.client.delete_item, **request(self.table, key, held)) is not None:
                return [True] * len(leases)
        if len(leases) > 1:
            response = self._update(key, removed(indexes), held, new=True)
            if response is None:
                return [self._delete_one(ref, version, now_ms) for ref, version in leases]
            self._emptied(response["Attributes"])
            return [True] * len(leases)
        return [self._delete_one(*leases[0], now_ms)]

    def _delete_one(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        key, indexes, held = _held_entries([(ref, version)], now_ms)
        response = self._update(key, removed(indexes), held, new=True)
        if response is None:
            return False
        self._emptied(response["Attributes"])
        return True

    def _emptied(self, pack: Item) -> None:
        if not indexes_of(pack):
            self.settle(pack, 0, False)

    def keep(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        """A delete with rewind on: the entry kept (`k{n}` set, `v{n}` removed)."""
        return (
            conditional(self.client.update_item, **keeping(self.table, [(ref, version)], now_ms)["Update"]) is not None
        )

    def retime(self, ref: MessageRef, version: int, now_ms: int, visible_at: int, indexing: bool) -> bool:
        """A visibility change of an entry still held by the handle; the pack's place lowered to the entry's new
        time when that is earlier (two conditional variants: the place already early enough, or not)."""
        key, actions, held = _retimed(ref, version, now_ms, visible_at)
        if self._update(key, actions, held & (_PACK.v <= visible_at)) is not None:
            return True
        lowered = [*actions, *visible(visible_at, indexing, _PACK)]
        return self._update(key, lowered, held & (_PACK.v > visible_at)) is not None

    def removal(self, source: Message, now_ms: int, mark: str = "") -> Item | None:
        """A transaction's write removing an Active entry as observed (a move: dead-lettering, redrive); None for a
        message that is not packed (its lease's Delete, `dead_letters.move`, removes it). A logging queue's `mark`
        (`dead_letters.moved_mark`) stays on the pack as `t{n}`: its stream tells the move (`changes.pack_records`)."""
        if pack_of(source.ref) is None:
            return None
        n = _entry(source.message_id).index
        entry = ENTRIES[n]
        active = (entry.r == source.version) & (entry.v <= now_ms) & _unexpired(now_ms)
        marked = [entry.t.set(mark)] if mark else []
        key = pack_key(source.ref, _entry(source.message_id))
        return {"Update": request(self.table, key, active, *marked, *removed([n]))}

    # --- rewind -----------------------------------------------------------------------------------

    def rewind(self, pack: Item, since_ms: int, now_ms: int, indexing: bool) -> int:
        """Rewind the entries of a pack enqueued at or after `since_ms` (the pack's enqueue time): the kept ones
        restored, the in-flight ones made receivable, each now with a new version, and the pack's place now."""
        if read(pack, _PACK.x, 0) <= now_ms // 1000 or read(pack, _PACK.e, 0) < since_ms:
            return 0
        return sum(self.rewind_entry(pack, n, now_ms, indexing) in REWOUND for n in indexes_of(pack))

    def rewind_entry(self, pack: Item, n: int, now_ms: int, indexing: bool) -> str:
        """Rewind entry `n` of a pack as read (enqueued in the rewind's span): "restored" (it was kept), "revisited"
        (it was in flight), "" (neither, or changed since it was read); the pack's place now with it."""
        entry = ENTRIES[n]
        kept = entry.k.attr_name in pack
        in_flight = not kept and read(pack, entry.v, 0) > now_ms and read(pack, entry.d, 0) > 0
        if not kept and not in_flight:
            return ""
        stored = read(pack, entry.r)
        condition = entry.k.exists() & (entry.r == stored) if kept else (entry.r == stored) & (entry.v > now_ms)
        update = [entry.v.set(now_ms), entry.r.set(entry.r + 1), *visible(now_ms, indexing, _PACK)]
        done = self._update(key_of(pack), update + ([entry.k.remove()] if kept else []), condition) is not None
        return ("restored" if kept else "revisited") if done else ""

    def drop_kept(self, pack: Item) -> int:
        """Forget a pack's kept entries; how many."""
        dropped = 0
        for n in indexes_of(pack):
            if ENTRIES[n].k.attr_name in pack:
                response = self._update(key_of(pack), removed([n]), ENTRIES[n].k.exists(), new=True)
                if response is not None:
                    dropped += 1
                    self._emptied(response["Attributes"])
        return dropped
