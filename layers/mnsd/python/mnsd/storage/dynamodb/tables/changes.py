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
from mnsd.storage.dynamodb.items import images, layout, packs

StreamRecord = dict[str, Any]  # one record of a DynamoDB stream event (DynamoDB JSON images)

TTL_PRINCIPAL = "dynamodb.amazonaws.com"  # who deletes an item whose TTL passed

_number = images.number


def _text(image: layout.Item, name: str) -> str | None:
    return images.text(image, name) or None


def _body_size(image: layout.Item) -> int | None:
    if "y" in image:  # (a packed message's, `packs.entries`)
        return _number(image, "y")
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
    if not layout.is_lease(image) or layout.LOGGING_ATTRIBUTE not in image or packs.is_pack(image):
        return None
    approximate = int(float(change.get("ApproximateCreationDateTime", 0)) * 1000)
    enqueue_time = _number(image, "e") or 0
    first_dequeue = _number(image, "f")
    common = {
        "queue_id": layout.queue_id_of(images.key_text(image, layout.PARTITION_KEY)),
        "message_id": layout.message_id_of(image),
        "change_id": record["eventID"],
        "enqueue_time": enqueue_time,
    }
    name = record["eventName"]
    who = _text(new, layout.ACTOR_ATTRIBUTE)
    if name == "INSERT":
        visible_at = _number(new, "v") or enqueue_time
        return MessageChange(
            event=MessageEvent.SEND, time=enqueue_time, dequeue_count=0, priority=int(images.key_text(image, layout.SORT_KEY)[1:3]),
            delay=max(0, visible_at - enqueue_time) // 1000, body_size=_body_size(new), access_key_id=who, **common,
        )  # fmt: skip
    count = _number(image, "d") or 0
    if layout.MOVED_ATTRIBUTE in old:
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
    if layout.MOVED_ATTRIBUTE in new:  # moved away (`dead_letters.move`): '{event} {queue id} {message id}'
        event, target_queue, target_message = images.key_text(new, layout.MOVED_ATTRIBUTE).split(" ", 2)
        moved: dict[str, Any] = {"target_queue_id": target_queue, "target_message_id": target_message}
        return MessageChange(event=MessageEvent(event), **ended, **moved, **common)
    if layout.is_kept(new):  # deleted with rewind on: the lease is kept in place
        return MessageChange(event=MessageEvent.DELETE, **ended, **common)
    if name == "REMOVE":
        # TTL's deletes, and a receive's of a lease it met past its retention (a delete by a receipt handle
        # needs an unexpired lease), are expiries.
        identity = record.get("userIdentity") or {}
        expires_at = _number(image, layout.TTL_ATTRIBUTE)
        lapsed = expires_at is not None and approximate and expires_at <= approximate // 1000
        expired = identity.get("principalId") == TTL_PRINCIPAL or lapsed
        return MessageChange(event=MessageEvent.EXPIRE if expired else MessageEvent.DELETE, **ended, **common)
    if count > (_number(old, "d") or 0):
        at = first_dequeue if count == 1 and first_dequeue is not None else approximate
        return MessageChange(
            event=MessageEvent.RECEIVE, time=at, dequeue_count=count, first_dequeue_time=first_dequeue,
            access_key_id=who, next_visible_time=_number(new, "v"), **common,
        )  # fmt: skip
    if _number(new, "r") != _number(old, "r"):
        return MessageChange(
            event=MessageEvent.CHANGE_VISIBILITY, time=approximate, dequeue_count=count, access_key_id=who,
            next_visible_time=_number(new, "v"), **common,
        )  # fmt: skip
    return None


def pack_records(record: StreamRecord) -> list[StreamRecord]:
    """The stream record of a pack as one record of each of its entries' leases (`packs.entries`), as if each were
    stored alone: an entry added is an INSERT, one gone a REMOVE, one in both images a MODIFY; none for any other
    record."""
    change = record["dynamodb"]
    images = [change.get("OldImage") or {}, change.get("NewImage") or {}]
    if not any(packs.is_pack(image) for image in images):
        return []
    old, new = ({_index(lease): lease for lease in packs.entries(image)} if image else {} for image in images)
    moved = f"{layout.MOVED_ATTRIBUTE}{{}}"
    records = []
    for n in sorted(old.keys() | new.keys()):
        name = "MODIFY" if n in old and n in new else "INSERT" if n in new else "REMOVE"
        after = new.get(n, {})
        if name == "REMOVE" and moved.format(n) in images[1]:  # moved away (`PackWrites.removal`): as a lease marked
            name, after = "MODIFY", {**old[n], layout.MOVED_ATTRIBUTE: images[1][moved.format(n)]}
        entry_change = {**change, "OldImage": old.get(n, {}), "NewImage": after}
        records.append({**record, "eventName": name, "eventID": f"{record['eventID']}#{n}", "dynamodb": entry_change})
    return records


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
