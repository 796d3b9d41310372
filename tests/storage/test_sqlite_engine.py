"""What is particular to the SQLite engine: its query plans and its change records for the operation log."""

from __future__ import annotations

import dataclasses
import json

import pytest

from local_runtime.upgrade import upgrade
from mnsd.metrics import LogEvent
from mnsd.oplog import LogRecord
from mnsd.storage.dynamodb import layout
from mnsd.storage.dynamodb.changes import message_changes
from mnsd.storage.dynamodb.oplog import log_item
from mnsd.storage.sqlite import changes, sqlite_storage
from mnsd.storage.sqlite.messages import _READY_SQL
from tests.storage.test_contract import NOW, RETENTION, message


@pytest.fixture
def engine(tmp_path):
    storage = sqlite_storage(tmp_path)
    yield storage
    storage.database.close()


def test_a_receive_reads_one_index_range_and_sorts_nothing(engine):
    with engine.database.read() as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + _READY_SQL, ("q", 8, NOW, NOW, 4))]
    assert plan == ["SEARCH messages USING INDEX messages_ready (queue_id=? AND priority=? AND visible_at<?)"]


def test_the_change_table_gives_the_operation_log_every_queue_event(engine):
    logged = dataclasses.replace(message(1), logging=True)
    engine.messages.put([logged, message(2)])  # the second queue does not log
    (claimed,) = engine.messages.claim_some([logged], 1, NOW + 10, NOW + 1000)
    assert engine.messages.change_visibility(claimed.ref, 1, NOW + 20, NOW + 5000)
    assert engine.messages.delete(claimed.ref, 2, NOW + 30)
    expiring = dataclasses.replace(message(3), logging=True)
    engine.messages.put([expiring])
    engine.sweep_expired((NOW // 1000 + RETENTION + 10) * 1000)

    events, upto = engine.messages.changes()
    assert [(e.event, e.message_id, e.dequeue_count) for e in events] == [
        ("send", "M00001", 0),
        ("receive", "M00001", 1),
        ("change_visibility", "M00001", 1),
        ("delete", "M00001", 1),
        ("send", "M00003", 0),
        ("expire", "M00003", 0),
    ]
    assert events[0].body_size == len("body-1") and events[1].time == NOW + 10
    engine.messages.forget_changes(upto)
    assert engine.messages.changes() == ([], 0)


@pytest.mark.parametrize("existing", [True, False])
@pytest.mark.parametrize("name", ["tmp.Ab12", "data.sqlite3", "plain"])
def test_the_data_directory_holds_the_database_whatever_its_name(tmp_path, name, existing):
    data = tmp_path / name  # `mktemp -d` names directories as `tmp.Ab12`
    if existing:
        data.mkdir()
    sqlite_storage(data).database.close()
    assert (data / "mns.sqlite3").is_file()


def test_changes_an_older_version_kept_as_stream_records_become_events_once(tmp_path):
    older = sqlite_storage(tmp_path)
    logged = dataclasses.replace(message(1), logging=True)
    lease = {**layout.message_items(logged)[-1], "b": {"S": "body-1"}}  # as the older version recorded it
    inserted = {"eventID": "e1", "eventName": "INSERT", "dynamodb": {"NewImage": lease}}
    with older.database.write() as connection:
        connection.execute(f"CREATE TABLE {changes.LEGACY_TABLE} (seq INTEGER PRIMARY KEY, record TEXT NOT NULL)")
        connection.execute(f"INSERT INTO {changes.LEGACY_TABLE} (record) VALUES (?)", (json.dumps(inserted),))
    older.database.close()

    engine = sqlite_storage(tmp_path)
    engine.messages.put([dataclasses.replace(message(2), logging=True)])
    assert engine.messages.upgrade(message_changes) == 1
    assert engine.messages.upgrade(message_changes) == 0  # the legacy table is gone
    events, _ = engine.messages.changes()
    assert [(e.event, e.message_id, e.change_id, e.body_size) for e in events][-1] == ("send", "M00001", "e1", 6)
    engine.database.close()


def test_log_records_an_older_version_kept_as_dynamodb_items_are_kept_once(tmp_path):
    older = sqlite_storage(tmp_path)
    record = LogRecord("A", "topic", "t", "push", NOW, "M1", "e1", subscription="s", attempt=2, outcome="success")
    item = log_item(record)
    with older.database.write() as connection:
        connection.execute("CREATE TABLE log (pk TEXT, sk TEXT, expires_at INTEGER, item TEXT, PRIMARY KEY (pk, sk))")
        connection.execute(
            "INSERT INTO log VALUES (?, ?, ?, ?)",
            (item["pk"]["S"], item["sk"]["S"], record.expires_at, json.dumps(item)),
        )
    older.database.close()

    engine = sqlite_storage(tmp_path)
    assert upgrade(engine) == (0, 1)
    assert upgrade(engine) == (0, 0)
    assert list(engine.log.records()) == [record]
    read = engine.log.read("A", "topic", "t", NOW, NOW, 10, subscription="s")
    assert read.events == [LogEvent(NOW, "push", "M1", subscription="s", attempt=2, outcome="success")]
    engine.database.close()
