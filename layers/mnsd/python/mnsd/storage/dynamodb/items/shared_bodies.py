"""A queue's receivers' copies sharing their original's body item on the DynamoDB message table, so a send to a
queue with receivers writes each body once.

A send stores its messages and each receiver's copy of them in one `MessageStore.put` (`mnsd.queues.arrivals`): the
copies carry the originals' content (body, properties, group) and end of retention in other partitions (each
receiver's queue incarnation). Where a batch's (or a single message's) body items would repeat those of an earlier
batch of the same put with the same content, index by index (`share`), it writes none: its lease items (its packs,
or its lease) name that body item instead, `c = "{partition} {id}"` for the item `(partition, B{id})`
(`layout.SOURCE_ATTRIBUTE`): a batch's `B{pack}`, or its messages' `B{message id}` when the batch was too large for
one (`packs.member_id` names the one of each entry), or a single message's out-of-line `B{message id}`. Readers find
it through the message's `body_md5` mark (`layout.md5_of`, `body_item` and `member_item` here, `MessageTable.load_bodies`).

The rules that keep a reference good:
- a body item is never deleted before its TTL (deletes, dead-letter moves and retention remove leases only; a queue's
  deletion leaves its items to TTL), and a reference is written only when the body item's TTL is no earlier than the
  copy's (a receiver keeps its queue's retention: the copy's end of retention is the original's, `QueueKind.copied`);
- the body items are written before any lease that names them, as every put's are (`MessageTable.put`: one
  BatchWriteItem call more for a put with body items): a lease whose body item could not be written is not written
  either, and its messages (the original's and the copies') are reported not stored;
- a reference is written only where it is cheaper: a lease is written about `LEASE_WRITES` times (put, claim,
  delete; the ready index projects no `c`), so its units grown by the reference, that many times, must stay under
  the body items' units.

Leases written before (a copy with its own body items) have no `c` and are read as ever. A copy's body is read from
its original's partition: the same units as from its own (a BatchGetItem bills by item size), one partition serving
the reads of the queue and its receivers.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from mnsd.model.messages import Message
from mnsd.storage.capacity import item_size, write_units
from mnsd.storage.dynamodb.items.layout import (
    BODY,
    Item,
    body_partition,
    lease_key,
    partition_of,
    shared_source,
    stripe_of,
)
from mnsd.storage.dynamodb.items.leases import declared, item_of, kind_of, place_of, read
from mnsd.storage.dynamodb.items.packs import entry_of, member_id, pack_key, stored_id

LEASE_WRITES = 3  # writes of a lease from send to delete (put, claim, delete); its body item's: one
Key = tuple[str, str]  # (pk, sk)


@dataclass(frozen=True)
class _Stored:
    """A batch of a put (or a single message) as its items store it."""

    id: str  # its pack's id, or the single message's
    partition: str
    content: Hashable  # its messages' content by index: equal content, equal body items
    leases: list[Key]
    bodies: list[Key]  # (none when its body is inline)


def share(messages: list[Message], items: list[Item]) -> tuple[list[Item], dict[str, str]]:
    """The items of a put (`packs.items_of`) with the body items of each batch or single message whose content an
    earlier one stores apart left out where referring to those is cheaper (see the module's docstring); and by the
    id of each such batch (its pack's) or message, the id of the one whose body items it names."""
    found = {_key(item): item for item in items}
    owners: dict[Hashable, _Stored] = {}
    referring: dict[str, str] = {}
    dropped: set[Key] = set()
    for stored in _stores(messages, found):
        if not stored.bodies:
            continue
        owner = owners.setdefault(stored.content, stored)
        if owner is stored:
            continue
        source = f"{owner.partition} {owner.id}"  # (`c`, a lease's or a pack's: its model's)
        named = {key: {**found[key], **item_of(kind_of(found[key]), c=source)} for key in stored.leases}
        if not _lasts(owner, stored, found) or not _cheaper(stored, named, found):
            continue
        found.update(named)
        dropped.update(stored.bodies)
        referring[stored.id] = owner.id
    return [found[_key(item)] for item in items if _key(item) not in dropped], referring


def _stores(messages: list[Message], found: dict[Key, Item]) -> list[_Stored]:
    """A put's batches and single messages, in the order of their first message (a queue's before its receivers')."""
    batches: dict[tuple[str, str], list[Message]] = {}
    for m in messages:
        if not m.fifo:  # (a FIFO message's store reads no reference)
            batches.setdefault((m.queue_id, stored_id(m.message_id)), []).append(m)
    return [
        _batch(members, found) if entry_of(members[0].message_id) else _single(members[0], found)
        for members in batches.values()
    ]


def _single(m: Message, found: dict[Key, Item]) -> _Stored:
    partition = partition_of(m.ref)
    body = (partition, BODY + m.message_id)
    return _Stored(m.message_id, partition, m.content, [(partition, lease_key(m.ref))], [body] if body in found else [])


def _batch(members: list[Message], found: dict[Key, Item]) -> _Stored:
    """A batch as stored: its body item (in its stripe's body partition, `packs.batch_items`, or, a FIFO run's, its
    pack's), or its messages' own beside its packs."""
    first = members[0]
    entry = entry_of(first.message_id)
    assert entry is not None
    partition = partition_of(first.ref)
    content = (entry.size, tuple(sorted((_index(m), m.content) for m in members)))
    leases = list(dict.fromkeys(_key(pack_key(m.ref, entry)) for m in members))
    for where in (body_partition(first.queue_id, stripe_of(first.message_id)), partition):
        if (where, BODY + entry.pack) in found:
            return _Stored(entry.pack, where, content, leases, [(where, BODY + entry.pack)])
    own = [(partition, BODY + m.message_id) for m in members]
    return _Stored(entry.pack, partition, content, leases, [key for key in own if key in found])


def _index(m: Message) -> int:
    entry = entry_of(m.message_id)
    assert entry is not None
    return entry.index


def _lasts(owner: _Stored, stored: _Stored, found: dict[Key, Item]) -> bool:
    """Whether the owner's body items outlive (TTL) the leases that would name them."""
    ends = [_expiry(found[key]) for key in stored.leases]
    return all(_expiry(found[key]) >= max(ends) for key in owner.bodies)


def _expiry(item: Item) -> int:
    """An item's TTL (`x`, its model's)."""
    ends: int = read(item, declared(kind_of(item))["x"])
    return ends


def _cheaper(stored: _Stored, named: dict[Key, Item], found: dict[Key, Item]) -> bool:
    grown = sum(write_units(item_size(named[key])) - write_units(item_size(found[key])) for key in stored.leases)
    return LEASE_WRITES * grown < sum(write_units(item_size(found[key])) for key in stored.bodies)


def _key(item: Item) -> Key:
    return place_of(item)


# --- reading ---------------------------------------------------------------------------------------------


def body_item(message: Message) -> Key:
    """The key of a packed message's batch body item (its own batch's, or the one its copy's pack names)."""
    entry = entry_of(message.message_id)
    assert entry is not None
    source = shared_source(message.body_md5)
    return (source[0], BODY + source[1]) if source else (partition_of(message.ref), BODY + entry.pack)


def member_item(message: Message) -> Key:
    """The key of a message's own body item (`B{message id}`: a single message's out of line, a packed one's of a
    batch too large for one), or the one its copy's lease names."""
    source = shared_source(message.body_md5)
    if source is None:
        return partition_of(message.ref), BODY + message.message_id
    partition, id_ = source
    entry = entry_of(message.message_id)
    return partition, BODY + (member_id(id_, entry.index, entry.size) if entry else id_)
