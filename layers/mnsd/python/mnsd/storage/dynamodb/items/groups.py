"""A FIFO queue's own items on the message table: its group items, its groups' homes and its group packs, as models,
and the requests that write and read them (`mnsd.storage.dynamodb.fifo` says what each holds and when it changes).

- `GroupItem`: `G{group}` in a directory partition `{queue_id}#D{d}`; its state (`n`, `q`, `c`, `k`, `p`, `x`, `i`;
  `o`, `h` on a group claimed before holds were kept per message) and its hold, one number a message in flight,
  `t_{position in base 62}` (`hold_attribute`): names no model can declare, so they are attributes made for their
  position (`hold`) and read by their prefix (`hold_of`; docs/storage-models.md).
- `HomeItem`: `#H` in the group's partition: where its group item is (`d`) and the token both carry (`i`).
- `GroupPackItem`: a batch's run of one group (`packs`: what a pack holds; `fifo.group_packs`): its place and
  expiry, and per entry n its `v{n}`, `r{n}`, `d{n}`, `f{n}`, `k{n}`, `y{n}`, `a{n}` and `t{n}` (a move's mark).
- `GroupLease`: what a group's writes say of any lease of its partition (a single lease's or a pack's expiry).

The requests (`update_request`, `put_request`, `delete_request`, `query_request`) take PynamoDB conditions and
actions and serialise them with one map of names and values each (`wire.Expression`); the calls stay the engine's.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from pynamodb.attributes import Attribute, BooleanAttribute, NumberAttribute, UnicodeAttribute
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.storage.dynamodb.items import leases
from mnsd.storage.dynamodb.items.check import problems
from mnsd.storage.dynamodb.items.layout import group_partition
from mnsd.storage.dynamodb.items.packs import ENTRY_ATTRIBUTES, MAX_PACK, is_pack_key
from mnsd.storage.dynamodb.items.wire import Expiry, Expression, Item, KeyedItem, key_of, model

GROUP = "G"  # a group item's sort key: `G{group}`
HOME = "#H"  # the sort key of a group's home item, in the group's partition (before its leases)
HOLD = "t_"  # a group item's hold: `t_{position}`, the next visible time of that message of its run in flight
_DIGITS = string.digits + string.ascii_letters
_BASE = len(_DIGITS)


class GroupItem(KeyedItem):
    """A FIFO group's item (`fifo_groups` says what each attribute holds); its hold besides (`hold_attribute`)."""

    n = NumberAttribute()  # the last position given
    q = NumberAttribute(null=True)  # messages stored
    c = NumberAttribute(null=True)  # changes of its hold
    k = NumberAttribute(null=True)  # messages deleted and kept for rewind
    p = NumberAttribute(null=True)  # paused by a rewind until
    o = NumberAttribute(null=True)  # a run claimed before holds were kept per message: how many
    h = NumberAttribute(null=True)  # ... and until when
    x = Expiry()
    i = UnicodeAttribute(null=True)  # its home's token (none on group items from before homes)


# A group item's attributes besides its key and its hold (a move is conditioned on them as read).
GROUP_STATE: tuple[Attribute[Any], ...] = tuple(
    getattr(GroupItem, name) for name in ("n", "q", "o", "h", "c", "p", "k", "x", "i")
)


class HomeItem(KeyedItem):
    """A group's home (`{queue_id}#G{group}`, `#H`): the directory partition of its group item and their token."""

    d = NumberAttribute()
    i = UnicodeAttribute()


class GroupLease(KeyedItem):
    """A lease of a group's partition (single, or a pack's entry as `packs.entries` gives it) as a group's claims and
    upkeep read and write it: its next visible time, version, dequeue count, first dequeue, actor and expiry."""

    v = NumberAttribute(null=True)
    r = NumberAttribute(null=True)
    d = NumberAttribute(null=True)
    f = NumberAttribute(null=True)
    a = UnicodeAttribute(null=True)
    x = Expiry()


# An entry's attributes by their single-lease names (`packs.ENTRY_ATTRIBUTES`), and a move's mark `t{n}`.
_ENTRY_TYPES: dict[str, type[Attribute[Any]]] = {
    "v": NumberAttribute, "r": NumberAttribute, "d": NumberAttribute, "f": NumberAttribute, "k": BooleanAttribute,
    "y": NumberAttribute, "a": UnicodeAttribute, "t": UnicodeAttribute,
}  # fmt: skip
assert set(ENTRY_ATTRIBUTES) <= set(_ENTRY_TYPES)


class _Pack(KeyedItem):
    """A pack's own attributes (`packs`): its place, enqueue time, expiry, size, group, logging, body's place."""

    v = NumberAttribute()
    e = NumberAttribute()
    x = Expiry()
    p = NumberAttribute()
    g = UnicodeAttribute()
    l = BooleanAttribute(null=True)  # noqa: E741 (the name on the wire)
    c = UnicodeAttribute(null=True)


GroupPackItem: Any = model(
    "GroupPackItem",
    _Pack,
    "A FIFO pack (`L{priority}{position}{pack}~{group}` in its group's partition): a batch's run of one group.",
    **{f"{name}{n}": kind(null=True) for n in range(MAX_PACK) for name, kind in _ENTRY_TYPES.items()},
)


def entry(name: str, n: int) -> Any:
    """A pack's attribute of its entry `n` (`v` -> `v3`)."""
    return GroupPackItem.get_attributes()[f"{name}{n}"]


# Each entry's attributes, by their single lease's names (`ENTRIES[n].r`: `r{n}`), as a standard pack's (`leases.ENTRIES`).
ENTRIES = tuple(leases.Entry(**{name: entry(name, n) for name in _ENTRY_TYPES}) for n in range(MAX_PACK))


def entry_attributes(n: int) -> list[Any]:
    """The attributes of a pack's entry `n` (`packs.ENTRY_ATTRIBUTES`)."""
    return [entry(name, n) for name in ENTRY_ATTRIBUTES]


def kept_entry(pack: Item, n: int) -> bool:
    """Whether a pack's entry `n` is kept for rewind."""
    return entry("k", n).attr_name in pack


def expiry_of(item: Item) -> int | None:
    """An item's expiry (`x`, epoch seconds), if it has one."""
    return None if "x" not in item else int(NumberAttribute().deserialize(GroupLease.x.get_value(item["x"])))


def enqueued_of(pack: Item) -> int | None:
    """A pack's enqueue time (`e`, ms), if it has one."""
    return None if "e" not in pack else number_of(GroupPackItem.e, pack)


# --- keys -------------------------------------------------------------------------------------------


def directory_partition(queue_id: str, d: int) -> str:
    return f"{queue_id}#D{d}"


def group_key(queue_id: str, group: str, d: int) -> Item:
    return key_of(GroupItem, directory_partition(queue_id, d), GROUP + group)


def home_key(queue_id: str, group: str) -> Item:
    return key_of(HomeItem, group_partition(queue_id, group), HOME)


def home_item(queue_id: str, group: str, d: int, token: str) -> Item:
    """A group's home: its group item at directory partition `d`, with `token`."""
    return HomeItem(group_partition(queue_id, group), HOME, d=d, i=token).serialize()


def home_of(item: Item) -> HomeItem:
    return HomeItem.from_raw_data(item)


def number_of(attribute: Any, item: Item) -> int:
    """A number an item (or a write's returned attributes) holds."""
    return int(attribute.deserialize(attribute.get_value(item[attribute.attr_name])))


def sort_key(item: Item) -> str:
    """An item's sort key (`sk`)."""
    return str(KeyedItem.sk.deserialize(KeyedItem.sk.get_value(item["sk"])))


def same_key(item: Item, other: Item) -> bool:
    return item["pk"] == other["pk"] and item["sk"] == other["sk"]


def item_key(item: Item) -> Item:
    """An item's primary key, as read."""
    return {"pk": item["pk"], "sk": item["sk"]}


# --- a group item's hold ----------------------------------------------------------------------------


def hold_attribute(position: int) -> str:
    """The group item's attribute holding the next visible time of its run's message at `position` (`fifo.Hold`):
    `t_` and the position in base 62 (short: a group item is read on every receive that meets it)."""
    digits = []
    while True:
        position, digit = divmod(position, _BASE)
        digits.append(_DIGITS[digit])
        if not position:
            return HOLD + "".join(reversed(digits))


def hold(position: int) -> NumberAttribute:
    """The attribute of `position`'s hold, for conditions and updates: it stores the message's next visible time
    less its position (a few digits: a position is about its send's time in ms, `held`)."""
    return NumberAttribute(attr_name=hold_attribute(position))


def held(position: int, visible_at: int) -> int:
    """What a hold attribute stores for a message at `position` visible again at `visible_at`."""
    return visible_at - position


def hold_of(item: Item) -> dict[int, int]:
    """The hold a group item records: each position's next visible time."""
    leases = {}
    for name, value in item.items():
        if name.startswith(HOLD):
            position = 0
            for digit in name[len(HOLD) :]:
                position = position * _BASE + _DIGITS.index(digit)
            leases[position] = int(NumberAttribute().deserialize(value["N"])) + position
    return leases


def group_of(item: Item) -> GroupItem:
    return GroupItem.from_raw_data(item)


def group_item(group: GroupItem, leases: Mapping[int, int]) -> Item:
    """A group item's whole item: its state and its hold (each position's next visible time)."""
    item: Item = group.serialize(null_check=False)
    for position, visible_at in leases.items():
        item[hold_attribute(position)] = {"N": NumberAttribute().serialize(held(position, visible_at))}
    return item


def moved_item(item: Item, partition: str, key: str, token: str) -> Item:
    """A group item as read (its hold with it), at another key with another home token."""
    return {**item, **GroupItem(partition, key, i=token).serialize(null_check=False)}


def model_of(item: Item) -> Any:
    """The model of a FIFO queue's own item on the message table (None for any other: a lease, a body, a stripe's)."""
    partition, key = str(item["pk"].get("S", "")), sort_key(item)
    if key.startswith(GROUP) and "#D" in partition and partition.rpartition("#D")[2].isdigit():
        return GroupItem
    if key == HOME:
        return HomeItem
    if is_pack_key(key) and "~" in key:
        return GroupPackItem
    return None


def fifo_problems(item: Item) -> list[str]:
    """What in a FIFO queue's own item its model does not declare (a group item's hold apart: each a number)."""
    found_model = model_of(item)
    if found_model is None:
        return [f"{sort_key(item)}: not a FIFO queue's own item"]
    if found_model is not GroupItem:
        return problems(found_model, item)
    found = problems(GroupItem, {name: value for name, value in item.items() if not name.startswith(HOLD)})
    holds = [name for name, value in item.items() if name.startswith(HOLD)]
    return found + [f"GroupItem.{name}: not a number" for name in holds if set(item[name]) != {"N"}]


# --- requests -----------------------------------------------------------------------------------------


def _conditioned(request: Item, expression: Expression, condition: Condition | None) -> Item:
    if condition is not None:
        request["ConditionExpression"] = expression.condition(condition)
    return {**request, **expression.arguments()}


def update_request(table: str, key: Item, actions: Sequence[Action], condition: Condition | None = None) -> Item:
    """An UpdateItem's request (alone, or a transaction's `Update`)."""
    expression = Expression()
    request = {"TableName": table, "Key": key, "UpdateExpression": expression.update(*actions)}
    return _conditioned(request, expression, condition)


def put_request(table: str, item: Item, condition: Condition | None = None) -> Item:
    """A PutItem's request (alone, or a transaction's `Put`)."""
    return _conditioned({"TableName": table, "Item": item}, Expression(), condition)


def delete_request(table: str, key: Item, condition: Condition | None = None) -> Item:
    """A DeleteItem's request (alone, or a transaction's `Delete`)."""
    return _conditioned({"TableName": table, "Key": key}, Expression(), condition)


def query_request(table: str, keys: Condition, **rest: Any) -> Item:
    """A Query's request: the key condition `keys`, and the rest as given (`Limit`, `ConsistentRead`, ...)."""
    expression = Expression()
    return {"TableName": table, "KeyConditionExpression": expression.condition(keys), **expression.arguments(), **rest}
