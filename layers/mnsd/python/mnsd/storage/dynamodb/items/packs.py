"""Packed batches on the DynamoDB message table: a standard queue's batch send stored as one body item and one lease
item (a *pack*) for all its messages, so its writes are shared by up to 16 messages (the layout of single messages:
`layout`; the pack's writes: `pack_writes`).

Ids. A batch of 2 to `MAX_PACK` messages gets ids of one stripe that name their pack and their entry in it
(`pack_ids`): `{stem}-{slot}-{ms hex}-{9 digits}` as any id, the slot above `MAX_STRIPES` (a single message's names
its stripe only, `layout.stripe_of`) holding the stripe, the entry's index and the batch's size. The pack is
`{stem}-{stripe + 1}-{ms hex}-P{9 digits}` (`entry_of` reads it from any of its messages' ids; `member_id` the other
way), so a receipt handle (which carries the message's key) finds it.

Items, in the message's stripe partition (a standard queue's batch body item in its stripe's body partition,
`layout.body_partition`: it is written once, the pack at every state change of an entry, so a busy stripe's two
loads fall on two partitions; a FIFO run's beside its pack, in its group's partition):

    L{priority:02}{position:013}{pack}   the pack: per entry n (its index) v{n}, r{n}, d{n}, f{n} (and k{n} when it
                                          is kept for rewind, without v{n}): the message's own visibility, version,
                                          dequeue count and first dequeue time (y{n}: its body's size, when the
                                          queue logs); e, x (the batch's enqueue time and
                                          expiry, TTL), p (the batch's size), l (the queue logs), and `v` (`w` while
                                          the queue keeps the ready index): the pack's place, see the invariant;
                                          c: where its batch body item is, `{partition} {pack}` (in the stripe's
                                          body partition; another batch's, for a receiver's copies, `shared_bodies`)
    B{pack}                               the batch's content: `z`, its messages' bodies and properties by index,
                                          compressed together (JSON); when that would pass `BODY_LIMIT`, each
                                          message's body item `B{message id}` instead, as a single message's;
                                          none for a receiver's copies of a batch of the same put (`c`)

A batch whose messages differ in priority or delay is stored as one pack per (priority, position), each under its
own key (an entry's key is its message's: priority and position, and the pack), one body item for them all.

The invariant: **a pack's place (`v`, and `w` in the ready index) is never later than the earliest time one of its
messages is receivable**: at any time t at which an entry is receivable, `v <= t`. Writes that make an entry
receivable earlier (a visibility change, a give-back, a rewind) lower it in the same conditional write; a claim moves
it to the earliest of the other entries (as read) and its claimed ones' new times, conditioned on no other entry
being receivable earlier by then; deletes leave it (earlier than needed is safe: a receive that meets a pack with no
receivable entry moves it on, `pack_writes.PackWrites.settle`). So a receive that reads `w <= now` in the index
misses no receivable message, and each message keeps its own visibility, version, count and owner: every write of an
entry is conditioned on that entry alone (version, visibility, expiry).

A FIFO queue's batch is packed by group (`group_packs`): a pack holds one group's run, in its group's partition, its
key at the run's first position (and its group, `L{priority}{position}{pack}~{group}`), entry n at that position + n
(`pack_key`, `entries`); its place is not read (a group is read from its head).

Readers see a pack as the leases of its entries (`entries`): scans, counts, rewinds and receivers' copies read
them as they read single leases. A queue that logs its messages' events has them from the stream of its packs as of
its single leases (`changes.pack_records`: a pack's record gives its entries' events).
"""

from __future__ import annotations

import json
import secrets
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mnsd.ground import actor
from mnsd.model.messages import Message, MessageRef, Property
from mnsd.storage.dynamodb.items.layout import (
    BODY,
    LEASE,
    MAX_STRIPES,
    SORT_KEY,
    Item,
    body_attributes,
    body_partition,
    message_items,
    partition_of,
    plain,
    queue_id_of,
    stripe_of,
)
from mnsd.storage.dynamodb.items.leases import (
    ENTRIES,
    BatchBodyItem,
    BodyItem,
    LeaseItem,
    PackItem,
    item_of,
    keyed,
    place_of,
    read,
)
from mnsd.storage.dynamodb.items.leases import ENTRY_ATTRIBUTES as ENTRY_ATTRIBUTES  # (an entry's, `leases.Entry`)
from mnsd.storage.dynamodb.items.leases import MAX_PACK as MAX_PACK

BODY_LIMIT = 300 * 1024  # a batch's compressed content stored in one body item at most (DynamoDB: 400 KB an item)
PACK_MARK = "P"  # the last part of a pack's id begins with it
SIZE = "p"  # a pack's attribute: the size of its batch (its entries' ids name it)
GROUP = "g"  # a FIFO pack's attribute: its group (as a FIFO lease's)


@dataclass(frozen=True)
class Entry:
    """Where a packed message lives: its pack's id and its index there (and the size of its batch)."""

    pack: str
    index: int
    size: int


def pack_ids(count: int, stripe: int, now_ms: int) -> list[str]:
    """Ids for a batch of `count` (2 to `MAX_PACK`) messages of one stripe, packed together."""
    stem, digits = secrets.token_hex(8).upper(), secrets.randbelow(10**9)
    return [f"{stem}-{_slot(stripe, n, count)}-{now_ms:X}-{digits:09d}" for n in range(count)]


def _slot(stripe: int, index: int, size: int) -> int:
    return stripe + 1 + MAX_STRIPES * (1 + index + MAX_PACK * (size - 1))


def member_id(pack: str, index: int, size: int) -> str:
    """The id of the message at `index` of a pack of `size` (what `entry_of` reads back)."""
    stem, slot, ms, last = pack.split("-")
    return f"{stem}-{_slot(int(slot) - 1, index, size)}-{ms}-{last[len(PACK_MARK) :]}"


def entry_of(message_id: str) -> Entry | None:
    """The pack and index a packed message's id names; None for a single message's."""
    parts = message_id.split("-")
    if len(parts) != 4 or not parts[1].isdigit() or int(parts[1]) <= MAX_STRIPES:
        return None
    slot = int(parts[1]) - 1
    stripe, rest = slot % MAX_STRIPES, slot // MAX_STRIPES - 1
    return Entry(f"{parts[0]}-{stripe + 1}-{parts[2]}-{PACK_MARK}{parts[3]}", rest % MAX_PACK, rest // MAX_PACK + 1)


def pack_of(ref: MessageRef) -> tuple[str, str] | None:
    """Where a message is stored when it is packed: its pack's primary key (pk, sk); None for a single message's
    lease. "Is it packed" is decided here, from its id (`entry_of`), for every reference a caller holds."""
    entry = entry_of(ref.message_id)
    if entry is None:
        return None
    key = pack_key(ref, entry)
    return place_of(key)


@dataclass(frozen=True)
class Stored:
    """References to what one item stores (`by_pack`): their places in the references given, and the item's key when
    it is a pack (None: one single message's lease)."""

    places: list[int]
    pack: tuple[str, str] | None


def by_pack(refs: Sequence[MessageRef]) -> list[Stored]:
    """References (message refs of candidates, receipt handles, leases) grouped by the item that stores them: each
    pack's entries together (in their order), each single message alone; in the order of each item's first
    reference. The one grouping by pack of every writer of references (claims, deletes, keeps)."""
    packs: dict[tuple[str, str], list[int]] = {}
    stored: list[Stored] = []
    for n, ref in enumerate(refs):
        pack = pack_of(ref)
        if pack is None:
            stored.append(Stored([n], None))
        elif pack in packs:
            packs[pack].append(n)
        else:
            packs[pack] = [n]
            stored.append(Stored(packs[pack], pack))
    return stored


def is_pack_key(key: str) -> bool:
    """Whether a sort key is a pack's (`L{priority}{position}{pack}`, and a FIFO pack's group after `~`)."""
    return key.startswith(LEASE) and key.partition("~")[0].rsplit("-", 1)[-1].startswith(PACK_MARK)


def is_pack(item: Item) -> bool:
    return SORT_KEY in item and is_pack_key(place_of(item)[1])


def pack_key(ref: MessageRef, entry: Entry) -> Item:
    """The primary key of the pack a packed message's entry is in (a FIFO pack's: at its first entry's position)."""
    pack = MessageRef(ref.queue_id, ref.priority, ref.position - _offset(ref, entry.index), entry.pack, ref.group)
    return keyed(partition_of(ref), pack.key)


def _offset(ref: MessageRef, index: int) -> int:
    """How far an entry's position is from its pack's: a FIFO pack holds a group's run, entry n at the pack's
    position + n (its group's counter gave the run consecutive positions); a standard pack's entries share its."""
    return index if ref.group else 0


def indexes_of(item: Item) -> list[int]:
    """The entries a pack holds (kept ones included): those with a version."""
    return [n for n, entry in enumerate(ENTRIES) if entry.r.attr_name in item]


# --- writing a batch --------------------------------------------------------------------------------


def batch_items(messages: list[Message], indexed: bool) -> list[Item]:
    """The items storing a batch of packed messages (ids from `pack_ids`, one queue): its body item (or each
    message's when too large together) and a pack per (priority, position)."""
    first = messages[0]
    entry = entry_of(first.message_id)
    assert entry is not None
    partition = partition_of(first.ref)
    content = {
        str(_index(m)): [m.body or "", plain(m.user_properties), plain(m.system_properties), m.message_group_id]
        for m in messages
    }
    packed = zlib.compress(json.dumps(content, separators=(",", ":")).encode("utf-8"), 6)
    items: list[Item] = []
    expiry = max(m.expires_at for m in messages)
    source: dict[str, Any] = {}
    if len(packed) <= BODY_LIMIT:
        where = partition if first.fifo else body_partition(first.queue_id, stripe_of(first.message_id))
        items.append(item_of(BatchBodyItem, pk=where, sk=BODY + entry.pack, x=expiry, z=packed))
        source = {} if where == partition else {"c": f"{where} {entry.pack}"}
    else:
        for m in messages:
            group = {"g": m.message_group_id} if m.message_group_id else {}
            properties = {"u": plain(m.user_properties), "s": plain(m.system_properties), **group}
            body = item_of(BodyItem, pk=partition, sk=BODY + m.message_id, x=expiry, **properties)
            items.append({**body, **body_attributes(m.body or "")})
    places: dict[str, list[Message]] = {}
    for m in messages:
        places.setdefault(place_of(pack_key(m.ref, Entry(entry.pack, _index(m), entry.size)))[1], []).append(m)
    for key, members in places.items():
        earliest = min(m.visible_at for m in members)
        pack: dict[str, Any] = {
            "pk": partition,
            "sk": key,
            "v": earliest,
            **({"w": earliest} if indexed else {}),
            "e": min(m.enqueue_time for m in members),
            "x": expiry,
            "p": entry.size,
            **source,
        }
        if any(m.logging for m in members):
            pack["l"] = True
        for m in members:
            own = ENTRIES[_index(m)]
            pack.update({own.v.attr_name: m.visible_at, own.r.attr_name: m.version, own.d.attr_name: m.dequeue_count})
            if m.logging:  # (its send event tells its body's size and who sent it, `changes`)
                pack[own.y.attr_name] = len((m.body or "").encode("utf-8"))
                who = actor.current()
                if who is not None:
                    pack[own.a.attr_name] = who
        stored = item_of(PackItem, **pack)
        if first.ref.group:  # (a FIFO pack's group, as a FIFO lease's: the FIFO room's model)
            stored[GROUP] = item_of(LeaseItem, g=first.message_group_id)[GROUP]
        items.append(stored)
    return items


def _index(message: Message) -> int:
    entry = entry_of(message.message_id)
    assert entry is not None
    return entry.index


def items_of(messages: list[Message], indexed: dict[str, bool]) -> list[Item]:
    """The items of new messages: each batch of packed ids (`pack_ids`) as a batch (`batch_items`), any other message
    as a single one (`layout.message_items`); `indexed` by queue id."""
    batches: dict[tuple[str, str], list[Message]] = {}
    items: list[Item] = []
    for m in messages:
        entry = entry_of(m.message_id)
        if entry is None:
            items += message_items(m, indexed[m.queue_id])
        else:
            batches.setdefault((m.queue_id, entry.pack), []).append(m)
    for (queue_id, _), batch in batches.items():
        items += batch_items(batch, indexed[queue_id])
    return items


def stored_id(message_id: str) -> str:
    """What a message is stored as: its pack (the pack's id) when it is packed, else itself (an item's id, a pack's
    or its body item's included, names the same)."""
    entry = entry_of(message_id)
    return entry.pack if entry else message_id


def failed_messages(messages: list[Message], failed: set[str]) -> set[str]:
    """The messages not stored, of those whose items `items_of` gave, from the ids of the items not written (a pack's
    or its body item's: the pack's id)."""
    return {m.message_id for m in messages if {m.message_id, stored_id(m.message_id)} & failed}


# --- reading ----------------------------------------------------------------------------------------


def entries(pack: Item) -> list[Item]:
    """A pack read whole, as the lease items of its entries (`layout.message_of` reads them; bodies apart): each with
    the sort key of its message, its own `v`, `r`, `d`, `f`, `k`, the pack's `e`, `x`, `l`, `c`, `g`, and the pack's
    `w`."""
    partition, key = place_of(pack)
    ref = MessageRef.from_key(queue_id_of(partition), key)
    pack_id = ref.message_id
    size: int = read(pack, PackItem.p)
    shared = {name: pack[name] for name in _SHARED if name in pack}
    leases = []
    for n in indexes_of(pack):
        message_id = member_id(pack_id, n, size)
        position = ref.position + _offset(ref, n)
        lease = keyed(partition, MessageRef(ref.queue_id, ref.priority, position, message_id, ref.group).key)
        lease.update(shared)
        lease.update(_APART)
        for name, packed in _ENTRY_NAMES[n]:
            if packed in pack:
                lease[name] = pack[packed]
        leases.append(lease)
    return leases


# What a pack's entry, read as a lease, takes of the pack (its own attributes but `p`, and a FIFO pack's group), and of
# its entry n's (by the lease's name); and `o`: its body is apart.
_SHARED = ("e", "x", "w", "l", "c", GROUP)
_APART = item_of(LeaseItem, o=True)
_ENTRY_NAMES = [[(name, getattr(entry, name).attr_name) for name in ENTRY_ATTRIBUTES] for entry in ENTRIES]


def moved_away(lease: Item, pack: Item, index: int) -> Item | None:
    """Entry `index`'s lease (as `entries` reads it from the pack before) marked moved away, as a single lease is
    (`dead_letters.move`): the mark the pack after holds for the entry (`t{n}`, `pack_writes.PackWrites.removal`) as the
    lease's own `t`; None when the pack holds none for it."""
    mark = pack.get(ENTRIES[index].t.attr_name)
    return None if mark is None else {**lease, LeaseItem.t.attr_name: mark}


def unpack_content(item: Item, index: int) -> tuple[str, tuple[Property, ...], tuple[Property, ...], str] | None:
    """One message's body, user and system properties and group from a batch's body item."""
    content: dict[str, Any] = json.loads(zlib.decompress(read(item, BatchBodyItem.z)).decode("utf-8"))
    found = content.get(str(index))
    if found is None:
        return None
    body, user, system, group = found
    return body, tuple(Property(*p) for p in user), tuple(Property(*p) for p in system), group


def leases_of(items: list[Item]) -> list[Item]:
    """Lease items (read whole) with each pack's entries in its place."""
    return [lease for item in items for lease in (entries(item) if is_pack(item) else [item])]
