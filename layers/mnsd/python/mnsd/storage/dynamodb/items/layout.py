"""The DynamoDB message-table layout, in one place: item keys, attribute names and their encodings.

Used by the DynamoDB engine (reads and writes, and the change events of its stream records of lease
items, `changes.py`), by the CDK stream filter (`infra/`), by the local runtime's exports of the embedded
engine (the same layout, so the analytics jobs read either) and by the Glue schemas (`glue_jobs/`,
tested against `LEASE_ATTRIBUTES`).

One partition per stripe of a queue incarnation: `pk = queue_id` for stripe 0 (a queue of one stripe
is one partition) and `pk = {queue_id}#{stripe}` for the others; the stripe is part of the message id
(`stripe_of`), so a receipt handle finds its message's partition. A FIFO message (a FIFO queue's) is in its
group's partition instead, `{queue_id}#G{group}` (`group_partition`; the group is part of its key), beside the
group items of `mnsd.storage.dynamodb.fifo.fifo_groups` in `{queue_id}#D{n}`. A standard queue's packed batches keep their
bodies in a partition of their stripe's own, `{queue_id}#B{stripe}` (`body_partition`, `packs`).

    L{priority:02}{position:013}{message_id}   the lease: visibility, version, counts (+ inline body)
    B{message_id}                              the body and its MD5, when lease + body would exceed 1 KB

A receiver's copy whose content another message of the same send stores apart (its original's) has no body item of
its own: its lease names that one (`SOURCE_ATTRIBUTE`, `mnsd.storage.dynamodb.items.shared_bodies`).

A lease repeats neither the message id (its sort key ends with it: `message_id_of`) nor an inline body's MD5 (computed
from the body on read, `message_of`); an out-of-line body's MD5 is kept in its body item. Leases written before
carry `id` and `m` and are read the same.

A message deleted while its queue's RewindPeriod is on stays as a *kept* lease (`kept_lease`): the
same item, re-marked in place by one conditional UpdateItem (`keeping`) that sets `k` and removes
`v` (and `w`). Without `v` no claim, delete or visibility change (all conditioned on `v`) can touch it;
lease readers skip it (`state_of` ranks it with the expired). A rewind restores `v` and removes `k`; TTL
(`x`, unchanged) ends it with its retention.

The index `READY_INDEX` (partition `pk`, sort `w`) is the ready index: a receive reads `w <= now` there. Only the
leases of a queue whose writes keep the index carry `w` (`mnsd.storage.dynamodb.placement.placement.Spread`), so a quiet queue
pays no index writes. No other item has `w` (the index stays sparse); its items carry the keys and
`INDEX_ATTRIBUTES`, never the body. An entry tells when its lease is receivable (`index_due`; the invariant and why
it holds: `docs/ready-index-writes.md`): a claim that leaves `w` where it was (no index key changes: one index write,
in place, not a delete and a put) stores with the version the time it holds the lease till (`held_version`: `r` is
projected); every other write that sets `v` sets `w` with it (`visible`) and a plain version. A receive reads
past the held entries (`stripe_reads`), counts count them Inactive (`state_of`).

Attribute names are one letter because DynamoDB bills them on every write. Each item kind is a PynamoDB model
(`leases`: `LeaseItem`, `BodyItem`, `PackItem`, `BatchBodyItem`, the ready index's `IndexEntry`), through which the
items are written and read and their conditions and updates said.
"""

from __future__ import annotations

import zlib
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.ground import actor
from mnsd.model.messages import Message, MessageRef, MessageState, Property, body_md5, lease_state
from mnsd.storage.capacity import KB, item_size
from mnsd.storage.dynamodb.items.leases import INDEX_ATTRIBUTES as INDEX_ATTRIBUTES  # (the ready index's)
from mnsd.storage.dynamodb.items.leases import READY_INDEX as READY_INDEX
from mnsd.storage.dynamodb.items.leases import (
    BodyItem,
    LeaseItem,
    item_of,
    keyed,
    place_of,
    read,
)
from mnsd.storage.dynamodb.items.wire import Expression
from mnsd.storage.ids import message_id_time

MAX_STRIPES = 1024  # the most partitions a queue's messages may spread over (`stripe_of`; `placement.Placement`)

Item = dict[str, Any]  # an item in DynamoDB JSON ({"S": ...}, {"N": ...}, ...)

LEASE = "L"
BODY = "B"
PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "x"
LOGGING_ATTRIBUTE = "l"  # present (True) on leases whose events feed the operation log
KEPT_ATTRIBUTE = "k"  # present (True) on leases deleted while rewind was on (kept, without `v`)
SOURCE_ATTRIBUTE = "c"  # on a lease or pack: its body item's place, elsewhere (`packs`, `shared_bodies`)
ACTOR_ATTRIBUTE = "a"  # on a logging queue's lease: who last sent, received or re-timed it (`mnsd.ground.actor`)
MOVED_ATTRIBUTE = "t"  # on a logging queue's lease a move took away (`dead_letters.move`): its event and target
VISIBLE_AT = "v"  # NextVisibleTime (Number); only lease items have it
INDEX_KEY = "w"  # the index's sort key: `v` again, on the leases of a queue whose writes keep the index
STRIPE_SEPARATOR = "#"
# A lease's `r` is its version, or, written by a claim that left `w` in place, version x HELD + the time (epoch ms,
# >= 1, < HELD) the claim holds it till (`held_version`): versions are counts, far below HELD.
HELD = 10**13

# Lease attributes: name -> (DynamoDB type, meaning). (The types are `leases.LeaseItem`'s.)
LEASE_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "pk": ("S", "queue incarnation id, with `#{stripe}` for stripes > 0"),
    "sk": ("S", "L{priority:02}{position:013}{message_id} (B{message_id} for an out-of-line body)"),
    "id": ("S", "message id (leases written before it was read from the sort key only)"),
    "v": ("N", "visible_at: NextVisibleTime, epoch ms (leases only)"),
    "w": ("N", "v again, the ready index's sort key: only while the queue's writes keep the index"),
    "r": ("N", "version, bumped by every receive and visibility change (x 10^13 + held till, see `held_version`)"),
    "d": ("N", "dequeue count"),
    "e": ("N", "enqueue time, epoch ms"),
    "f": ("N", "first dequeue time, epoch ms (absent until the first receive)"),
    "x": ("N", "expiry, epoch seconds (the TTL attribute)"),
    "m": ("S", "body MD5 (hex, upper case): on a body item (on leases written before, on the lease)"),
    "b": ("S", "body text"),
    "z": ("B", "body, zlib-compressed UTF-8"),
    "o": ("BOOL", "the body is stored out of line (B item)"),
    "c": ("S", "the body item is elsewhere, '{partition} {id}' for (pk, B{id}): a pack's, a receiver's copy's"),
    "u": ("L", "user properties: [[name, value, type], ...]"),
    "s": ("L", "system properties: [[name, value, type], ...]"),
    "g": ("S", "message group id"),
    "l": ("BOOL", "the queue logs this message's events"),
    "k": ("BOOL", "kept for rewind: deleted while the queue's RewindPeriod was on (the lease has no `v`)"),
    "a": ("S", "a logging queue's lease: the access key id that last sent, received or re-timed it"),
    "t": ("S", "a logging queue's lease moved away: '{event} {target queue id} {target message id}', x expired"),
}
# Receives add `f` and grow `r` and `d`: an inline item keeps this much room so it stays within 1 KB.
LEASE_GROWTH = 32
# And a logging queue's receives and visibility changes name their access key (`a`): this much more room.
ACTOR_ROOM = 1 + 128


def lease_key(ref: MessageRef) -> str:
    return ref.key  # L{priority:02}{position:013}{message_id}


def stripe_partition(queue_id: str, stripe: int) -> str:
    """The partition key of a queue's stripe: the queue id itself for stripe 0."""
    return queue_id if stripe == 0 else f"{queue_id}{STRIPE_SEPARATOR}{stripe}"


def stripe_of(message_id: str) -> int:
    """The stripe a message id names: `{16 hex}-{stripe + 1}-{ms hex}-{9 digits}` (its slot, `new_message_id`; a
    packed message's slot holds more above `MAX_STRIPES`, `packs.pack_ids`); 0 for any other id."""
    parts = message_id.split("-")
    if len(parts) != 4 or not parts[1].isdigit() or int(parts[1]) < 1:
        return 0
    return (int(parts[1]) - 1) % MAX_STRIPES


def body_partition(queue_id: str, stripe: int) -> str:
    """The partition of the batch body items of a queue's stripe (`packs`): written once and read, beside the stripe's
    leases, which every state change rewrites, so the two loads fall on two partitions."""
    return f"{queue_id}{STRIPE_SEPARATOR}B{stripe}"


def group_partition(queue_id: str, group: str) -> str:
    """The partition of a FIFO message group's items (`mnsd.storage.dynamodb.fifo.fifo_groups`)."""
    return f"{queue_id}{STRIPE_SEPARATOR}G{group}"


def partition_of(ref: MessageRef) -> str:
    """The partition key of a message's items: its group's for a FIFO message, else its stripe's."""
    if ref.group:
        return group_partition(ref.queue_id, ref.group)
    return stripe_partition(ref.queue_id, stripe_of(ref.message_id))


def lease_item_key(ref: MessageRef) -> Item:
    """The primary key of a message's lease item."""
    return keyed(partition_of(ref), lease_key(ref))


def queue_id_of(partition: str) -> str:
    """The queue incarnation a partition key belongs to (queue ids never contain the separator)."""
    return partition.split(STRIPE_SEPARATOR, 1)[0]


def is_lease(item: Item) -> bool:
    return SORT_KEY in item and place_of(item)[1].startswith(LEASE)


def visible(at: int, indexing: bool, lease: Any = LeaseItem) -> list[Action]:
    """The SET actions giving a lease (or a pack, `lease`: its model) its next visible time: `v`, and `w` with it when
    the index is kept."""
    return [lease.v.set(at), lease.w.set(at)] if indexing else [lease.v.set(at)]


def held_version(version: int, visible_at: int) -> int:
    """What a claim that leaves the lease's `w` in place stores as `r`: its version and the time it holds the lease
    till, both readable from the index entry (`version_of`, `held_until`)."""
    return version * HELD + visible_at


def version_of(item: Item) -> int:
    """A lease's version, from its `r` (plain, or with the time a claim holds it till: `held_version`)."""
    stored: int = read(item, LeaseItem.r)
    return stored // HELD if stored >= HELD else stored


def held_until(item: Item) -> int | None:
    """The time a lease is held till by a claim that left its `w` in place (`held_version`), from its `r`; None when
    its `r` is plain (its `w` is its `v`)."""
    stored: int = read(item, LeaseItem.r, 0)
    return stored % HELD if stored >= HELD else None


def index_due(item: Item) -> int | None:
    """When the lease an index entry stands for is receivable: the time a claim that left `w` in place holds it till
    (`held_until`), else its `w` (its `v`: every other write that sets `v` sets `w` with it)."""
    held = held_until(item)
    return held if held is not None else read(item, LeaseItem.w)


def version_is(version: int, stored: Any = LeaseItem.r) -> Condition:
    """The condition that a lease's version is `version` (its `r`, or `stored`, plain or with a time:
    `held_version`)."""
    if version < 1:  # (a claim's version is at least 1: a version 0 is always plain)
        return stored == version
    return (stored == version) | stored.between(version * HELD + 1, version * HELD + HELD - 1)


def acted(attribute: Any = LeaseItem.a) -> list[Action]:
    """The access key acting on a logging queue as an action on `attribute` (a lease's `a`, a pack entry's `a{n}`):
    "" when no key is (a call the wait tier coalesced: the key of an earlier write must not stand for it); none for
    a queue that does not log (it pays no byte for it)."""
    return [attribute.set(actor.current() or "")] if actor.is_recording() else []


def body_attributes(body: str) -> Item:
    raw = body.encode("utf-8")
    packed = zlib.compress(raw, 6)
    return item_of(BodyItem, z=packed) if len(packed) < len(raw) else item_of(BodyItem, b=body)


def body_of(item: Item) -> str | None:
    packed = read(item, BodyItem.z)
    if packed is not None:
        return zlib.decompress(packed).decode("utf-8")
    text: str | None = read(item, BodyItem.b)
    return text


def plain(properties: tuple[Property, ...]) -> list[list[str]]:
    """Properties as a lease's `u` or `s` holds them: [[name, value, type], ...]."""
    return [[p.name, p.value, p.type] for p in properties]


def properties_of(item: Item, attribute: Any = LeaseItem.u) -> tuple[Property, ...]:
    """The properties an item holds in `attribute` (`u` or `s`)."""
    return tuple(Property(*entry) for entry in read(item, attribute, ()))


def state_of(item: Item, now_ms: int) -> MessageState:
    """The state of a lease item at `now_ms` (the rule of `mnsd.model.messages.lease_state`).

    A lease always has `v`, `d` and `x` (an index item `index_due` for `v`); should one lack them, the message counts
    as receivable since its enqueue (no `v`), never received (no `d`) and never expiring (no `x`).
    """
    if LeaseItem.k.attr_name in item:
        return MessageState.EXPIRED  # deleted, kept for rewind: never returned nor counted
    visible_at = read(item, LeaseItem.v) if LeaseItem.v.attr_name in item else index_due(item)
    expires_at = read(item, LeaseItem.x)
    return lease_state(
        read(item, LeaseItem.e, 0) if visible_at is None else visible_at,
        read(item, LeaseItem.d, 0),
        now_ms // 1000 + 1 if expires_at is None else expires_at,
        now_ms,
    )


def message_items(message: Message, indexed: bool = False) -> list[Item]:
    """The items storing a message: its lease (with `w` when its queue's writes keep the ready index: `indexed`),
    and its body item when the body does not fit inline."""
    ref = message.ref
    lease: dict[str, Any] = {
        "pk": partition_of(ref),
        "sk": lease_key(ref),
        "v": message.visible_at,
        **({"w": message.visible_at} if indexed else {}),
        "r": message.version,
        "d": message.dequeue_count,
        "e": message.enqueue_time,
        "x": message.expires_at,
    }
    held = {  # (each only when it holds something)
        "f": message.first_dequeue_time if message.dequeue_count else None,
        "u": plain(message.user_properties) or None,
        "s": plain(message.system_properties) or None,
        "g": message.message_group_id or None,
    }
    lease.update({name: value for name, value in held.items() if value is not None})
    room = LEASE_GROWTH
    if message.logging:
        lease["l"] = True
        room += ACTOR_ROOM
        who = actor.current()
        if who is not None:
            lease["a"] = who
    stored = item_of(LeaseItem, **lease)
    body = body_attributes(message.body or "")
    if item_size(stored) + item_size(body) + room <= KB:
        return [{**stored, **body}]
    body_item = item_of(
        BodyItem, pk=lease["pk"], sk=BODY + message.message_id, x=message.expires_at, m=message.body_md5
    )
    return [{**body_item, **body}, {**stored, **item_of(LeaseItem, o=True)}]


def enqueued_at(item: Item) -> int | None:
    """When a lease's message was enqueued: its `e`; for an index item (which does not project it), the time its
    message id was made, the same but for a receiver's copy of a message sent before the receiver was created (the
    copy's id is made when it is copied)."""
    enqueued: int | None = read(item, LeaseItem.e)
    if enqueued is not None:
        return enqueued
    partition, key = place_of(item)
    return message_id_time(MessageRef.from_key(queue_id_of(partition), key).message_id)


def is_kept(item: Item) -> bool:
    return LeaseItem.k.attr_name in item


def is_logging(item: Item) -> bool:
    """Whether a lease is a logging queue's (its events feed the operation log)."""
    return LeaseItem.l.attr_name in item


def is_moved(item: Item) -> bool:
    """Whether a logging queue's lease was moved away (`dead_letters.move`; its mark: `MOVED_ATTRIBUTE`)."""
    return LeaseItem.t.attr_name in item


def kept_lease(message: Message) -> Item:
    """The lease item of a message deleted while rewind was on: `k` set, no `v` (what `keeping` leaves)."""
    lease = {k: v for k, v in message_items(message)[-1].items() if k not in (VISIBLE_AT, INDEX_KEY)}
    return {**lease, **item_of(LeaseItem, k=True)}


def keeping() -> list[Action]:
    """A delete with rewind on: the lease re-marked in place (one write, the sort key kept): `k` set, `v` and `w`
    removed."""
    return [LeaseItem.k.set(True), LeaseItem.v.remove(), LeaseItem.w.remove()]


def request(table: str, key: Item, condition: Condition | None = None, *update: Action) -> Item:
    """A write's request: the item's key, its condition and its update (if any), their names and values."""
    expression = Expression()
    found: Item = {"TableName": table, "Key": key}
    if update:
        found["UpdateExpression"] = expression.update(*update)
    if condition is not None:
        found["ConditionExpression"] = expression.condition(condition)
    return {**found, **expression.arguments()}


def held(version: int, now_ms: int) -> Condition:
    """A lease still held by the receipt handle that names `version` (hidden until a later time, unexpired)."""
    return version_is(version) & (LeaseItem.v > now_ms) & (LeaseItem.x > now_ms // 1000)


def held_request(table: str, ref: MessageRef, version: int, now_ms: int, *update: Action) -> Item:
    """A write's request on a lease still held by the receipt handle that names `version` (`held`): its key, its
    condition and `update`."""
    return request(table, lease_item_key(ref), held(version, now_ms), *update)


def keep_request(table: str, ref: MessageRef, version: int, now_ms: int) -> Item:
    """The UpdateItem that keeps a held lease for rewind instead of deleting it (`keeping`)."""
    return held_request(table, ref, version, now_ms, *keeping())


def restored(now_ms: int, version: int, indexing: bool) -> list[Action]:
    """A rewind of a kept lease: receivable at `now_ms` again, with a new version (old receipt handles fail)."""
    return [*visible(now_ms, indexing), LeaseItem.r.set(version), LeaseItem.k.remove()]


def revisited(now_ms: int, version: int, indexing: bool) -> list[Action]:
    """A rewind of an in-flight lease: receivable at `now_ms`, new version."""
    return [*visible(now_ms, indexing), LeaseItem.r.set(version)]


def ref_of(lease: Item) -> MessageRef:
    """The message a lease item stands for (its queue, priority, position, id and group), from its key."""
    partition, key = place_of(lease)
    return MessageRef.from_key(queue_id_of(partition), key)


def message_id_of(item: Item) -> str:
    """The message id of a lease (from its sort key) or a body item."""
    partition, key = place_of(item)
    if key.startswith(LEASE):
        return MessageRef.from_key(queue_id_of(partition), key).message_id
    return key[len(BODY) :]


# The `body_md5` of a message read from a lease whose body is out of line (its MD5 with it): `load_bodies` reads both.
# A copy's that shares another message's body item: followed by the lease's `SOURCE_ATTRIBUTE` (`shared_source`).
BODY_APART = "?"


def md5_of(item: Item, body: str | None) -> str:
    """A message's body MD5: kept in the item (a body item; a lease written before), else computed from its body
    (`BODY_APART` when the body is in a body item not read yet, with the item's place when it is another message's)."""
    kept: str | None = read(item, BodyItem.m)
    if kept is not None:
        return kept
    if body is not None:
        return body_md5(body)
    source = read(item, LeaseItem.c)
    return BODY_APART + source if source is not None else BODY_APART


def is_apart(md5: str) -> bool:
    """Whether a message's `body_md5` says its body is in a body item not read yet (`md5_of`)."""
    return md5.startswith(BODY_APART)


def shared_source(md5: str) -> tuple[str, str] | None:
    """(partition, id) of the body item `B{id}` a message read from a copy's lease shares (`md5_of`), else None."""
    if not is_apart(md5) or md5 == BODY_APART:
        return None
    partition, id_ = md5[len(BODY_APART) :].split(" ", 1)
    return partition, id_


def message_of(item: Item) -> Message:
    """The message a lease item stores (body None when it is stored out of line)."""
    partition, key = place_of(item)
    ref = MessageRef.from_key(queue_id_of(partition), key)
    enqueue_time: int = read(item, LeaseItem.e)
    body = body_of(item)
    return Message(
        queue_id=ref.queue_id,
        message_id=ref.message_id,
        priority=ref.priority,
        position=ref.position,
        visible_at=read(item, LeaseItem.v),
        version=version_of(item),
        dequeue_count=read(item, LeaseItem.d),
        enqueue_time=enqueue_time,
        first_dequeue_time=read(item, LeaseItem.f, enqueue_time),
        expires_at=read(item, LeaseItem.x),
        body_md5=md5_of(item, body),
        body=body,
        user_properties=properties_of(item, LeaseItem.u),
        system_properties=properties_of(item, LeaseItem.s),
        message_group_id=read(item, LeaseItem.g, ""),
        logging=LeaseItem.l.attr_name in item,
        fifo=bool(ref.group),  # (a FIFO message's key names its group)
    )


def candidate_of(item: Item) -> Message:
    """A lease as the ready index holds it: its place and state (visibility, version, count, expiry) but not
    its content, which `body_md5 == ""` marks as not loaded (the store's `load_bodies` reads it)."""
    partition, key = place_of(item)
    ref = MessageRef.from_key(queue_id_of(partition), key)
    return Message(
        queue_id=ref.queue_id,
        message_id=ref.message_id,
        priority=ref.priority,
        position=ref.position,
        visible_at=index_due(item) or 0,
        version=version_of(item),
        dequeue_count=read(item, LeaseItem.d),
        enqueue_time=0,
        first_dequeue_time=0,
        expires_at=read(item, LeaseItem.x),
        body_md5="",
    )
