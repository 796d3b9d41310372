"""DynamoDB stream records, as Lambda receives them, turned into change events (one test per kind of record)."""

from __future__ import annotations

from mnsd.log.changes import MessageChange, MessageEvent
from mnsd.model.topics import TopicMessage
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.changes import message_change, message_changes, published_messages
from mnsd.storage.dynamodb.tables.topic_messages import to_item
from tests.support.changes import event, lease, record


def test_insert_is_a_send_stamped_with_its_enqueue_time():
    sent = event(record("INSERT", new=lease(e="1700000000000", v="1700000005000", d="0", r="0")))
    assert sent == MessageChange(
        queue_id="qid", message_id="MSG1", event=MessageEvent.SEND, time=1700000000000, change_id="ev1",
        enqueue_time=1700000000000, dequeue_count=0, priority=8, delay=5, body_size=6,
    )  # fmt: skip


def test_a_striped_lease_is_a_change_of_its_queue():
    assert event(record("INSERT", new=lease("qid#3", e="1", v="1", d="0", r="0"))).queue_id == "qid"


def test_a_first_receive_is_stamped_with_its_first_dequeue_time():
    old = lease(e="1700000000000", v="1700000000000", d="0", r="0")
    new = lease(e="1700000000000", v="1700000031000", d="1", r="1", f="1700000001000")
    received = event(record("MODIFY", new=new, old=old))
    assert (received.event, received.time, received.dequeue_count, received.first_dequeue_time) == (
        "receive",
        1700000001000,
        1,
        1700000001000,
    )


def test_a_redelivery_is_stamped_with_the_stream_time():
    old = lease(e="1", v="2", d="1", r="1", f="1700000001000")
    new = lease(e="1", v="3", d="2", r="2", f="1700000001000")
    received = event(record("MODIFY", new=new, old=old))
    assert (received.event, received.time, received.dequeue_count) == ("receive", 1700000042000, 2)


def test_a_new_version_without_a_receive_is_a_visibility_change():
    old = lease(e="1", v="2", d="1", r="1", f="5")
    changed = event(record("MODIFY", new=lease(e="1", v="9", d="1", r="2", f="5"), old=old))
    assert (changed.event, changed.time, changed.first_dequeue_time) == ("change_visibility", 1700000042000, None)


def test_a_modify_that_changes_neither_count_nor_version_is_no_event():
    same = lease(e="1", v="2", d="1", r="1", f="5")
    assert message_change(record("MODIFY", new=same, old=same)) is None


def test_removal_by_ttl_is_an_expiry_and_by_a_client_a_delete():
    old = lease(e="1", v="2", d="3", r="3", f="5")
    ttl = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    assert event(record("REMOVE", old=old, userIdentity=ttl)).event == "expire"
    deleted = event(record("REMOVE", old=old))
    assert (deleted.event, deleted.dequeue_count, deleted.first_dequeue_time) == ("delete", 3, 5)


def test_a_removal_past_retention_is_an_expiry():
    old = lease(e="1", v="2", d="0", r="0", x="1700000000")
    assert event(record("REMOVE", old=old)).event == "expire"


def test_a_lease_re_marked_kept_is_a_delete_restored_a_rewind_and_dropped_no_event():
    live = lease(e="1", v="2", d="1", r="1", f="5")
    kept = {**{k: v for k, v in live.items() if k != "v"}, layout.KEPT_ATTRIBUTE: {"BOOL": True}}
    assert event(record("MODIFY", new=kept, old=live)).event == "delete"
    assert event(record("MODIFY", new=live, old=kept)).event == "rewind"  # restored by a rewind
    assert message_change(record("REMOVE", old=kept)) is None  # dropped or expired


def test_a_lease_marked_moved_is_its_move_and_its_removal_no_event():
    live = lease(e="1", v="2", d="3", r="4", f="5")
    moved = {**live, "x": {"N": "0"}, layout.MOVED_ATTRIBUTE: {"S": "dead_letter dlq-id D1"}}
    change = event(record("MODIFY", new=moved, old=live))
    assert (change.event, change.target_queue_id, change.target_message_id) == ("dead_letter", "dlq-id", "D1")
    assert (change.dequeue_count, change.first_dequeue_time, change.access_key_id) == (3, 5, None)
    assert message_change(record("REMOVE", old=moved)) is None  # deleted after the move, or by TTL


def test_receives_and_visibility_changes_name_the_key_the_lease_names():
    before = lease(e="1", v="2", d="0", r="0")
    received = {**before, "d": {"N": "1"}, "r": {"N": "1"}, "f": {"N": "7"}, layout.ACTOR_ATTRIBUTE: {"S": "AK1"}}
    assert event(record("MODIFY", new=received, old=before)).access_key_id == "AK1"
    retimed = {**received, "r": {"N": "2"}, layout.ACTOR_ATTRIBUTE: {"S": "AK2"}}
    assert event(record("MODIFY", new=retimed, old=received)).access_key_id == "AK2"
    assert event(record("INSERT", new=received)).access_key_id == "AK1"


def test_body_items_and_leases_of_quiet_queues_are_not_events():
    body = {"pk": {"S": "qid"}, "sk": {"S": "BMSG1"}, "b": {"S": "x"}}
    quiet = {k: v for k, v in lease(e="1", v="1", d="0", r="0").items() if k != "l"}
    assert message_changes([record("INSERT", new=body), record("INSERT", new=quiet)]) == []


def test_inserts_of_the_topic_message_table_are_published_messages():
    message = TopicMessage("1000000000000001", "t", "tid", "MSGID", "body", "tag", 1449556920975)
    records = [
        {"eventName": "INSERT", "dynamodb": {"NewImage": to_item(message), "SequenceNumber": "101"}},
        {"eventName": "REMOVE", "dynamodb": {"OldImage": to_item(message), "SequenceNumber": "102"}},
    ]
    (published,) = published_messages(records)
    assert (published.message, published.position) == (message, "101")
