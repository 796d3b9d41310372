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
- the parts of a FIFO pack's transactions with its group item (`group_packs`), built by the same rules: the entries a
  claim takes (`claim_entries`), deleted (`deletion`), kept (`keeping`), re-timed (`retiming`);
- `settle`: a pack read with no receivable entry (its place earlier than needed: claims raced) moved to its earliest
  entry, or deleted when it holds none.
"""

from __future__ import annotations

from typing import Any

from mnsd.model.messages import Message, MessageRef
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.dead_letters import REWOUND
from mnsd.storage.dynamodb.items.layout import MOVED_ATTRIBUTE, Item, actor_set, message_of, number, visibility_set
from mnsd.storage.dynamodb.items.packs import (
    ENTRY_ATTRIBUTES,
    SIZE,
    Entry,
    entries,
    entry_of,
    indexes_of,
    pack_key,
    pack_of,
)

_KEPT = {":kept": {"BOOL": True}}


def _n(value: int) -> Item:
    return {"N": str(value)}


def _entry(message_id: str) -> Entry:
    entry = entry_of(message_id)
    if entry is None:
        raise ValueError(f"{message_id} is not a packed message")
    return entry


def _held(n: int) -> str:
    """An entry still held by the receipt handle of version `:r{n}` (hidden until later)."""
    return f"r{n} = :r{n} AND v{n} > :now"


def removed_entries(indexes: list[int]) -> str:
    return "REMOVE " + ", ".join(f"{name}{n}" for n in indexes for name in ENTRY_ATTRIBUTES)


def claim_entries(taken: list[Message]) -> tuple[list[str], list[str], Item]:
    """A claim's part per entry of one pack it takes (`taken`, as observed): the SET clauses, the conditions (its
    version as observed and receivable) and their values; `:vis`, `:now` and `:one` are the caller's."""
    sets, conditions, values = [], [], {}
    for m in taken:
        n = _entry(m.message_id).index
        who, named = actor_set(f"a{n}")
        sets += [f"v{n} = :vis", f"r{n} = :q{n}", f"d{n} = d{n} + :one", f"f{n} = if_not_exists(f{n}, :now){who}"]
        values.update(named)
        conditions.append(f"r{n} = :r{n} AND v{n} <= :now")
        values.update({f":r{n}": _n(m.version), f":q{n}": _n(m.version + 1)})
    return sets, conditions, values


def _held_entries(leases: list[tuple[MessageRef, int]], now_ms: int) -> tuple[Item, list[int], str, Item]:
    """Entries of one pack named by receipt handles: the pack's key, their indexes, the condition that each is still
    held by its handle (and the pack unexpired) and its values."""
    entries_ = [_entry(ref.message_id) for ref, _ in leases]
    indexes = [e.index for e in entries_]
    values: Item = {":now": _n(now_ms), ":now_s": _n(now_ms // 1000)}
    values.update({f":r{n}": _n(version) for n, (_, version) in zip(indexes, leases, strict=True)})
    held = " AND ".join(["x > :now_s", *(_held(n) for n in indexes)])
    return pack_key(leases[0][0], entries_[0]), indexes, held, values


def deletion(table: str, leases: list[tuple[MessageRef, int]], now_ms: int) -> Item:
    """A transaction's write deleting entries of one pack (distinct) still held by their handles: the pack when
    they are every entry of its batch, else the entries (an emptied pack is left to `PackWrites.settle`)."""
    key, indexes, held, values = _held_entries(leases, now_ms)
    request = {"TableName": table, "Key": key, "ConditionExpression": held, "ExpressionAttributeValues": values}
    if len(indexes) == _entry(leases[0][0].message_id).size:
        return {"Delete": request}
    return {"Update": {**request, "UpdateExpression": removed_entries(indexes)}}


def keeping(table: str, leases: list[tuple[MessageRef, int]], now_ms: int) -> Item:
    """A transaction's write keeping entries of one pack (distinct) for rewind, each still held by its handle:
    `k{n}` set, `v{n}` removed."""
    key, indexes, held, values = _held_entries(leases, now_ms)
    kept = ", ".join(f"k{n} = :kept" for n in indexes)
    update = f"SET {kept} REMOVE {', '.join(f'v{n}' for n in indexes)}"
    request = {"TableName": table, "Key": key, "UpdateExpression": update, "ConditionExpression": held}
    return {"Update": {**request, "ExpressionAttributeValues": {**values, **_KEPT}}}


def retiming(table: str, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> Item:
    """The UpdateItem request re-timing an entry still held by the handle of `version` (the pack's place apart)."""
    key, (n,), held, values = _held_entries([(ref, version)], now_ms)
    who, named = actor_set(f"a{n}")
    values.update({":next": _n(version + 1), ":vis": _n(visible_at), **named})
    update = f"SET v{n} = :vis, r{n} = :next{who}"
    request = {"TableName": table, "Key": key, "UpdateExpression": update, "ConditionExpression": held}
    return {**request, "ExpressionAttributeValues": values}


def messages_of(pack: Item, indexes: set[int]) -> list[Message]:
    """The messages of some entries of a pack item, in index order (bodies apart)."""
    return [message_of(lease) for lease in entries(pack) if _entry(_id(lease)).index in indexes]


def _id(lease: Item) -> str:
    return str(lease["sk"]["S"][16:])


class PackWrites:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def _update(self, key: Item, update: str, condition: str, values: Item, new: bool = False) -> Item | None:
        request: dict[str, Any] = {
            "TableName": self.table,
            "Key": key,
            "UpdateExpression": update,
            "ConditionExpression": condition,
            **({"ExpressionAttributeValues": values} if values else {}),
        }
        if new:
            request["ReturnValues"] = "ALL_NEW"
        return conditional(self.client.update_item, **request)

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
        place = min([visible_at, *(number(pack, f"v{n}") or visible_at for n in others)])
        sets, claimed, values = claim_entries(taken)
        values.update({":now": _n(now_ms), ":now_s": _n(now_ms // 1000), ":vis": _n(visible_at), ":one": _n(1)})
        conditions = ["x > :now_s", *claimed]
        conditions += [f"(attribute_not_exists(v{n}) OR v{n} >= :place)" for n in others]
        values[":place"] = _n(place)
        update = f"SET {', '.join(sets)}, {visibility_set(indexing, ':place')}"
        response = self._update(_key(pack), update, " AND ".join(conditions), values, new=True)
        if response is None:
            return []
        return messages_of(response["Attributes"], set(indexes))

    def settle(self, pack: Item, now_ms: int, indexing: bool) -> None:
        """A pack read with no entry receivable at `now_ms`: its place moved to its earliest entry's time, if every
        entry is still no earlier; deleted if it holds no entry."""
        indexes = indexes_of(pack)
        if not indexes:
            conditional(
                self.client.delete_item,
                TableName=self.table,
                Key=_key(pack),
                ConditionExpression=" AND ".join(f"attribute_not_exists(r{n})" for n in range(int(pack[SIZE]["N"]))),
            )
            return
        times = [number(pack, f"v{n}") for n in indexes if f"v{n}" in pack]
        if not times or min(t for t in times if t is not None) <= now_ms:
            return
        place = min(t for t in times if t is not None)
        others = (f"(attribute_not_exists(v{n}) OR v{n} >= :place)" for n in indexes)
        conditions = " AND ".join(["attribute_exists(x)", *others])  # (a pack deleted since is not made anew)
        self._update(_key(pack), f"SET {visibility_set(indexing, ':place')}", conditions, {":place": _n(place)})

    # --- by receipt handle ------------------------------------------------------------------------

    def delete(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """Delete entries of one pack whose leases are still the ones the handles name (see the module's
        docstring): all in one write, or, when that is refused, each alone."""
        key, indexes, held, values = _held_entries(leases, now_ms)
        if len(set(indexes)) < len(indexes):  # (a handle twice: one write each)
            return [self._delete_one(ref, version, now_ms) for ref, version in leases]
        if len(indexes) == _entry(leases[0][0].message_id).size:  # every entry of the batch: the pack goes
            deleted = conditional(
                self.client.delete_item,
                TableName=self.table,
                Key=key,
                ConditionExpression=held,
                ExpressionAttributeValues=values,
            )
            if deleted is not None:
                return [True] * len(leases)
        if len(leases) > 1:
            response = self._update(key, removed_entries(indexes), held, values, new=True)
            if response is None:
                return [self._delete_one(ref, version, now_ms) for ref, version in leases]
            self._emptied(response["Attributes"])
            return [True] * len(leases)
        return [self._delete_one(*leases[0], now_ms)]

    def _delete_one(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        key, indexes, held, values = _held_entries([(ref, version)], now_ms)
        response = self._update(key, removed_entries(indexes), held, values, new=True)
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
        request = retiming(self.table, ref, version, now_ms, visible_at)
        key, update, held = request["Key"], request["UpdateExpression"], request["ConditionExpression"]
        values = request["ExpressionAttributeValues"]
        if self._update(key, update, f"{held} AND v <= :vis", values) is not None:
            return True
        lowered = f"{update}, {visibility_set(indexing)}"
        return self._update(key, lowered, f"{held} AND v > :vis", values) is not None

    def removal(self, source: Message, now_ms: int, mark: str = "") -> Item | None:
        """A transaction's write removing an Active entry as observed (a move: dead-lettering, redrive); None for a
        message that is not packed (its lease's Delete, `dead_letters.move`, removes it). A logging queue's `mark`
        (`dead_letters.moved_mark`) stays on the pack as `t{n}`: its stream tells the move (`changes.pack_records`)."""
        if pack_of(source.ref) is None:
            return None
        n = _entry(source.message_id).index
        values = {":ver": _n(source.version), ":now": _n(now_ms), ":now_s": _n(now_ms // 1000)}
        marked = f"SET {MOVED_ATTRIBUTE}{n} = :moved " if mark else ""
        return {
            "Update": {
                "TableName": self.table,
                "Key": pack_key(source.ref, _entry(source.message_id)),
                "UpdateExpression": marked + removed_entries([n]),
                "ConditionExpression": f"r{n} = :ver AND v{n} <= :now AND x > :now_s",
                "ExpressionAttributeValues": {**values, **({":moved": {"S": mark}} if mark else {})},
            }
        }

    # --- rewind -----------------------------------------------------------------------------------

    def rewind(self, pack: Item, since_ms: int, now_ms: int, indexing: bool) -> int:
        """Rewind the entries of a pack enqueued at or after `since_ms` (the pack's enqueue time): the kept ones
        restored, the in-flight ones made receivable, each now with a new version, and the pack's place now."""
        if (number(pack, "x") or 0) <= now_ms // 1000 or (number(pack, "e") or 0) < since_ms:
            return 0
        return sum(self.rewind_entry(pack, n, now_ms, indexing) in REWOUND for n in indexes_of(pack))

    def rewind_entry(self, pack: Item, n: int, now_ms: int, indexing: bool) -> str:
        """Rewind entry `n` of a pack as read (enqueued in the rewind's span): "restored" (it was kept), "revisited"
        (it was in flight), "" (neither, or changed since it was read); the pack's place now with it."""
        kept = f"k{n}" in pack
        in_flight = not kept and (number(pack, f"v{n}") or 0) > now_ms and (number(pack, f"d{n}") or 0) > 0
        if not kept and not in_flight:
            return ""
        values = {":now": _n(now_ms), ":one": _n(1), f":r{n}": pack[f"r{n}"]}
        condition = f"attribute_exists(k{n}) AND r{n} = :r{n}" if kept else f"r{n} = :r{n} AND v{n} > :now"
        update = f"SET v{n} = :now, r{n} = r{n} + :one, {visibility_set(indexing, ':now')}"
        done = self._update(_key(pack), update + (f" REMOVE k{n}" if kept else ""), condition, values) is not None
        return ("restored" if kept else "revisited") if done else ""

    def drop_kept(self, pack: Item) -> int:
        """Forget a pack's kept entries; how many."""
        dropped = 0
        for n in indexes_of(pack):
            if f"k{n}" in pack:
                response = self._update(_key(pack), removed_entries([n]), f"attribute_exists(k{n})", {}, new=True)
                if response is not None:
                    dropped += 1
                    self._emptied(response["Attributes"])
        return dropped


def _key(item: Item) -> Item:
    return {"pk": item["pk"], "sk": item["sk"]}
