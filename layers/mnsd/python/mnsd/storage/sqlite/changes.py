"""The SQLite engine's change table: the change events (`mnsd.log.changes`) of logging queues' messages.

Each write of a message of a logging queue records its event in the same transaction (table
`message_events`, one JSON row per event, in order); the local runtime's change reader hands them to the
operation log and forgets them. The engine knows what each operation did, so it records the event itself.

A database an older version wrote may still hold changes in `LEGACY_TABLE`, in a shape this engine does not
read: `upgrade` hands them, once, to a converter that knows it (the local runtime's, `local_runtime/upgrade.py`)
and records the events.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from mnsd.ground import actor
from mnsd.log.changes import MessageChange, MessageEvent
from mnsd.model.messages import Message
from mnsd.storage.moves import move_event
from mnsd.storage.sqlite.database import Database

CHANGE_TABLE = "message_events"
# Versions before the change events kept each change as another engine's stream record (JSON), in this table.
LEGACY_TABLE = "message_changes"


def _change(message: Message, event: MessageEvent, time: int, **fields: Any) -> MessageChange:
    return MessageChange(
        queue_id=message.queue_id,
        message_id=message.message_id,
        event=event,
        time=time,
        change_id=uuid.uuid4().hex,
        enqueue_time=message.enqueue_time,
        dequeue_count=message.dequeue_count,
        **fields,
    )


def sent(message: Message) -> MessageChange:
    return _change(
        message,
        MessageEvent.SEND,
        message.enqueue_time,
        priority=message.priority,
        delay=max(0, message.visible_at - message.enqueue_time) // 1000,
        body_size=len((message.body or "").encode("utf-8")),
        access_key_id=actor.current(),
    )


def received(message: Message, now_ms: int) -> MessageChange:
    """A claim's event (`message` as claimed): a first receive is stamped with its first dequeue time."""
    time = message.first_dequeue_time if message.dequeue_count == 1 else now_ms
    return _change(
        message, MessageEvent.RECEIVE, time, first_dequeue_time=message.first_dequeue_time,
        access_key_id=actor.current(), next_visible_time=message.visible_at,
    )  # fmt: skip


def retimed(message: Message, now_ms: int) -> MessageChange:
    return _change(
        message, MessageEvent.CHANGE_VISIBILITY, now_ms, access_key_id=actor.current(),
        next_visible_time=message.visible_at,
    )  # fmt: skip


def rewound(message: Message, now_ms: int) -> MessageChange:
    """A kept message restored by a rewind."""
    return _ended(message, MessageEvent.REWIND, now_ms)


def moved(message: Message, now_ms: int, target: Message) -> MessageChange:
    """The source's event of a move (`mnsd.storage.moves`)."""
    to = {"target_queue_id": target.queue_id, "target_message_id": target.message_id}
    return _ended(message, move_event(target), now_ms, **to)


def _ended(message: Message, event: MessageEvent, now_ms: int, **fields: str) -> MessageChange:
    first_dequeue = message.first_dequeue_time if message.dequeue_count else None
    return _change(message, event, now_ms, first_dequeue_time=first_dequeue, **fields)


def deleted(message: Message, now_ms: int) -> MessageChange:
    return _ended(message, MessageEvent.DELETE, now_ms)


def expired(message: Message, now_ms: int) -> MessageChange:
    return _ended(message, MessageEvent.EXPIRE, now_ms)


def encode(change: MessageChange) -> str:
    return json.dumps({name: value for name, value in vars(change).items() if value is not None})


def decode(text: str) -> MessageChange:
    fields = json.loads(text)
    return MessageChange(**{**fields, "event": MessageEvent(fields["event"])})


def record(connection: sqlite3.Connection, changes: Iterable[MessageChange]) -> None:
    """Record events in the transaction of `connection`."""
    connection.executemany(f"INSERT INTO {CHANGE_TABLE} (event) VALUES (?)", [(encode(c),) for c in changes])


def upgrade(database: Database, convert: Callable[[list[dict[str, Any]]], list[MessageChange]]) -> int:
    """One transaction: the rows of `LEGACY_TABLE` (if it exists) turned into events by `convert`, recorded,
    and the table dropped; how many events."""
    with database.write() as connection:
        legacy = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (LEGACY_TABLE,)
        ).fetchone()
        if legacy is None:
            return 0
        rows = connection.execute(f"SELECT record FROM {LEGACY_TABLE} ORDER BY seq").fetchall()
        found = convert([json.loads(text) for (text,) in rows])
        record(connection, found)
        connection.execute(f"DROP TABLE {LEGACY_TABLE}")
    return len(found)
