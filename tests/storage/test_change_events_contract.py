"""Both engines report the same change events for the same operations: the DynamoDB engine through its
message table's stream (records as Lambda receives them, `mnsd.storage.dynamodb.tables.changes`), the SQLite
engine through its change table."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from moto.dynamodbstreams.models import dynamodbstreams_backends

from local_runtime.streams import MOTO_ACCOUNT, lambda_record
from mnsd.ground import actor
from mnsd.ground.settings import Settings
from mnsd.log.changes import MessageChange
from mnsd.model.messages import Message, dead_letter_marks
from mnsd.model.ports import MessageStore
from mnsd.storage import Storage
from mnsd.storage.dynamodb.items.packs import entry_of
from mnsd.storage.dynamodb.tables.changes import message_changes
from mnsd.storage.sqlite import sqlite_storage
from tests.support.stored import NOW, message

Changes = Callable[[], list[MessageChange]]


FAR = NOW // 1000 + 10**9  # a retention beyond the stream's clock (DynamoDB's lapsed removals are expiries)


def logged(n: int, **fields: object) -> Message:
    return dataclasses.replace(message(n), logging=True, expires_at=FAR, **fields)  # type: ignore[arg-type]


def operations(store: MessageStore, changes: Changes) -> list[MessageChange]:
    """Every kind of change, on messages of a logging queue (and one of a quiet queue)."""
    delayed = dataclasses.replace(logged(1, priority=3), visible_at=NOW + 1 + 2000)
    store.put([delayed, logged(2, body="héllo"), message(3)])
    scan = store.scan_ready("q1", NOW + 10, 10)
    (two, three) = scan.messages
    (two,) = scan.claim([two], 1, NOW + 10, NOW + 1000)  # a first receive
    assert store.change_visibility(two.ref, two.version, NOW + 20, NOW + 5000)
    assert store.delete_many([(two.ref, two.version + 1)], NOW + 30)[0]
    scan = store.scan_ready("q1", NOW + 3000, 10)
    (one,) = scan.claim(scan.messages[:1], 1, NOW + 3000, NOW + 4000)
    assert store.change_visibility(one.ref, one.version, NOW + 3001, NOW + 3002)
    scan = store.scan_ready("q1", NOW + 3002, 1)
    (one,) = scan.claim(scan.messages, 1, NOW + 3002, NOW + 9000)  # again
    assert store.delete_keeping([(one.ref, one.version)], NOW + 3003) == [True]
    assert store.rewind("q1", NOW, NOW + 3004) == 1  # a kept message restored
    store.put([logged(4), logged(5)])
    sources = {m.message_id: m for m in store.peek_ready("q1", NOW + 3005, 10)}
    back = dataclasses.replace(sources["M00004"], queue_id="dlq", message_id="D1", version=0)
    assert store.move(sources["M00004"], NOW + 3005, back)  # (no dead-letter marks: a redrive)
    marks = dead_letter_marks("QUEUE", "acs:mns:r:1:queues/q1", "M00005")
    letter = dataclasses.replace(sources["M00005"], queue_id="dlq", message_id="D2", version=0, system_properties=marks)
    assert store.move(sources["M00005"], NOW + 3006, letter)
    return changes()


def acted(store: MessageStore, changes: Changes) -> list[MessageChange]:
    """`operations` by a request of the key AK1 on a logging queue (`mnsd.ground.actor`)."""
    with actor.acting("AK1"), actor.recording(True):
        return operations(store, changes)


def facts(change: MessageChange) -> tuple[object, ...]:
    """What both engines must agree on: all but the change id, and the time of the changes the engine times
    itself (DynamoDB stamps those with the stream's clock)."""
    own_time = change.event == "send" or (change.event == "receive" and change.dequeue_count == 1)
    fields = dataclasses.asdict(change)
    fields.pop("change_id")
    fields["time"] = change.time if own_time else None
    return tuple(fields.values())


def stream_changes(message_table: str) -> list[MessageChange]:
    """The events of the message table's stream so far (moto answers no DynamoDB Streams requests: its backend
    is read as `LocalStreamReader` reads it)."""
    backend = dynamodbstreams_backends[MOTO_ACCOUNT]["us-east-1"]
    arn = backend.list_streams(message_table)[0]["StreamArn"]
    shard = backend.describe_stream(arn)["Shards"][0]["ShardId"]
    iterator = backend.get_shard_iterator(arn, shard, "TRIM_HORIZON", None).arn
    return message_changes([lambda_record(record) for record in backend.get_records(iterator, 1000)["Records"]])


def on_both(
    storage: Storage, tmp_path, operations: Callable[[MessageStore, Changes], list[MessageChange]]
) -> tuple[list[MessageChange], list[MessageChange]]:
    """The events of the same operations on the SQLite engine and on `storage` (DynamoDB's stream)."""
    sqlite = sqlite_storage(tmp_path / "sqlite")
    from_sqlite = operations(sqlite.messages, lambda: sqlite.messages.changes()[0])
    sqlite.database.close()
    return from_sqlite, operations(storage.messages, lambda: stream_changes(Settings().message_table))


@pytest.mark.parametrize("storage", ["dynamodb-moto"], indirect=True)
def test_both_engines_report_the_same_events_for_the_same_operations(storage, tmp_path):
    from_sqlite, from_dynamodb = on_both(storage, tmp_path, acted)

    assert [(c.event, c.message_id, c.dequeue_count, c.access_key_id) for c in from_sqlite] == [
        ("send", "M00001", 0, "AK1"),
        ("send", "M00002", 0, "AK1"),
        ("receive", "M00002", 1, "AK1"),
        ("change_visibility", "M00002", 1, "AK1"),
        ("delete", "M00002", 1, None),
        ("receive", "M00001", 1, "AK1"),
        ("change_visibility", "M00001", 1, "AK1"),
        ("receive", "M00001", 2, "AK1"),
        ("delete", "M00001", 2, None),
        ("rewind", "M00001", 2, None),
        ("send", "M00004", 0, "AK1"),
        ("send", "M00005", 0, "AK1"),
        ("redrive", "M00004", 0, None),
        ("send", "D1", 0, "AK1"),
        ("dead_letter", "M00005", 0, None),
        ("send", "D2", 0, "AK1"),
    ]
    moves = [(c.target_queue_id, c.target_message_id) for c in from_sqlite if c.event in ("redrive", "dead_letter")]
    assert moves == [("dlq", "D1"), ("dlq", "D2")]
    assert [facts(c) for c in from_dynamodb] == [facts(c) for c in from_sqlite]
    assert len({c.change_id for c in from_sqlite}) == len(from_sqlite)


def packed_operations(store: MessageStore, changes: Changes, ids: list[str]) -> list[MessageChange]:
    """Changes of the messages of one batch of a logging queue, one at a time and together."""
    sent = [dataclasses.replace(logged(n), message_id=message_id) for n, message_id in enumerate(ids)]
    with actor.acting("AK2"), actor.recording(True):
        store.put(sent)
        scan = store.scan_ready("q1", NOW + 10, 10)
        claimed = scan.claim(sorted(scan.messages, key=lambda m: m.message_id), 3, NOW + 10, NOW + 1000)
        _retimed_deleted_kept(store, *sorted(claimed, key=lambda m: m.message_id))
        (last,) = [m for m in store.peek_ready("q1", NOW + 60, 10) if m.message_id == sorted(ids)[-1]]
        store.load_bodies([last])
        marks = dead_letter_marks("QUEUE", "acs:mns:r:1:queues/q1", last.message_id)
        letter = dataclasses.replace(last, queue_id="dlq", message_id="D9", version=0, system_properties=marks)
        assert store.move(last, NOW + 60, letter)  # a packed message dead-lettered
    return changes()


def _retimed_deleted_kept(store: MessageStore, first: Message, second: Message, third: Message) -> None:
    """Three claimed messages: the first re-timed, the others deleted together, the first then deleted with rewind on
    (kept) and rewound."""
    assert store.change_visibility(first.ref, first.version, NOW + 20, NOW + 5000)
    assert store.delete_many([(second.ref, second.version), (third.ref, third.version)], NOW + 30) == [True, True]
    assert store.delete_keeping([(first.ref, first.version + 1)], NOW + 40) == [True]
    assert store.rewind("q1", NOW, NOW + 50) == 1  # restored


@pytest.mark.parametrize("storage", ["dynamodb-moto-packed"], indirect=True)
def test_a_packed_batch_reports_each_messages_events_as_alone(storage, tmp_path):
    ids = storage.messages.new_ids("q1", 4, NOW)
    sqlite = sqlite_storage(tmp_path / "sqlite")
    from_sqlite = packed_operations(sqlite.messages, lambda: sqlite.messages.changes()[0], ids)
    sqlite.database.close()
    from_dynamodb = packed_operations(storage.messages, lambda: stream_changes(Settings().message_table), ids)

    first, second, third, fourth = sorted(ids)
    assert sorted((c.message_id, c.event, c.dequeue_count, c.access_key_id) for c in from_sqlite) == sorted(
        [*((i, "send", 0, "AK2") for i in ids), *((i, "receive", 1, "AK2") for i in (first, second, third))]
        + [(first, "change_visibility", 1, "AK2"), (second, "delete", 1, None), (third, "delete", 1, None)]
        + [(first, "delete", 1, None), (first, "rewind", 1, None), (fourth, "dead_letter", 0, None)]
        + [("D9", "send", 0, "AK2")]
    )
    assert sorted(map(facts, from_dynamodb)) == sorted(map(facts, from_sqlite))
    assert len({c.change_id for c in from_dynamodb}) == len(from_dynamodb)


def fifo_packed_operations(storage: Storage, changes: Changes, ids: list[str]) -> list[MessageChange]:
    """Changes of the messages of one FIFO batch (one group) of a logging queue, a run and each alone."""
    store = storage.fifo_messages
    first = store.sequence("q1", "a", len(ids), NOW)
    sent = [  # (sent together: one enqueue time)
        dataclasses.replace(logged(n), message_id=i, message_group_id="a", fifo=True, position=first + n)
        for n, i in enumerate(ids)
    ]
    sent = [dataclasses.replace(m, enqueue_time=NOW, first_dequeue_time=NOW) for m in sent]
    with actor.acting("AK3"), actor.recording(True):
        store.put(sent)
        scan = store.scan_ready("q1", NOW + 10, 3)
        _retimed_deleted_kept(store, *scan.claim(scan.messages, 3, NOW + 10, NOW + 1000))
    return changes()


@pytest.mark.parametrize("storage", ["dynamodb-moto-packed"], indirect=True)
def test_a_packed_fifo_batch_reports_each_messages_events_as_alone(storage, tmp_path):
    ids = storage.fifo_messages.new_ids("q1", 4, NOW, ["a"] * 4)
    assert entry_of(ids[0]) is not None  # (packed)
    sqlite = sqlite_storage(tmp_path / "sqlite")
    from_sqlite = fifo_packed_operations(sqlite, lambda: sqlite.messages.changes()[0], ids)
    sqlite.database.close()
    from_dynamodb = fifo_packed_operations(storage, lambda: stream_changes(Settings().message_table), ids)

    assert [(c.message_id, c.event, c.dequeue_count, c.access_key_id) for c in from_sqlite] == [
        *((i, "send", 0, "AK3") for i in ids),
        *((i, "receive", 1, "AK3") for i in ids[:3]),
        (ids[0], "change_visibility", 1, "AK3"),
        (ids[1], "delete", 1, None),
        (ids[2], "delete", 1, None),
        (ids[0], "delete", 1, None),
        (ids[0], "rewind", 1, None),
    ]
    assert sorted(facts(c) for c in from_dynamodb) == sorted(facts(c) for c in from_sqlite)


def unattributed_receive(store: MessageStore, changes: Changes) -> list[MessageChange]:
    """A message sent by AK1, then received in a call of no key (a receive the wait tier coalesced)."""
    with actor.recording(True):
        with actor.acting("AK1"):
            store.put([logged(1)])
        scan = store.scan_ready("q1", NOW + 10, 1)
        assert scan.claim(scan.messages, 1, NOW + 10, NOW + 1000)
    return changes()


@pytest.mark.parametrize("storage", ["dynamodb-moto"], indirect=True)
def test_a_receive_of_no_key_names_none_not_the_senders(storage, tmp_path):
    from_sqlite, from_dynamodb = on_both(storage, tmp_path, unattributed_receive)

    assert [(c.event, c.access_key_id) for c in from_sqlite] == [("send", "AK1"), ("receive", None)]
    assert [facts(c) for c in from_dynamodb] == [facts(c) for c in from_sqlite]
