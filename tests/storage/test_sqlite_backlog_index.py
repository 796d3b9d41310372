"""The SQLite engine reads a queue's backlog from one covering index; a database an older version made gets it."""

from __future__ import annotations

from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.sqlite import sqlite_storage
from mnsd.storage.sqlite.database import REPLACED_INDEX
from mnsd.storage.sqlite.messages import _BACKLOG_SQL
from tests.support.stored import NOW, sent

OLD_INDEX = f"CREATE INDEX {REPLACED_INDEX} ON messages (queue_id, visible_at, dequeue_count, expires_at)"


def indexes(storage) -> set[str]:
    with storage.database.read() as connection:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_an_older_database_gets_the_backlog_index_in_place_of_the_one_it_replaces(tmp_path):
    older = sqlite_storage(tmp_path / "data")
    with older.database.write() as connection:  # as an older version left it
        connection.execute("DROP INDEX messages_backlog")
        connection.execute(OLD_INDEX)
    older.messages.put([sent(NOW - 3000)])
    older.database.close()
    reopened = sqlite_storage(tmp_path / "data")
    assert "messages_backlog" in indexes(reopened) and REPLACED_INDEX not in indexes(reopened)
    assert reopened.messages.backlog("q1", NOW) == Backlog(QueueCounts(1, 0, 0), NOW - 3000)
    reopened.database.close()


def test_the_backlog_reads_the_index_alone(tmp_path):
    storage = sqlite_storage(tmp_path / "data")
    with storage.database.read() as connection:
        plan = " ".join(
            row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + _BACKLOG_SQL, (NOW, NOW // 1000, "q"))
        )
    assert "COVERING INDEX messages_backlog" in plan  # no row (and no body) read per message
    storage.database.close()
