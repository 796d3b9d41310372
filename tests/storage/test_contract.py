"""The storage contract: every engine (DynamoDB on moto, SQLite on a file and in memory) keeps the same semantics."""

from __future__ import annotations

import dataclasses

import pytest

from mnsd.log.metrics import LogEvent, LogRead
from mnsd.log.oplog import LogRecord
from mnsd.model.messages import Content, Message, MessageState, Property, body_md5
from mnsd.model.queues import MAX_RETENTION_SECONDS, QueueCounts
from mnsd.model.topics import TOPIC_RETENTION_SECONDS, TopicMessage
from tests.storage.engines import claim_one, end_lifetimes, racing_owners, reads_index
from tests.support.stored import NOW, RETENTION, message, ready_ids

# --- messages -----------------------------------------------------------------------------------


def test_ready_messages_come_by_priority_then_time(storage):
    storage.messages.put(
        [message(1, priority=8), message(2, priority=3), message(3, priority=8), message(4, priority=16)]
    )
    assert ready_ids(storage, NOW + 10) == ["M00002", "M00001", "M00003", "M00004"]


def test_paging_returns_the_head_of_the_queue(storage):
    storage.messages.put([message(n, priority=1 + n % 3) for n in range(60)])
    if reads_index(storage):
        # Priority is best effort there: the page is the longest-visible messages, in priority order.
        expected = sorted((1 + n % 3, n) for n in range(10))
    else:
        expected = sorted((1 + n % 3, n) for n in range(60))[:10]
    assert ready_ids(storage, NOW + 100, wanted=10) == [f"M{n:05d}" for _, n in expected]


def test_a_delayed_message_is_not_ready_until_its_time(storage):
    storage.messages.put([message(1, delay_ms=5000)])
    scan = storage.messages.scan_ready("q1", NOW + 10, 10)
    assert scan.messages == []
    assert scan.next_visible_at == NOW + 1 + 5000
    assert storage.messages.counts("q1", NOW + 10) == QueueCounts(0, 0, 1)
    assert ready_ids(storage, NOW + 5001) == ["M00001"]


def test_a_claim_applies_the_received_rule_and_hides_the_message(storage):
    original = message(1, body="hello", priority=5)
    original.user_properties = (Property("k", "v", "STRING"),)
    storage.messages.put([original])
    (seen,) = storage.messages.peek_ready("q1", NOW + 10, 10)
    claimed = claim_one(storage.messages, seen, NOW + 10, NOW + 30_010)
    assert claimed is not None
    assert (claimed.version, claimed.dequeue_count, claimed.first_dequeue_time) == (1, 1, NOW + 10)
    assert claimed.visible_at == NOW + 30_010
    assert claimed.user_properties == (Property("k", "v", "STRING"),)
    assert claimed.state_at(NOW + 10) is MessageState.INACTIVE
    assert ready_ids(storage, NOW + 20) == []
    assert storage.messages.counts("q1", NOW + 20) == QueueCounts(0, 1, 0)
    # Visible again: a second receive counts, keeps the first dequeue time.
    (again,) = storage.messages.peek_ready("q1", NOW + 30_010, 10)
    second = claim_one(storage.messages, again, NOW + 30_010, NOW + 60_000)
    assert second is not None
    assert (second.version, second.dequeue_count, second.first_dequeue_time) == (2, 2, NOW + 10)


def test_a_stale_claim_fails(storage):
    storage.messages.put([message(1)])
    (seen,) = storage.messages.peek_ready("q1", NOW + 10, 10)
    assert claim_one(storage.messages, seen, NOW + 10, NOW + 1000) is not None
    assert claim_one(storage.messages, seen, NOW + 10, NOW + 1000) is None  # same observed version
    assert claim_one(storage.messages, seen, NOW + 2000, NOW + 3000) is None  # visible again, but version moved


def test_delete_needs_the_current_version_while_hidden(storage):
    storage.messages.put([message(1), message(2)])
    first, second = storage.messages.peek_ready("q1", NOW + 10, 10)
    one = claim_one(storage.messages, first, NOW + 10, NOW + 1000)
    two = claim_one(storage.messages, second, NOW + 10, NOW + 1000)
    assert one is not None and two is not None
    assert not storage.messages.delete_many([(one.ref, 0)], NOW + 20)[0]  # an older handle
    assert storage.messages.delete_many([(one.ref, 1)], NOW + 20)[0]
    assert not storage.messages.delete_many([(one.ref, 1)], NOW + 20)[0]  # single use
    assert not storage.messages.delete_many([(two.ref, 1)], NOW + 1000)[0]  # visible again: the handle is dead
    assert ready_ids(storage, NOW + 1000) == ["M00002"]


def test_change_visibility_retimes_and_renews_the_lease(storage):
    storage.messages.put([message(1)])
    (seen,) = storage.messages.peek_ready("q1", NOW + 10, 10)
    claimed = claim_one(storage.messages, seen, NOW + 10, NOW + 1000)
    assert claimed is not None
    assert storage.messages.change_visibility(claimed.ref, 1, NOW + 20, NOW + 60_000)
    assert not storage.messages.change_visibility(claimed.ref, 1, NOW + 20, NOW + 60_000)  # old handle
    assert ready_ids(storage, NOW + 5000) == []  # the first timeout passed, the new one holds
    assert storage.messages.delete_many([(claimed.ref, 2)], NOW + 5000)[0]


def test_change_visibility_of_a_delayed_message(storage):
    storage.messages.put([message(1, delay_ms=60_000)])
    ref = message(1, delay_ms=60_000).ref
    assert storage.messages.change_visibility(ref, 0, NOW + 10, NOW + 100)
    assert ready_ids(storage, NOW + 100) == ["M00001"]


def test_expired_messages_are_neither_returned_claimed_nor_counted(storage):
    storage.messages.put([message(1), message(2, delay_ms=10_000)])
    (seen,) = storage.messages.peek_ready("q1", NOW + 10, 10)
    after = (NOW // 1000 + RETENTION + 1) * 1000
    assert ready_ids(storage, after) == []
    assert claim_one(storage.messages, seen, after, after + 1000) is None
    assert storage.messages.counts("q1", after) == QueueCounts(0, 0, 0)


def test_counts(storage):
    storage.messages.put([message(n) for n in range(5)] + [message(10 + n, delay_ms=9000) for n in range(3)])
    for seen in storage.messages.peek_ready("q1", NOW + 100, 2):
        assert claim_one(storage.messages, seen, NOW + 100, NOW + 5000) is not None
    assert storage.messages.counts("q1", NOW + 100) == QueueCounts(3, 2, 3)


def test_incarnations_do_not_see_each_other(storage):
    storage.messages.put([message(1, queue_id="old"), message(2, queue_id="new")])
    assert ready_ids(storage, NOW + 10, queue_id="new") == ["M00002"]
    assert storage.messages.counts("old", NOW + 10) == QueueCounts(1, 0, 0)
    (seen,) = storage.messages.peek_ready("old", NOW + 10, 10)
    claimed = claim_one(storage.messages, seen, NOW + 10, NOW + 1000)
    assert claimed is not None
    other = message(1, queue_id="new").ref
    assert not storage.messages.delete_many([(other, 1)], NOW + 20)[0]


def test_large_bodies_and_properties_round_trip(storage):
    big = "x" * 3000 + "".join(chr(0x4E00 + i) for i in range(2000))
    original = message(1, body=big)
    original.system_properties = (Property("DedupId", "a", "STRING"),)
    original.message_group_id = "group"
    storage.messages.put([original])
    (seen,) = storage.messages.peek_ready("q1", NOW + 10, 10)
    claimed = claim_one(storage.messages, seen, NOW + 10, NOW + 1000)
    assert claimed is not None
    storage.messages.load_bodies([claimed])
    assert claimed.body == big
    assert claimed.body_md5 == body_md5(big)
    assert claimed.system_properties == (Property("DedupId", "a", "STRING"),)
    assert claimed.message_group_id == "group"


def test_racing_consumers_each_message_has_one_owner(storage):
    storage.messages.put([message(n, priority=1 + n % 4) for n in range(48)])
    owners = racing_owners(storage, "q1", 8, 8, NOW + 100, NOW + 60_000)
    assert sorted(owners) == [f"M{n:05d}" for n in range(48)]
    assert all(len(workers) == 1 for workers in owners.values()), owners
    assert storage.messages.counts("q1", NOW + 100) == QueueCounts(0, 48, 0)


# --- control-plane records ----------------------------------------------------------------------


def test_meta_create_get_update_delete(storage):
    # (The fields are a queue record's: the DynamoDB engine stores the fields its item models declare, and no other.)
    meta = storage.meta
    assert meta.create("a#queue", "q", {"queue_id": "1", "delay_seconds": 5, "logging_enabled": True}) is None
    assert meta.create("a#queue", "q", {"queue_id": "2"}) == {
        "queue_id": "1",
        "delay_seconds": 5,
        "logging_enabled": True,
    }
    assert meta.get("a#queue", "q") == {"queue_id": "1", "delay_seconds": 5, "logging_enabled": True}
    assert meta.get("b#queue", "q") is None
    assert meta.update("a#queue", "q", {"delay_seconds": 6})
    assert meta.get("a#queue", "q") == {"queue_id": "1", "delay_seconds": 6, "logging_enabled": True}
    assert not meta.update("a#queue", "missing", {"delay_seconds": 1})
    meta.put("a#queue", "p", {"queue_id": "3"})
    assert meta.count("a#queue") == 2
    assert meta.delete("a#queue", "q") == {"queue_id": "1", "delay_seconds": 6, "logging_enabled": True}
    assert meta.delete("a#queue", "q") is None
    assert meta.count("a#queue") == 1


def test_meta_list_with_prefix_and_pages(storage):
    for name in ["a1", "a2", "a3", "b1", "a4"]:
        storage.meta.put("acct#topic", name, {"topic_id": name})
    storage.meta.put("other#topic", "a0", {"topic_id": "a0"})
    page, more = storage.meta.list("acct#topic", "a", 2, None)
    assert [n for n, _ in page] == ["a1", "a2"] and more
    page, more = storage.meta.list("acct#topic", "a", 2, "a2")
    assert [n for n, _ in page] == ["a3", "a4"] and not more
    page, more = storage.meta.list("acct#topic", "", 10, None)
    assert [n for n, _ in page] == ["a1", "a2", "a3", "a4", "b1"] and not more
    assert page[0][1] == {"topic_id": "a1"}


# --- topic messages and the operation log -------------------------------------------------------


def topic_message(n: int, published: int = NOW) -> TopicMessage:
    return TopicMessage(
        account_id="a",
        topic_name="t",
        topic_id="t1",
        message_id=f"T{n}",
        body=f"tb{n}",
        tag="tag",
        publish_time=published,
        direct_mail={"Subject": "s"},
        user_properties=(Property("k", "v", "STRING"),),
        logging_enabled=True,
    )


def test_topic_messages_within_retention(storage):
    storage.topic_messages.put(topic_message(1))
    storage.topic_messages.put(topic_message(2))
    assert storage.topic_messages.get("t1", "T1", NOW) == topic_message(1)
    assert storage.topic_messages.get("t2", "T1", NOW) is None
    assert storage.topic_messages.count("t1", NOW) == 2
    later = NOW + (TOPIC_RETENTION_SECONDS + 1) * 1000
    assert storage.topic_messages.get("t1", "T1", later) is None
    assert storage.topic_messages.count("t1", later) == 0


@pytest.mark.parametrize("chosen", [True, False, None])
def test_a_topic_message_keeps_its_topics_metrics_choice(storage, chosen):
    message = dataclasses.replace(topic_message(1), metrics_enabled=chosen)
    storage.topic_messages.put(message)
    assert storage.topic_messages.get("t1", "T1", NOW) == message


def test_operation_log_writes_are_idempotent(storage):
    record = LogRecord("a", "queue", "q", "send", NOW, "M1", "event-1", enqueue_time=NOW)
    storage.log.write([record])
    storage.log.write([record])
    read = storage.log.read("a", "queue", "q", NOW, NOW, 10)
    assert read == LogRead([LogEvent(NOW, "send", "M1")], truncated=False)


def test_a_messages_history_is_its_records_of_its_queue_only_each_event_once(storage):
    def record(event: str, time: int, message_id: str, resource: str = "q", **fields) -> LogRecord:
        return LogRecord("a", "queue", resource, event, time, message_id, f"{event}-{time}-{message_id}", **fields)

    mine = [
        record("send", NOW, "M1", priority=8),
        record("receive", NOW + 5, "M1", dequeue_count=1, access_key_id="AK1"),
        record("dead_letter", NOW + 9, "M1", dequeue_count=2, target_queue="dlq", target_message_id="D1"),
    ]
    others = [record("send", NOW + 1, "M2"), record("send", NOW + 2, "M1", resource="other")]
    storage.log.write([*mine, *others])
    storage.log.write(mine[1:2])  # (written twice)
    storage.log.write([LogRecord("b", "queue", "q", "send", NOW, "M1", "e")])  # another account's queue

    found = storage.log.history("a", "queue", "q", "M1", 10)
    assert not found.truncated and sorted(found.records, key=lambda r: r.time) == mine
    assert storage.log.history("a", "queue", "q", "M9", 10).records == []
    limited = storage.log.history("a", "queue", "q", "M1", 2)
    assert limited.truncated and len(limited.records) == 2
    assert not storage.log.history("a", "queue", "q", "M1", 3).truncated


def test_a_scan_returns_no_more_than_it_was_asked_for(storage):
    storage.messages.put([message(n) for n in range(4)])
    (first,) = storage.messages.peek_ready("q1", NOW + 10, 1)
    assert claim_one(storage.messages, first, NOW + 10, NOW + 1000) is not None
    # (read from the head, the second page is wider than the first)
    assert len(storage.messages.peek_ready("q1", NOW + 20, 1)) == 1


def test_a_scan_claim_stops_at_count_and_skips_what_others_took(storage):
    storage.messages.put([message(n) for n in range(6)])
    scan = storage.messages.scan_ready("q1", NOW + 10, 10)
    seen = scan.messages
    assert claim_one(storage.messages, seen[1], NOW + 10, NOW + 1000) is not None  # another consumer's
    claimed = scan.claim(seen, 3, NOW + 10, NOW + 1000)
    assert all(m.version == 1 and m.dequeue_count == 1 for m in claimed)
    ids = [m.message_id for m in claimed]
    if storage.engine == "dynamodb":  # after a lost claim, the rest of that stripe's page is left to the winner
        assert ids == ["M00000"]
        assert ready_ids(storage, NOW + 20) == ["M00002", "M00003", "M00004", "M00005"]
        return
    assert ids == ["M00000", "M00002", "M00003"]
    assert ready_ids(storage, NOW + 20) == ["M00004", "M00005"]


def test_delete_many_reports_each_outcome(storage):
    storage.messages.put([message(n) for n in range(3)])
    scan = storage.messages.scan_ready("q1", NOW + 10, 10)
    claimed = scan.claim(scan.messages, 3, NOW + 10, NOW + 1000)
    leases = [(claimed[0].ref, 1), (claimed[1].ref, 0), (claimed[2].ref, 1), (claimed[0].ref, 1)]
    assert storage.messages.delete_many(leases, NOW + 20) == [True, False, True, False]
    assert storage.messages.counts("q1", NOW + 20) == QueueCounts(0, 1, 0)


def test_new_ids_are_distinct_message_ids_an_engine_finds_its_messages_by(storage):
    ids = storage.messages.new_ids("q1", 16, NOW)
    assert len(set(ids)) == 16 and all(len(i.split("-")) == 4 and int(i.split("-")[2], 16) == NOW for i in ids)
    stored = [message(n) for n in range(16)]
    for m, id_ in zip(stored, ids, strict=True):
        m.message_id = id_
    storage.messages.put(stored)
    assert sorted(ready_ids(storage, NOW + 100)) == sorted(ids)


def test_a_message_kept_the_longest_retention_is_ready_14_days_on_and_gone_after_15(storage):
    """CMQ's 15 days (`MAX_RETENTION_SECONDS`): no engine, nor the ready index, stops at MNS's 7."""
    expires = NOW // 1000 + MAX_RETENTION_SECONDS
    storage.messages.put([Message.enqueued("q1", "M00001", NOW, NOW, expires, Content(body_md5("kept"), "kept", 8))])
    fourteen_days = NOW + 14 * 86_400_000
    end_lifetimes(storage, fourteen_days)  # TTL, the sweep: nothing to remove yet
    assert ready_ids(storage, fourteen_days) == ["M00001"]
    assert storage.messages.counts("q1", fourteen_days) == QueueCounts(1, 0, 0)
    after = (expires + 1) * 1000
    assert ready_ids(storage, after) == []
    assert storage.messages.counts("q1", after) == QueueCounts(0, 0, 0)
