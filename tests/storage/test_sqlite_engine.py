"""What is particular to the SQLite engine: its query plans and its change records for the operation log."""

from __future__ import annotations

import dataclasses

import pytest

from mnsd.oplog import queue_event
from mnsd.storage.sqlite import sqlite_storage
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


def test_change_records_give_the_operation_log_every_queue_event(engine):
    logged = dataclasses.replace(message(1), logging=True)
    engine.messages.put([logged, message(2)])  # the second queue does not log
    (claimed,) = engine.messages.claim_some([logged], 1, NOW + 10, NOW + 1000)
    assert engine.messages.change_visibility(claimed.ref, 1, NOW + 20, NOW + 5000)
    assert engine.messages.delete(claimed.ref, 2, NOW + 30)
    expiring = dataclasses.replace(message(3), logging=True)
    engine.messages.put([expiring])
    engine.sweep_expired((NOW // 1000 + RETENTION + 10) * 1000)

    records, upto = engine.messages.changes()
    events = [queue_event(record, "A", "q") for record in records]
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
