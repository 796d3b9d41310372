"""What is particular to the SQLite engine: its query plans, its change records for the operation log, its
FIFO groups' bookkeeping and the databases older versions made."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading

import pytest

from local_runtime.upgrade import upgrade
from mnsd.log.metrics import LogEvent
from mnsd.log.oplog import LogRecord
from mnsd.model import fifo
from mnsd.model.messages import Message
from mnsd.model.queues import QueueCounts
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.changes import message_changes
from mnsd.storage.dynamodb.tables.oplog import log_item
from mnsd.storage.sqlite import DATABASE_FILE, changes, groups, sqlite_storage
from mnsd.storage.sqlite.database import ADDED_MESSAGE_COLUMNS, AS_STORED, COLUMNS, MESSAGE_COLUMNS
from mnsd.storage.sqlite.messages import _READY_SQL
from mnsd.storage.sqlite.stores import HISTORY_SQL
from tests.storage.engines import claim_one
from tests.support.fifo_stored import VISIBLE, fifo_message
from tests.support.stored import NOW, RETENTION, message


@pytest.fixture
def engine(tmp_path):
    storage = sqlite_storage(tmp_path)
    yield storage
    storage.database.close()


def test_a_message_row_holds_the_message_fields_in_their_order_then_the_store_s_own():
    names = COLUMNS.split(", ")
    assert names[: len(dataclasses.fields(Message))] == [field.name for field in dataclasses.fields(Message)]
    assert AS_STORED == tuple(names[: names.index("body") + 1])
    assert names[len(dataclasses.fields(Message)) :] == ["group_key"]


def test_a_receive_reads_one_index_range_and_sorts_nothing(engine):
    with engine.database.read() as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + _READY_SQL, ("q", 8, NOW, NOW, 4))]
    assert plan == ["SEARCH messages USING INDEX messages_ready (queue_id=? AND priority=? AND visible_at<?)"]


@pytest.mark.parametrize(
    ("sql", "arguments", "expected"),
    [
        (groups._FROM_SQL, ("q", "00", "g", 0), "group_key>? AND group_key<?"),
        (groups._AFTER_SQL, ("q", "00", "g", 0), "group_key>? AND group_key<?"),
        (groups._HIDDEN_SQL, ("q", "00g", NOW, 0), "group_key=? AND visible_at>?"),
        (groups._BETWEEN_SQL, ("q", "00g", 0, 5, 0), "group_key=? AND position>? AND position<?"),
    ],
)
def test_a_fifo_scan_and_a_run_claim_read_index_ranges_and_sort_nothing(engine, sql, arguments, expected):
    with engine.database.read() as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, arguments)]
    index = "messages_received" if "messages_received" in sql else "messages_groups"
    assert plan == [f"SEARCH messages USING INDEX {index} (queue_id=? AND {expected})"]


def test_a_refused_run_leaves_none_of_its_group_claimed_and_the_next_group_is_claimed(engine):
    a0, a1, b0 = (fifo_message(engine, group, n) for n, group in enumerate("aab"))
    engine.fifo_messages.put([a0, a1, b0])
    stale = dataclasses.replace(a1, version=7)  # not as stored: its claim fails after a0's succeeded
    claimed = engine.fifo_messages.scan_ready("q1", NOW + 10, 10).claim([a0, stale, b0], 3, NOW + 10, VISIBLE)
    assert [m.message_id for m in claimed] == ["M00002"]
    assert engine.fifo_messages.held_groups("q1", NOW + 20, 10) == ["b"]
    assert engine.fifo_messages.counts("q1", NOW + 20) == QueueCounts(2, 1, 0)  # a0 rolled back: Active
    scan = engine.fifo_messages.scan_ready("q1", NOW + 30, 10)
    assert scan.claim([a1, a0], 2, NOW + 30, VISIBLE) == []  # a run starts at its group's head
    claimed = scan.claim([a0, a1], 2, NOW + 30, VISIBLE)
    assert [m.message_id for m in claimed] == ["M00000", "M00001"]


def test_a_group_counter_unused_past_any_retention_is_forgotten_and_numbers_on_above(engine):
    first = engine.fifo_messages.sequence("q1", "g", 5, NOW)
    later = NOW + fifo.GROUP_LIFETIME_MS + 1
    engine.sweep_expired(later)
    with engine.database.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM message_groups").fetchone() == (0,)
    assert engine.fifo_messages.sequence("q1", "g", 1, later) > first + 4


def test_a_sweep_looks_at_a_bounded_number_of_counters_and_goes_round(engine):
    """Emptied groups' counters are forgotten `limit` looked at per sweep, from where the last one stopped; one whose
    group still stores a message stays."""
    for group in "abcde":
        engine.fifo_messages.sequence("q1", group, 1, NOW)
    engine.fifo_messages.put([fifo_message(engine, "z", 0)])
    later = NOW + fifo.SEND_SETTLE_MS

    def counters() -> list[str]:
        with engine.database.read() as connection:
            return [g for (g,) in connection.execute("SELECT message_group_id FROM message_groups ORDER BY 1")]

    engine.messages.sweep_expired(later, limit=2)
    assert counters() == ["c", "d", "e", "z"]
    engine.messages.sweep_expired(later, limit=2)
    assert counters() == ["e", "z"]
    engine.messages.sweep_expired(later, limit=2)
    assert counters() == ["z"]
    engine.messages.sweep_expired(later, limit=2)  # (from the first again)
    assert counters() == ["z"]


def test_kept_fifo_messages_keep_their_group_and_place(engine):
    message = fifo_message(engine, "a", 0)
    engine.fifo_messages.put([message])
    claimed = claim_one(engine.fifo_messages, message, NOW + 10, VISIBLE)
    assert claimed is not None
    assert engine.fifo_messages.delete_keeping([(claimed.ref, claimed.version)], NOW + 20) == [True]
    with engine.database.read() as connection:
        kept = connection.execute("SELECT position, fifo, group_key FROM kept_messages").fetchall()
    assert kept == [(message.position, 1, groups.group_key("a"))]


def test_a_database_an_older_version_made_gets_the_fifo_columns_and_keeps_its_messages(tmp_path):
    older_columns = MESSAGE_COLUMNS
    for name, declaration in ADDED_MESSAGE_COLUMNS:
        older_columns = older_columns.replace(f"    {name} {declaration},\n", "")
    older = sqlite3.connect(tmp_path / DATABASE_FILE)
    for table in ("messages", "kept_messages"):
        older.execute(f"CREATE TABLE {table} ({older_columns}) WITHOUT ROWID")
    kept = message(1)
    older.execute(
        "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, '', 0)",
        (kept.queue_id, kept.message_id, kept.priority, kept.position, kept.visible_at, 0, 0, kept.enqueue_time,
         kept.first_dequeue_time, kept.expires_at, kept.body_md5, kept.body),
    )  # fmt: skip
    older.commit()
    older.close()

    engine = sqlite_storage(tmp_path)
    assert [m for m in engine.messages.peek_ready("q1", NOW + 10, 10)] == [kept]
    fifo = fifo_message(engine, "a", 2)
    engine.fifo_messages.put([fifo])
    assert engine.fifo_messages.peek_ready("q1", NOW + 10, 10) == [fifo]
    engine.database.close()
    again = sqlite_storage(tmp_path)  # opened once more: nothing left to add
    assert again.fifo_messages.peek_ready("q1", NOW + 10, 10) == [fifo]
    again.database.close()


def test_a_database_that_named_the_fifo_column_ordered_has_it_renamed_and_keeps_its_fifo_messages(tmp_path):
    engine = sqlite_storage(tmp_path)
    fifo = fifo_message(engine, "a", 1)
    engine.fifo_messages.put([fifo])
    engine.database.close()
    former = sqlite3.connect(tmp_path / DATABASE_FILE)  # the column as the version before this one named it
    for table in ("messages", "kept_messages"):
        former.execute(f"ALTER TABLE {table} RENAME COLUMN fifo TO ordered")
    former.commit()
    former.close()

    again = sqlite_storage(tmp_path)
    with again.database.read() as connection:
        columns = {row[1] for row in connection.execute("PRAGMA table_info(messages)")}
        indexes = "".join(
            row[0] or "" for row in connection.execute("SELECT sql FROM sqlite_master WHERE type='index'")
        )
    assert "fifo" in columns and "ordered" not in columns
    assert "WHERE fifo = 1" in indexes and "ordered" not in indexes
    assert again.fifo_messages.peek_ready("q1", NOW + 10, 10) == [fifo]
    assert again.messages.peek_ready("q1", NOW + 10, 10) == [fifo]  # (one table: a scan of another kind)
    again.database.close()


def test_the_change_table_also_gives_expiries_and_forgets_what_was_read(engine):
    """What the change table does beyond the events both engines report alike (sends, receives, visibility changes,
    deletes, moves: `test_change_events_contract`, which runs this engine too): an expiry, each event's body size and
    time, and a read's events forgotten."""
    logged = dataclasses.replace(message(1), logging=True)
    engine.messages.put([logged, message(2)])  # the second queue does not log
    assert claim_one(engine.messages, logged, NOW + 10, NOW + 1000) is not None
    engine.sweep_expired((NOW // 1000 + RETENTION + 10) * 1000)

    events, upto = engine.messages.changes()
    assert [(e.event, e.message_id, e.dequeue_count) for e in events] == [
        ("send", "M00001", 0),
        ("receive", "M00001", 1),
        ("expire", "M00001", 1),
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


def test_log_records_an_older_version_wrote_are_found_by_their_message_id(tmp_path):
    record = LogRecord("A", "queue", "q", "receive", NOW, "M1", "e1", dequeue_count=1)
    older = sqlite3.connect(tmp_path / DATABASE_FILE)
    older.execute(
        "CREATE TABLE operation_log (pk TEXT NOT NULL, sk TEXT NOT NULL, expires_at INTEGER NOT NULL, "
        "record TEXT NOT NULL, PRIMARY KEY (pk, sk)) WITHOUT ROWID"
    )
    text = json.dumps({k: v for k, v in vars(record).items() if v is not None})
    older.execute("INSERT INTO operation_log VALUES (?, ?, ?, ?)", (record.partition, record.key, 1, text))
    older.commit()
    older.close()

    engine = sqlite_storage(tmp_path)
    assert engine.log.history("A", "queue", "q", "M1", 10).records == [record]
    engine.database.close()
    again = sqlite_storage(tmp_path)  # opened once more: nothing left to add
    assert again.log.history("A", "queue", "q", "M1", 10).records == [record]
    again.database.close()


def test_a_messages_history_reads_one_index_range(engine):
    with engine.database.read() as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + HISTORY_SQL, ("M1", "A#queue#q", 10))]
    assert plan == ["SEARCH operation_log USING INDEX operation_log_message (message_id=? AND pk=?)"]


def test_threads_share_a_bounded_pool_of_connections(tmp_path):
    """However many threads read at once, the file is open POOL_SIZE times at most: the others wait for a connection
    given back, and a thread's nested blocks use the one it holds."""
    from mnsd.storage.sqlite.database import POOL_SIZE, Database

    database = Database(tmp_path / "pool.db")
    threads = POOL_SIZE + 4
    inside, release = threading.Semaphore(0), threading.Event()
    seen: list[int] = []

    def read() -> None:
        with database.read() as connection, database.read() as nested:
            seen.append(int(connection is nested))
            connection.execute("SELECT 1").fetchone()
            inside.release()
            release.wait(10)

    workers = [threading.Thread(target=read) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for _ in range(POOL_SIZE):
        assert inside.acquire(timeout=10)
    assert not inside.acquire(timeout=0.2)  # the rest wait: every connection is held
    assert len(database._all) <= POOL_SIZE
    release.set()
    for worker in workers:
        worker.join(10)
    assert seen == [1] * threads and len(database._all) <= POOL_SIZE
    database.close()
