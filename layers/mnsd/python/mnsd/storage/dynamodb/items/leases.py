"""The message table's items of standard queues as PynamoDB models (the layout: `layout`, `packs`, `shared_bodies`):

    LeaseItem       L{priority:02}{position:013}{message id}   a single message's lease (+ its body inline)
    BodyItem        B{message id}                              a body stored apart (a single message's, with its
                                                               MD5; a packed message's of a batch too large for one
                                                               body item, with its properties and group)
    PackItem        L{priority:02}{position:013}{pack}         a packed batch's lease: its place, and per entry n
                                                               (n < `MAX_PACK`) v{n}, r{n}, d{n}, f{n}, k{n}, y{n},
                                                               a{n}, t{n} (`ENTRY_ATTRIBUTES`)
    BatchBodyItem   B{pack}                                    a packed batch's content (`z`)
    IndexEntry      the ready index's items (`ReadyIndex`: partition `pk`, sort `w`; `r`, `d`, `x` projected)

`kind_of` picks the model of an item by its key; a FIFO queue's items (its groups' partitions `{queue}#G{group}` and
directory partitions `{queue}#D{n}`) are the FIFO room's and are not among these.

The engine reads and writes them through the models and its own client (docs/storage-models.md): `item_of` writes a
record as the model declares it (names, types), `read` reads one attribute of an item, and conditions, updates and key
conditions are PynamoDB's expressions on the models' attributes (`wire.Expression`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pynamodb.attributes import (
    Attribute,
    BinaryAttribute,
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex, IncludeProjection
from pynamodb.models import Model

from mnsd.storage.dynamodb.items import check
from mnsd.storage.dynamodb.items.wire import Expiry, Item, KeyedItem, model
from mnsd.storage.dynamodb.items.wire import read as read  # (one attribute of an item, any table's)

MAX_PACK = 16  # messages a pack holds at most (a batch send's)
ENTRY_ATTRIBUTES = ("v", "r", "d", "f", "k", "y", "a")  # an entry n's attributes are these with n appended
READY_INDEX = "receivable"  # the leases of indexing queues by (pk, w): a global secondary index of the table
INDEX_ATTRIBUTES = ("r", "d", "x")  # what receives and counts read besides the keys (INCLUDE projection)


class MessageItem(KeyedItem):
    """The message table's items: `pk` a partition (a stripe's, a stripe's body partition), `sk` what it stores."""


class _Content(MessageItem):
    """A message's content where an item holds it: its body (`b` text, or `z` zlib-compressed UTF-8), its user and
    system properties ([[name, value, type], ...], written by type as the topic messages' are) and its group."""

    b = UnicodeAttribute(null=True)
    z = BinaryAttribute(null=True, legacy_encoding=False)
    u: ListAttribute[Any] = ListAttribute(null=True)
    s: ListAttribute[Any] = ListAttribute(null=True)
    g = UnicodeAttribute(null=True)


class LeaseItem(_Content):
    """A single message's lease (`layout.message_items`; `layout.LEASE_ATTRIBUTES` says what each attribute means)."""

    v = NumberAttribute(null=True)  # (none while kept for rewind)
    w = NumberAttribute(null=True)
    r = NumberAttribute()
    d = NumberAttribute()
    e = NumberAttribute()
    f = NumberAttribute(null=True)
    x = Expiry()
    id = UnicodeAttribute(null=True)  # (leases written before)
    m = UnicodeAttribute(null=True)  # (leases written before)
    o = BooleanAttribute(null=True)
    c = UnicodeAttribute(null=True)
    l = BooleanAttribute(null=True)  # noqa: E741 (the name on the wire)
    k = BooleanAttribute(null=True)
    a = UnicodeAttribute(null=True)
    t = UnicodeAttribute(null=True)


class EntryLease(LeaseItem):
    """A pack's entry read as a single lease (`packs.entries`): a lease's attributes, and `y`, its body's size (an entry
    of a logging queue's pack has it: its send event tells it, `changes`)."""

    y = NumberAttribute(null=True)


class BodyItem(_Content):
    """A body stored apart from its lease, `B{message id}`: a single message's (with its MD5), or a packed message's of a
    batch too large for one body item (with its properties and group)."""

    x = Expiry()
    m = UnicodeAttribute(null=True)


class BatchBodyItem(MessageItem):
    """A packed batch's content, `B{pack}`: its messages' bodies and properties by index, compressed together."""

    x = Expiry()
    z = BinaryAttribute(legacy_encoding=False)


# Each entry's attributes, by their single lease's name (`t{n}`: a logging queue's entry moved away, `dead_letters`).
_ENTRY_TYPES: dict[str, type[Attribute[Any]]] = {
    "v": NumberAttribute,
    "r": NumberAttribute,
    "d": NumberAttribute,
    "f": NumberAttribute,
    "k": BooleanAttribute,
    "y": NumberAttribute,
    "a": UnicodeAttribute,
    "t": UnicodeAttribute,
}


class _Pack(MessageItem):
    """A pack's own attributes (`packs`): its place `v` (`w` in the ready index), its batch's enqueue time `e`, expiry
    `x` and size `p`, `l` when the queue logs, `c` where its batch body item is."""

    v = NumberAttribute()
    w = NumberAttribute(null=True)
    e = NumberAttribute()
    x = Expiry()
    p = NumberAttribute()
    l = BooleanAttribute(null=True)  # noqa: E741 (the name on the wire)
    c = UnicodeAttribute(null=True)


PackItem: type[_Pack] = model(
    "PackItem",
    _Pack,
    "A packed batch's lease item: its own attributes and, per entry n (n < `MAX_PACK`), the entry's.",
    **{f"{name}{n}": kind(null=True) for n in range(MAX_PACK) for name, kind in _ENTRY_TYPES.items()},
)


@dataclass(frozen=True)
class Entry:
    """The attributes of a pack's entry n, by their single lease's names."""

    v: NumberAttribute
    r: NumberAttribute
    d: NumberAttribute
    f: NumberAttribute
    k: BooleanAttribute
    y: NumberAttribute
    a: UnicodeAttribute
    t: UnicodeAttribute


_PACK_ATTRIBUTES: dict[str, Any] = dict(PackItem.get_attributes())
ENTRIES = tuple(Entry(**{name: _PACK_ATTRIBUTES[f"{name}{n}"] for name in _ENTRY_TYPES}) for n in range(MAX_PACK))


class ReadyIndex(GlobalSecondaryIndex[Any]):
    """The ready index (`layout.READY_INDEX`): the leases (and packs) that carry `w`, by stripe partition and `w`."""

    class Meta:
        index_name = READY_INDEX
        projection = IncludeProjection(list(INDEX_ATTRIBUTES))

    pk = UnicodeAttribute(hash_key=True)
    w = NumberAttribute(range_key=True)


class IndexEntry(MessageItem):
    """An item of the ready index: the table's keys, the index's sort key `w`, the projected `r`, `d`, `x` (a pack's
    entry has neither `r` nor `d`: its entries' are read from the pack)."""

    ready = ReadyIndex()
    w = NumberAttribute()
    r = NumberAttribute(null=True)
    d = NumberAttribute(null=True)
    x = Expiry()


# --- records to items, items to values ------------------------------------------------------------

_DECLARED: dict[type[Model], dict[str, Attribute[Any]]] = {}


def declared(of: type[Model]) -> dict[str, Attribute[Any]]:
    """A model's attributes by their Python name (cached)."""
    found = _DECLARED.get(of)
    if found is None:
        found = _DECLARED[of] = dict(of.get_attributes())
    return found


def item_of(of: type[Model], **record: Any) -> Item:
    """The item storing `record` (by the model's attribute names; a name it does not declare: ValueError), each value
    serialised by its attribute (as `Model.serialize` does, without making an instance: a pack has 135 attributes)."""
    attributes = declared(of)
    item: Item = {}
    for name, value in record.items():
        attribute = attributes.get(name)
        if attribute is None:
            raise ValueError(f"{of.__name__} has no attribute {name!r}")
        item[attribute.attr_name] = {attribute.attr_type: attribute.serialize(value)}
    return item


def key_of(item: Item) -> Item:
    """An item's primary key, as it holds it."""
    return {
        MessageItem.pk.attr_name: item[MessageItem.pk.attr_name],
        MessageItem.sk.attr_name: item[MessageItem.sk.attr_name],
    }


def place_of(item: Item) -> tuple[str, str]:
    """An item's (partition, sort key)."""
    return read(item, MessageItem.pk), read(item, MessageItem.sk)


def keyed(partition: str, sort_key: str) -> Item:
    """The primary key (partition, sort key)."""
    return item_of(MessageItem, pk=partition, sk=sort_key)


# --- which model an item is -----------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """An item kind of the message table: its model, and whether an item (by its key: partition, sort key) is one."""

    model: type[Model]
    holds: Callable[[str, str], bool]


def _pack_key(sort_key: str) -> bool:
    return sort_key.partition("~")[0].rsplit("-", 1)[-1].startswith("P")


def _lease(partition: str, sort_key: str) -> bool:
    return sort_key.startswith("L") and not _pack_key(sort_key)


def _pack(partition: str, sort_key: str) -> bool:
    return sort_key.startswith("L") and _pack_key(sort_key)


def _batch_body(partition: str, sort_key: str) -> bool:
    return sort_key.startswith("B") and _pack_key(sort_key)


def _body(partition: str, sort_key: str) -> bool:
    return sort_key.startswith("B") and not _pack_key(sort_key)


# The standard queues' item kinds, the first that holds an item its kind. (A FIFO queue's, in its groups' and
# directory partitions, are the FIFO room's: their models are to be added here, before these.)
KINDS: list[Kind] = [
    Kind(LeaseItem, _lease),
    Kind(PackItem, _pack),
    Kind(BatchBodyItem, _batch_body),
    Kind(BodyItem, _body),
]


def kind_of(item: Item) -> type[Model]:
    """The model of a message table's item, by its key (`KINDS`)."""
    partition, sort_key = place_of(item)
    for kind in KINDS:
        if kind.holds(partition, sort_key):
            return kind.model
    raise ValueError(f"no item kind for the key ({partition!r}, {sort_key!r})")


def _properties(name: str, value: Item) -> list[str]:
    entries = value.get("L", [])
    good = all(len(e.get("L", ())) == 3 and all(set(part) == {"S"} for part in e["L"]) for e in entries)
    return [] if good else [f"{name}: not [name, value, type] lists of text"]


def problems(item: Item) -> list[str]:
    """What in a message table's item its model (`kind_of`) does not declare (nothing: it is one of its items)."""
    of = kind_of(item)
    found = check.problems(of, item)
    for name in ("u", "s"):
        if "L" in item.get(name, {}):
            found += _properties(f"{of.__name__}.{name}", item[name])
    return found
