"""Control-plane records, topic messages and the operation log on SQLite."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from mnsd.log.history import HistoryRead
from mnsd.log.metrics import LogRead, event_of
from mnsd.log.oplog import LogRecord
from mnsd.model.messages import Property
from mnsd.model.ports import Record
from mnsd.model.topics import TOPIC_RETENTION_SECONDS, TopicMessage
from mnsd.storage.sqlite.database import Database

# A record by its scope and name (the table's `partition` column holds the scope).
_SELECT_RECORD = "SELECT record FROM meta WHERE partition = ? AND name = ?"


def _record_of(connection: sqlite3.Connection, statement: str, scope: str, name: str) -> Record | None:
    """The record a statement on one (scope, name) returns, or None if it returns no row."""
    row = connection.execute(statement, (scope, name)).fetchone()
    return None if row is None else dict(json.loads(row[0]))


class SqliteMetaTable:
    def __init__(self, database: Database) -> None:
        self.db = database

    def create(self, scope: str, name: str, record: Record) -> Record | None:
        with self.db.write() as connection:
            inserted = connection.execute(
                "INSERT OR IGNORE INTO meta (partition, name, record) VALUES (?, ?, ?)",
                (scope, name, json.dumps(record)),
            ).rowcount
            return None if inserted else _record_of(connection, _SELECT_RECORD, scope, name)

    def get(self, scope: str, name: str) -> Record | None:
        with self.db.read() as connection:
            return _record_of(connection, _SELECT_RECORD, scope, name)

    def update(self, scope: str, name: str, changes: Record, expected: Record | None = None) -> bool:
        with self.db.write() as connection:
            current = _record_of(connection, _SELECT_RECORD, scope, name)
            if current is None or any(current.get(key) != value for key, value in (expected or {}).items()):
                return False
            connection.execute(
                "UPDATE meta SET record = ? WHERE partition = ? AND name = ?",
                (json.dumps({**current, **changes}), scope, name),
            )
        return True

    def put(self, scope: str, name: str, record: Record) -> None:
        with self.db.write() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO meta (partition, name, record) VALUES (?, ?, ?)",
                (scope, name, json.dumps(record)),
            )

    def delete(self, scope: str, name: str) -> Record | None:
        with self.db.write() as connection:
            return _record_of(
                connection, "DELETE FROM meta WHERE partition = ? AND name = ? RETURNING record", scope, name
            )

    def count(self, scope: str) -> int:
        with self.db.read() as connection:
            return int(connection.execute("SELECT COUNT(*) FROM meta WHERE partition = ?", (scope,)).fetchone()[0])

    def list(
        self, scope: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[tuple[str, Record]], bool]:
        with self.db.read() as connection:
            rows = connection.execute(
                "SELECT name, record FROM meta WHERE partition = ? AND name > ? AND substr(name, 1, ?) = ? "
                "ORDER BY name LIMIT ?",
                (scope, start_after or "", len(prefix), prefix, limit + 1),
            ).fetchall()
        found = [(name, dict(json.loads(record))) for name, record in rows]
        return found[:limit], len(found) > limit

    def all_records(self) -> Iterator[tuple[str, str, Record]]:
        """Every (scope, name, record), for exports."""
        with self.db.read() as connection:
            rows = connection.execute("SELECT partition, name, record FROM meta ORDER BY partition, name").fetchall()
        for scope, name, record in rows:
            yield scope, name, dict(json.loads(record))


def _topic_record(message: TopicMessage) -> str:
    fields = dataclasses.asdict(message)
    fields["user_properties"] = [[p.name, p.value, p.type] for p in message.user_properties]
    return json.dumps(fields)


def _topic_message(text: str) -> TopicMessage:
    fields: dict[str, Any] = json.loads(text)
    fields["user_properties"] = tuple(Property(*entry) for entry in fields["user_properties"])
    return TopicMessage(**fields)


class SqliteTopicMessageStore:
    def __init__(self, database: Database) -> None:
        self.db = database

    def put(self, message: TopicMessage) -> None:
        expires_at = message.publish_time // 1000 + TOPIC_RETENTION_SECONDS
        with self.db.write() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO topic_messages (topic_id, message_id, expires_at, record) VALUES (?, ?, ?, ?)",
                (message.topic_id, message.message_id, expires_at, _topic_record(message)),
            )

    def get(self, topic_id: str, message_id: str, now_ms: int) -> TopicMessage | None:
        with self.db.read() as connection:
            row = connection.execute(
                "SELECT record FROM topic_messages WHERE topic_id = ? AND message_id = ? AND expires_at > ?",
                (topic_id, message_id, now_ms // 1000),
            ).fetchone()
        return None if row is None else _topic_message(row[0])

    def count(self, topic_id: str, now_ms: int) -> int:
        with self.db.read() as connection:
            return int(
                connection.execute(
                    "SELECT COUNT(*) FROM topic_messages WHERE topic_id = ? AND expires_at > ?",
                    (topic_id, now_ms // 1000),
                ).fetchone()[0]
            )

    def sweep_expired(self, now_ms: int) -> int:
        with self.db.write() as connection:
            return connection.execute("DELETE FROM topic_messages WHERE expires_at <= ?", (now_ms // 1000,)).rowcount


# One message's records: the index on its id (named: SQLite would otherwise read the queue's whole partition by `pk`).
HISTORY_SQL = (
    "SELECT record FROM operation_log INDEXED BY operation_log_message WHERE message_id = ? AND pk = ? LIMIT ?"
)


def _log_record(text: str) -> LogRecord:
    return LogRecord(**json.loads(text))


class SqliteOperationLog:
    """The log table: each record as JSON (its fields that have a value) under its partition and key.

    Versions before kept each record as the DynamoDB log table's item, in table `LEGACY_LOG_TABLE`: `upgrade`
    hands those, once, to a converter that knows that shape (the local runtime's) and keeps the records.
    """

    LEGACY_LOG_TABLE = "log"

    def __init__(self, database: Database) -> None:
        self.db = database

    def write(self, records: list[LogRecord]) -> None:
        rows = [
            (
                r.partition,
                r.key,
                r.expires_at,
                json.dumps({k: v for k, v in vars(r).items() if v is not None}),
                r.message_id,
            )
            for r in records
        ]
        with self.db.write() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO operation_log (pk, sk, expires_at, record, message_id) VALUES (?, ?, ?, ?, ?)",
                rows,
            )

    def read(
        self, account: str, kind: str, resource: str, start_ms: int, end_ms: int, limit: int, subscription: str = ""
    ) -> LogRead:
        """As the DynamoDB engine's: one partition, a key range of times, at most `limit` items read."""
        with self.db.read() as connection:
            rows = connection.execute(
                "SELECT record FROM operation_log WHERE pk = ? AND sk BETWEEN ? AND ? ORDER BY sk LIMIT ?",
                (f"{account}#{kind}#{resource}", f"{start_ms:013d}", f"{end_ms:013d}~", limit + 1),
            ).fetchall()
        records = [_log_record(text) for (text,) in rows[:limit]]
        if subscription:
            records = [record for record in records if record.subscription == subscription]
        return LogRead([event_of(record) for record in records], truncated=len(rows) > limit)

    def history(self, account: str, kind: str, resource: str, message_id: str, limit: int) -> HistoryRead:
        """As the DynamoDB engine's: one message's records of one queue or topic, by the index on its id."""
        with self.db.read() as connection:
            rows = connection.execute(HISTORY_SQL, (message_id, f"{account}#{kind}#{resource}", limit + 1)).fetchall()
        return HistoryRead([_log_record(text) for (text,) in rows[:limit]], truncated=len(rows) > limit)

    def records(self) -> Iterator[LogRecord]:
        """Every log record, for exports."""
        with self.db.read() as connection:
            rows = connection.execute("SELECT record FROM operation_log ORDER BY pk, sk").fetchall()
        for (text,) in rows:
            yield _log_record(text)

    def sweep_expired(self, now_ms: int) -> int:
        with self.db.write() as connection:
            return connection.execute("DELETE FROM operation_log WHERE expires_at <= ?", (now_ms // 1000,)).rowcount

    def upgrade(self, convert: Callable[[dict[str, Any]], LogRecord]) -> int:
        """Records an older version left in `LEGACY_LOG_TABLE` (items, as JSON) kept as `convert` makes them, and
        that table dropped; how many."""
        with self.db.read() as connection:
            legacy = connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (self.LEGACY_LOG_TABLE,)
            ).fetchone()
            rows = connection.execute(f"SELECT item FROM {self.LEGACY_LOG_TABLE}").fetchall() if legacy else []
        if legacy is None:
            return 0
        self.write([convert(json.loads(text)) for (text,) in rows])  # idempotent: a second run rewrites the same
        with self.db.write() as connection:
            connection.execute(f"DROP TABLE {self.LEGACY_LOG_TABLE}")
        return len(rows)
