"""A data directory written by an older version: what it kept in DynamoDB's shapes, converted once at start.

Before the change events, the SQLite engine kept its message changes as DynamoDB stream records and its
operation log as the DynamoDB log table's items. The engine reads neither shape; this edge of the local
runtime knows both engines and hands the engine the converters it needs (each step is a no-op once done).
"""

from __future__ import annotations

from mnsd.storage.dynamodb.tables.changes import message_changes
from mnsd.storage.dynamodb.tables.oplog import record_of
from mnsd.storage.sqlite import SqliteStorage


def upgrade(storage: SqliteStorage) -> tuple[int, int]:
    """(change events, log records) converted."""
    return storage.messages.upgrade(message_changes), storage.log.upgrade(record_of)
