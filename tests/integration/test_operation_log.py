"""The operation log on the local runtime: SDK calls in, log records out, through the message table's stream."""

from __future__ import annotations

import time

import pytest
from mns.account import Account
from mns.queue import Message, QueueMeta
from mns.topic import TopicMessage, TopicMeta

from local_runtime.clock import OffsetClock
from local_runtime.server import LocalServer
from mnsd.ground.settings import Settings
from mnsd.storage.dynamodb.tables.changes import message_changes


@pytest.fixture(scope="module")
def clock() -> OffsetClock:
    return OffsetClock()


@pytest.fixture(scope="module")
def server(clock):
    started = LocalServer(Settings.from_env({}), port=0, quiet=True, clock=clock).start_background()
    yield started
    started.stop()


@pytest.fixture
def account(server) -> Account:
    return Account(server.endpoint, "LOCALACCESSKEYID", "LOCALACCESSKEYSECRET")


def log_of(server, pk: str, count: int, timeout: float = 5) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        items = server.services.storage.messages.client.query(
            TableName=server.settings.log_table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
        )["Items"]
        if len(items) >= count or time.monotonic() > deadline:
            return [{k: next(iter(v.values())) for k, v in item.items()} for item in items]
        time.sleep(0.05)


def created_logging(resource, meta):
    """`resource` (an SDK queue or topic) created with `meta` and its logging enabled."""
    meta.set_logging_enabled(True)
    resource.create(meta)
    return resource


def test_every_message_event_of_a_logging_queue_is_recorded(server, account, clock):
    queue = created_logging(account.get_queue("logged"), QueueMeta())
    sent = queue.send_message(Message("one"))
    received = queue.receive_message(1)
    changed = queue.change_message_visibility(received.receipt_handle, 1)
    clock.advance(1.1)
    again = queue.receive_message(3)
    queue.delete_message(again.receipt_handle)
    records = log_of(server, "1000000000000001#queue#logged", 5)
    events = [(r["event"], r.get("dequeue_count")) for r in sorted(records, key=lambda r: r["sk"])]
    assert events == [("send", "0"), ("receive", "1"), ("change_visibility", "1"), ("receive", "2"), ("delete", "2")]
    assert {r["message_id"] for r in records} == {sent.message_id}
    assert changed.receipt_handle != received.receipt_handle
    first_receive = next(r for r in records if r["event"] == "receive" and r["dequeue_count"] == "1")
    assert int(first_receive["time"]) - int(first_receive["enqueue_time"]) < 5_000


def test_queues_without_logging_record_nothing(server, account):
    queue = account.get_queue("quiet")
    queue.create(QueueMeta())
    queue.send_message(Message("x"))
    queue.delete_message(queue.receive_message(1).receipt_handle)
    assert log_of(server, "1000000000000001#queue#quiet", 1, timeout=1) == []


def test_a_logging_topic_records_its_publishes(server, account):
    topic = created_logging(account.get_topic("logged-topic"), TopicMeta())
    published = topic.publish_message(TopicMessage("news"))
    (record,) = log_of(server, "1000000000000001#topic#logged-topic", 1)
    assert (record["event"], record["message_id"], record["body_size"]) == ("publish", published.message_id, "4")


def test_stream_records_handled_twice_are_logged_once(server, account):
    meta = QueueMeta()
    meta.set_logging_enabled(True)
    queue = account.get_queue("twice")
    queue.create(meta)
    queue.send_message(Message("once"))
    (record,) = log_of(server, "1000000000000001#queue#twice", 1)
    stream_record = {
        "eventID": record["sk"].split("#", 1)[1],
        "eventName": "INSERT",
        "dynamodb": {"ApproximateCreationDateTime": 0, "NewImage": _lease_of(server, "twice")},
    }
    server.services.queue_events().handle(message_changes([stream_record]))
    assert len(log_of(server, "1000000000000001#queue#twice", 2, timeout=0.5)) == 1


def _lease_of(server, name: str) -> dict:
    queue = server.services.addresses.resolve("1000000000000001", name)
    (item,) = server.services.storage.messages.client.query(
        TableName=server.settings.message_table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": queue.queue_id}},
    )["Items"]
    return item
