"""DynamoDB stream records, as a Lambda receives them, turned into change events (`mnsd.log.changes`).

Message table (NEW_AND_OLD_IMAGES): a lease's INSERT, MODIFY and REMOVE give the event of `message_change`;
body items, leases of queues that do not log (no `l`) and changes that are no event give none. A pack (`packs`: a
batch's messages in one item) gives the events of its entries, each as the change of its own lease would
(`pack_records`). Topic message table: each INSERT is a published message (`published_messages`).
"""

from __future__ import annotations

from typing import Any

from mnsd.log.changes import MessageChange, MessageEvent
from mnsd.model.topics import TopicMessagePublished
from mnsd.storage.dynamodb.items import layout, packs
from mnsd.storage.dynamodb.items.leases import EntryLease, LeaseItem, read

StreamRecord = dict[str, Any]  # one record of a DynamoDB stream event (DynamoDB JSON images)

TTL_PRINCIPAL = "dynamodb.amazonaws.com"  # who deletes an item whose TTL passed


def _body_size(image: layout.Item) -> int | None:
    size: int | None = read(image, EntryLease.y)  # (a packed message's, `packs.entries`)
    if size is not None:
        return size
    body = layout.body_of(image)
    return None if body is None else len(body.encode("utf-8"))


def message_change(record: StreamRecord) -> MessageChange | None:
    """The event one stream record of a logging lease stands for (None for anything else).

    Times: a send is stamped with its enqueue time and a first receive with its first dequeue time (both ms,
    from the item); other events with the stream record's time (DynamoDB gives seconds).
    """
    change = record["dynamodb"]
    new, old = change.get("NewImage") or {}, change.get("OldImage") or {}
    image = new or old
    if not layout.is_lease(image) or not layout.is_logging(image) or packs.is_pack(image):
        return None
    approximate = int(float(change.get("ApproximateCreationDateTime", 0)) * 1000)
    enqueue_time: int = read(image, LeaseItem.e, 0)
    first_dequeue: int | None = read(image, LeaseItem.f)
    ref = layout.ref_of(image)
    common = {
        "queue_id": ref.queue_id,
        "message_id": ref.message_id,
        "change_id": record["eventID"],
        "enqueue_time": enqueue_time,
    }
    name = record["eventName"]
    who = read(new, LeaseItem.a) or None
    if name == "INSERT":
        visible_at = read(new, LeaseItem.v) or enqueue_time
        return MessageChange(
            event=MessageEvent.SEND, time=enqueue_time, dequeue_count=0, priority=ref.priority,
            delay=max(0, visible_at - enqueue_time) // 1000, body_size=_body_size(new), access_key_id=who, **common,
        )  # fmt: skip
    count: int = read(image, LeaseItem.d, 0)
    if layout.is_moved(old):
        return None  # a lease moved away, deleted: its move was the event
    ended: dict[str, Any] = {
        "time": approximate,
        "dequeue_count": count,
        "first_dequeue_time": first_dequeue if count else None,
    }
    if layout.is_kept(old):
        # A kept lease (deleted with rewind on) restored by a rewind; dropped or expired, its delete was the event.
        restored = name == "MODIFY" and not layout.is_kept(new)
        return MessageChange(event=MessageEvent.REWIND, **ended, **common) if restored else None
    if layout.is_moved(new):  # moved away (`dead_letters.move`): '{event} {queue id} {message id}'
        event, target_queue, target_message = read(new, LeaseItem.t).split(" ", 2)
        moved: dict[str, Any] = {"target_queue_id": target_queue, "target_message_id": target_message}
        return MessageChange(event=MessageEvent(event), **ended, **moved, **common)
    if layout.is_kept(new):  # deleted with rewind on: the lease is kept in place
        return MessageChange(event=MessageEvent.DELETE, **ended, **common)
    if name == "REMOVE":
        # TTL's deletes, and a receive's of a lease it met past its retention (a delete by a receipt handle
        # needs an unexpired lease), are expiries.
        identity = record.get("userIdentity") or {}
        expires_at = read(image, LeaseItem.x)
        lapsed = expires_at is not None and approximate and expires_at <= approximate // 1000
        expired = identity.get("principalId") == TTL_PRINCIPAL or lapsed
        return MessageChange(event=MessageEvent.EXPIRE if expired else MessageEvent.DELETE, **ended, **common)
    if count > read(old, LeaseItem.d, 0):
        at = first_dequeue if count == 1 and first_dequeue is not None else approximate
        return MessageChange(
            event=MessageEvent.RECEIVE, time=at, dequeue_count=count, first_dequeue_time=first_dequeue,
            access_key_id=who, next_visible_time=read(new, LeaseItem.v), **common,
        )  # fmt: skip
    if read(new, LeaseItem.r) != read(old, LeaseItem.r):
        return MessageChange(
            event=MessageEvent.CHANGE_VISIBILITY, time=approximate, dequeue_count=count, access_key_id=who,
            next_visible_time=read(new, LeaseItem.v), **common,
        )  # fmt: skip
    return None


def pack_records(record: StreamRecord) -> list[StreamRecord]:
    """The stream record of a pack as one record of each of its entries' leases (`packs.entries`), as if each were
    stored alone: an entry added is an INSERT, one gone a REMOVE, one in both images a MODIFY; none for any other
    record."""
    change = record["dynamodb"]
    pack_before, pack_after = change.get("OldImage") or {}, change.get("NewImage") or {}
    if not (packs.is_pack(pack_before) or packs.is_pack(pack_after)):
        return []
    old, new = (_entries(pack) for pack in (pack_before, pack_after))
    records = []
    for n in sorted(old.keys() | new.keys()):
        name = "MODIFY" if n in old and n in new else "INSERT" if n in new else "REMOVE"
        after = new.get(n, {})
        marked = packs.moved_away(old[n], pack_after, n) if name == "REMOVE" else None
        if marked is not None:  # moved away (`PackWrites.removal`): as a lease marked
            name, after = "MODIFY", marked
        entry_change = {**change, "OldImage": old.get(n, {}), "NewImage": after}
        records.append({**record, "eventName": name, "eventID": f"{record['eventID']}#{n}", "dynamodb": entry_change})
    return records


def _entries(pack: layout.Item) -> dict[int, layout.Item]:
    """A pack's image as its entries' leases by index (none for no image)."""
    return {_index(lease): lease for lease in packs.entries(pack)} if pack else {}


def _index(lease: layout.Item) -> int:
    entry = packs.entry_of(layout.message_id_of(lease))
    assert entry is not None
    return entry.index


def message_changes(records: list[StreamRecord]) -> list[MessageChange]:
    """The events of a batch of the message table's stream records, in order (a pack's, its entries')."""
    each = [entry for record in records for entry in (pack_records(record) or [record])]
    return [change for change in map(message_change, each) if change is not None]


def published_messages(records: list[StreamRecord]) -> list[TopicMessagePublished]:
    """The messages a batch of the topic message table's stream records announces (its INSERTs), in order."""
    # (The item models load botocore's session: the consumer loads them with its first batch, not at its import.)
    from mnsd.storage.dynamodb.tables.topic_messages import from_item

    return [
        TopicMessagePublished(from_item(record["dynamodb"]["NewImage"]), record["dynamodb"].get("SequenceNumber", ""))
        for record in records
        if record.get("eventName") == "INSERT"
    ]
