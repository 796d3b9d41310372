"""The storage contract of `MessageStore.enqueued_since` (what a new receiver copies of its queue), on every engine:
the messages of a queue incarnation enqueued in a time range, in whatever state, bodies loaded, page by page; and
the catalog's record of a queue's receivers."""

from __future__ import annotations

import dataclasses

from mnsd.control.catalog import Catalog
from mnsd.model.messages import Message, Property
from mnsd.model.queues import Queue, QueueAttributes, Receiver
from mnsd.storage import Storage
from tests.support.stored import NOW, RETENTION, message

BIG = "x" * 3000  # stored apart from its lease on DynamoDB


def walk(storage: Storage, since: int, until: int, now: int, limit: int, queue_id: str = "q1") -> list[Message]:
    """Every page from the start to the end (at most 200 pages)."""
    found: list[Message] = []
    cursor: str | None = None
    for _ in range(200):
        page, cursor = storage.messages.enqueued_since(queue_id, since, until, now, cursor, limit)
        assert len(page) <= limit
        found += page
        if cursor is None:
            return found
    raise AssertionError("the walk did not end")


def ids(messages: list[Message]) -> list[str]:
    return sorted(m.message_id for m in messages)


def test_the_messages_enqueued_in_the_range_whatever_their_state_bodies_loaded(storage):
    messages = [message(n) for n in range(1, 11)]  # enqueued at NOW + n
    messages[4].body = BIG
    messages[4].user_properties = (Property("k", "v", "STRING"),)
    delayed = message(11, delay_ms=60_000)
    storage.messages.put([*messages, delayed, message(12, queue_id="q2")])
    scan = storage.messages.scan_ready("q1", NOW + 20, 100)
    in_flight = scan.claim([m for m in scan.messages if m.message_id in ("M00003", "M00005")], 2, NOW + 20, NOW + 9000)
    assert len(in_flight) == 2
    # Enqueued at or after NOW + 3 and before NOW + 12: M00003 .. M00011 (in flight, ready, delayed alike).
    found = walk(storage, NOW + 3, NOW + 12, NOW + 30, 100)
    assert ids(found) == [f"M{n:05d}" for n in range(3, 12)]
    five = next(m for m in found if m.message_id == "M00005")
    assert (five.body, five.user_properties, five.enqueue_time) == (BIG, (Property("k", "v", "STRING"),), NOW + 5)
    assert all(m.body == f"body-{int(m.message_id[1:])}" for m in found if m.message_id != "M00005")
    eleven = next(m for m in found if m.message_id == "M00011")
    assert eleven.position == NOW + 11 + 60_000  # its place in queue order: a copy is delayed as it is


def test_pages_give_each_message_once_and_stay_within_their_queue(storage):
    storage.messages.put([message(n) for n in range(1, 48)] + [message(n, queue_id="q2") for n in range(48, 60)])
    found = walk(storage, NOW, NOW + 1000, NOW + 100, 5)
    assert ids(found) == [f"M{n:05d}" for n in range(1, 48)]
    assert ids(walk(storage, NOW, NOW + 1000, NOW + 100, 5, "q2")) == [f"M{n:05d}" for n in range(48, 60)]
    assert walk(storage, NOW, NOW + 1000, NOW + 100, 5, "q3") == []


def test_kept_messages_count_deleted_and_expired_ones_do_not(storage):
    storage.messages.put([message(n) for n in range(1, 7)])
    scan = storage.messages.scan_ready("q1", NOW + 10, 4)
    one, two, three, four = scan.claim(scan.messages, 4, NOW + 10, NOW + 9000)
    assert storage.messages.delete_keeping([(one.ref, one.version), (two.ref, two.version)], NOW + 20) == [True] * 2
    assert storage.messages.delete_many([(three.ref, three.version)], NOW + 20) == [True]
    found = walk(storage, NOW, NOW + 1000, NOW + 30, 100)
    assert ids(found) == sorted({"M00001", "M00002", "M00004", "M00005", "M00006"})
    kept = next(m for m in found if m.message_id == one.message_id)
    assert kept.body == f"body-{int(one.message_id[1:])}"
    assert walk(storage, NOW, NOW + 1000, (NOW // 1000 + RETENTION + 10) * 1000, 100) == []  # retention over


def test_a_message_kept_during_a_walk_is_still_read_once(storage):
    storage.messages.put([message(n) for n in range(1, 31)])
    first, cursor = storage.messages.enqueued_since("q1", NOW, NOW + 1000, NOW + 40, None, 10)
    assert len(first) <= 10
    scan = storage.messages.scan_ready("q1", NOW + 40, 100)
    leases = scan.claim(scan.messages, 100, NOW + 40, NOW + 9000)
    assert storage.messages.delete_keeping([(m.ref, m.version) for m in leases], NOW + 50) == [True] * 30
    rest: list[Message] = []
    while cursor is not None:
        page, cursor = storage.messages.enqueued_since("q1", NOW, NOW + 1000, NOW + 60, cursor, 10)
        rest += page
    assert sorted(ids(first) + ids(rest)) == [f"M{n:05d}" for n in range(1, 31)]


# --- the catalog: receivers on their queue's record ------------------------------------------------


def test_receivers_are_kept_on_their_queues_record_and_written_only_over_what_was_read(storage):
    catalog = Catalog(storage.meta)
    queue = Queue("A", "q", "qid1", QueueAttributes(), 10, 10)
    assert catalog.create_queue(queue) is None
    audit = Receiver("audit", "rid1", 10_500, 9, 10, visibility_timeout=60, dlq_target="", copy_cursor="")
    everything = Receiver("all", "rid2", 11_000, 11, 11, dlq_target="dead", dlq_max_receive_count=3)
    assert catalog.set_receivers(queue, (audit,))
    read = catalog.get_queue("A", "q")
    assert read is not None and (read.receivers, read.receivers_version) == ((audit,), 1)
    assert not catalog.set_receivers(queue, (everything,))  # written over a version it did not read
    assert catalog.set_receivers(read, (audit, everything))
    changed = dataclasses.replace(read, attributes=QueueAttributes(visibility_timeout=5), last_modify_time=20)
    assert catalog.update_queue(changed)  # attributes change, receivers stay
    after = catalog.get_queue("A", "q")
    assert after is not None and (after.receivers, after.receivers_version) == ((audit, everything), 2)
    assert not catalog.set_receivers(dataclasses.replace(after, queue_id="other"), ())  # another incarnation
    catalog.add_receiver_id("A", "q.audit", "rid1")
    assert catalog.queue_name("rid1") == ("A", "q.audit")
    catalog.delete_queue("A", "q")
    assert not catalog.set_receivers(after, ())
