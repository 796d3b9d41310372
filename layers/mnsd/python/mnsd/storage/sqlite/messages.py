"""Queue messages on SQLite: one row per message, claimed with one conditional UPDATE.

A receive reads, per priority, only the messages already visible (index `messages_ready`), so
its cost does not grow with the queue's depth nor with the messages in flight. A claim is
`UPDATE ... WHERE version = ? AND visible_at <= ?`: one row changed means this consumer owns the
message (`Message.received`); delete and change-visibility are conditional on the version a
receipt handle names (`Message.held_by`). Within a priority, messages come in the order they
became visible. Expired rows are never returned nor counted and `sweep_expired` removes them.

A FIFO queue's messages are rows like the others, marked `fifo`, their `position` their place in their group;
their store (`fifo.SqliteFifoMessages`) is this one with the scan and the claim of its groups' runs instead.

Messages of logging queues also leave their change event (`mnsd.log.changes`, table `message_events`,
`changes.py`) in the same transaction; the operation log reads them.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mnsd.log.changes import MessageChange
from mnsd.model.messages import Message, MessageRef, MessageState, Property
from mnsd.model.ports import ReadyScan, candidates
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.ids import new_message_id
from mnsd.storage.sqlite import changes, groups
from mnsd.storage.sqlite.database import COLUMNS, Database, group_key, message_of

PRIORITIES = range(1, 17)
# Per priority, an index range of the messages already visible (priorities are asked in turn, highest
# first, until enough are found: each query reads only rows it returns, whatever the depth).
_READY_SQL = (
    f"SELECT {COLUMNS} FROM messages INDEXED BY messages_ready WHERE queue_id = ? AND priority = ? "
    "AND visible_at <= ? AND expires_at > ? ORDER BY visible_at LIMIT ?"
)


_DELETE_HELD_SQL = (
    f"DELETE FROM messages WHERE queue_id = ? AND message_id = ? AND version = ? AND visible_at > ? "
    f"AND expires_at > ? RETURNING {COLUMNS}"
)
_PLACEHOLDERS = ", ".join("?" * 18)
_ENQUEUED_WHERE = "WHERE queue_id = ? AND message_id > ? AND enqueue_time >= ? AND enqueue_time < ? AND expires_at > ?"
_ENQUEUED_SQL = (
    f"SELECT * FROM (SELECT {COLUMNS} FROM messages {_ENQUEUED_WHERE} UNION ALL "
    f"SELECT {COLUMNS} FROM kept_messages {_ENQUEUED_WHERE}) ORDER BY message_id LIMIT ?"
)


# Counts (Active, Inactive, Delayed) and the oldest enqueue time of the Active and Inactive, over the index only.
_BACKLOG_SQL = (
    "WITH m AS (SELECT visible_at <= ?1 AS active, dequeue_count > 0 AS received, enqueue_time "
    "FROM messages INDEXED BY messages_backlog WHERE queue_id = ?3 AND expires_at > ?2) "
    "SELECT COALESCE(SUM(active), 0), COALESCE(SUM(NOT active AND received), 0), "
    "COALESCE(SUM(NOT active AND NOT received), 0), MIN(CASE WHEN active OR received THEN enqueue_time END) FROM m"
)

_CLAIM_SQL = (
    "UPDATE messages SET visible_at = ?, version = ?, dequeue_count = ?, first_dequeue_time = ? "
    "WHERE queue_id = ? AND message_id = ? AND version = ? AND visible_at <= ? AND expires_at > ?"
)


def claim_lease(connection: sqlite3.Connection, before: Message, after: Message, now_ms: int) -> bool:
    """The lease taken if still as observed (`before`) and Active."""
    return bool(
        connection.execute(
            _CLAIM_SQL,
            (
                after.visible_at,
                after.version,
                after.dequeue_count,
                after.first_dequeue_time,
                before.queue_id,
                before.message_id,
                before.version,
                now_ms,
                now_ms // 1000,
            ),
        ).rowcount
    )


def _properties(items: tuple[Property, ...]) -> str | None:
    return json.dumps([[p.name, p.value, p.type] for p in items]) if items else None


def _row(message: Message) -> tuple[Any, ...]:
    return (
        message.queue_id,
        message.message_id,
        message.priority,
        message.position,
        message.visible_at,
        message.version,
        message.dequeue_count,
        message.enqueue_time,
        message.first_dequeue_time,
        message.expires_at,
        message.body_md5,
        message.body or "",
        _properties(message.user_properties),
        _properties(message.system_properties),
        message.message_group_id,
        int(message.logging),
        int(message.fifo),
        group_key(message.message_group_id) if message.fifo else "",
    )


class SqliteMessageStore:
    """`mnsd.model.ports.MessageStore` for standard queues (and their receivers); the base of the FIFO store."""

    def __init__(self, database: Database) -> None:
        self.db = database
        self._counters_after: groups.Cursor | None = None  # where the sweep of FIFO groups' counters goes on from

    # --- writes -------------------------------------------------------------------------------

    def new_ids(self, queue_id: str, count: int, now_ms: int, groups: Sequence[str] = ()) -> list[str]:
        """One table holds every message: ids name no partition (slot 1)."""
        return [new_message_id(now_ms) for _ in range(count)]

    def put(self, messages: list[Message]) -> set[str]:
        placeholders = _PLACEHOLDERS
        rows = [_row(m) for m in messages]  # prepared before the write lock is taken
        logged = [changes.sent(m) for m in messages if m.logging]
        with self.db.write() as connection:
            connection.executemany(f"INSERT INTO messages ({COLUMNS}) VALUES ({placeholders})", rows)
            if logged:
                changes.record(connection, logged)
        return set()

    def _claim_some(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """One transaction: each candidate's conditional UPDATE (`Message.received`) until `count` are owned."""
        leases = [  # prepared before the write lock is taken
            (m, m.received(now_ms, visible_at)) for m in candidates if m.state_at(now_ms) is MessageState.ACTIVE
        ]
        claimed: list[Message] = []
        with self.db.write() as connection:
            for before, after in leases:
                if len(claimed) == count:
                    break
                if claim_lease(connection, before, after, now_ms):
                    claimed.append(after)
            self.log_received(connection, claimed, now_ms)
        return claimed

    @staticmethod
    def log_received(connection: sqlite3.Connection, claimed: list[Message], now_ms: int) -> None:
        logged = [changes.received(after, now_ms) for after in claimed if after.logging]
        if logged:
            changes.record(connection, logged)

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """One transaction: each message deleted if its lease is still the one its handle names."""
        return self._delete_held(leases, now_ms, keep=False)

    def _delete_held(self, leases: list[tuple[MessageRef, int]], now_ms: int, keep: bool) -> list[bool]:
        """Delete each held message (into `kept_messages` if `keep`: logged as a lease re-marked kept)."""
        deleted: list[bool] = []
        with self.db.write() as connection:
            for ref, version in leases:
                row = connection.execute(
                    _DELETE_HELD_SQL, (ref.queue_id, ref.message_id, version, now_ms, now_ms // 1000)
                ).fetchone()
                deleted.append(row is not None)
                if row is None:
                    continue
                if keep:
                    connection.execute(f"INSERT INTO kept_messages ({COLUMNS}) VALUES ({_PLACEHOLDERS})", row)
                if row[15]:  # a delete with rewind on (kept) or not: a delete either way
                    changes.record(connection, [changes.deleted(message_of(row), now_ms)])
        return deleted

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        with self.db.write() as connection:
            row = connection.execute(
                f"UPDATE messages SET visible_at = ?, version = version + 1 WHERE queue_id = ? AND message_id = ? "
                f"AND version = ? AND visible_at > ? AND expires_at > ? RETURNING {COLUMNS}",
                (visible_at, ref.queue_id, ref.message_id, version, now_ms, now_ms // 1000),
            ).fetchone()
            if row is not None and row[15]:
                changes.record(connection, [changes.retimed(message_of(row), now_ms)])
        return row is not None

    # --- dead letters and rewind ---------------------------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        """One transaction: the source row deleted if still as observed and Active, the target row inserted."""
        row = _row(target)
        with self.db.write() as connection:
            old = connection.execute(
                f"DELETE FROM messages WHERE queue_id = ? AND message_id = ? AND version = ? AND visible_at <= ? "
                f"AND expires_at > ? RETURNING {COLUMNS}",
                (source.queue_id, source.message_id, source.version, now_ms, now_ms // 1000),
            ).fetchone()
            if old is None:
                return False
            connection.execute(f"INSERT INTO messages ({COLUMNS}) VALUES ({_PLACEHOLDERS})", row)
            logged = [changes.moved(message_of(old), now_ms, target)] if old[15] else []
            if target.logging:
                logged.append(changes.sent(target))
            if logged:
                changes.record(connection, logged)
        return True

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """One transaction: each held message moved to `kept_messages` (logged as a lease re-marked kept)."""
        return self._delete_held(leases, now_ms, keep=True)

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        """One transaction: kept rows enqueued since `since_ms` back in `messages`, in-flight ones visible now."""
        now_s = now_ms // 1000
        with self.db.write() as connection:
            kept = [
                message_of(row)
                for row in connection.execute(
                    f"DELETE FROM kept_messages WHERE queue_id = ? AND enqueue_time >= ? AND expires_at > ? "
                    f"RETURNING {COLUMNS}",
                    (queue_id, since_ms, now_s),
                ).fetchall()
            ]
            restored = [dataclasses.replace(m, visible_at=now_ms, version=m.version + 1) for m in kept]
            connection.executemany(
                f"INSERT INTO messages ({COLUMNS}) VALUES ({_PLACEHOLDERS})", [_row(m) for m in restored]
            )
            revisited = [
                message_of(row)
                for row in connection.execute(
                    f"UPDATE messages SET visible_at = ?, version = version + 1 WHERE queue_id = ? "
                    f"AND enqueue_time >= ? AND visible_at > ? AND dequeue_count > 0 AND expires_at > ? "
                    f"RETURNING {COLUMNS}",
                    (now_ms, queue_id, since_ms, now_ms, now_s),
                ).fetchall()
            ]
            # A kept message restored is rewound; an in-flight one made visible is retimed.
            logged = [changes.rewound(m, now_ms) for m in restored if m.logging]
            logged += [changes.retimed(m, now_ms) for m in revisited if m.logging]
            if logged:
                changes.record(connection, logged)
        return len(restored) + len(revisited)

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
        with self.db.write() as connection:
            return connection.execute("DELETE FROM kept_messages WHERE queue_id = ?", (queue_id,)).rowcount

    def sweep_expired(self, now_ms: int, limit: int = 1000) -> int:
        """Remove up to `limit` messages whose retention is over; how many were removed."""
        with self.db.write() as connection:
            connection.execute(
                "DELETE FROM kept_messages WHERE (queue_id, message_id) IN (SELECT queue_id, message_id "
                "FROM kept_messages WHERE expires_at <= ? LIMIT ?)",
                (now_ms // 1000, limit),
            )
            rows = connection.execute(
                f"DELETE FROM messages WHERE (queue_id, message_id) IN (SELECT queue_id, message_id FROM messages "
                f"WHERE expires_at <= ? LIMIT ?) RETURNING {COLUMNS}",
                (now_ms // 1000, limit),
            ).fetchall()
            logged = [changes.expired(message_of(row), now_ms) for row in rows if row[15]]
            if logged:
                changes.record(connection, logged)
            self._counters_after = groups.forget_counters(connection, now_ms, limit, self._counters_after)
        return len(rows)

    # --- reads --------------------------------------------------------------------------------

    def scan_ready(self, queue_id: str, now_ms: int, count: int) -> ReadyScan:
        """`candidates(count)` ready messages (one table holds every message, indexed by visibility), and when the
        next becomes visible if they are fewer."""
        wanted = candidates(count)
        with self.db.read() as connection:
            found = self._ready(connection, queue_id, now_ms, wanted)
            next_visible = None
            if len(found) < wanted:  # (FIFO: may come early, that message waiting behind its group's head)
                next_visible = connection.execute(
                    "SELECT MIN(visible_at) FROM messages WHERE queue_id = ? AND visible_at > ?",
                    (queue_id, now_ms),
                ).fetchone()[0]
        return ReadyScan(found, next_visible, claimer=self._claim_some)

    def peek_ready(self, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        with self.db.read() as connection:
            return self._ready(connection, queue_id, now_ms, wanted)

    def _ready(self, connection: sqlite3.Connection, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        """Up to `wanted` ready messages, priority by priority (each an index range of the messages visible)."""
        rows: list[tuple[Any, ...]] = []
        for priority in PRIORITIES:
            rows += connection.execute(
                _READY_SQL, (queue_id, priority, now_ms, now_ms // 1000, wanted - len(rows))
            ).fetchall()
            if len(rows) >= wanted:
                break
        return [message_of(row) for row in rows]

    def load_bodies(self, messages: list[Message]) -> None:
        """Bodies are always loaded with the message."""

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        return self.backlog(queue_id, now_ms).counts

    def backlog(self, queue_id: str, now_ms: int) -> Backlog:
        """Exact, in one pass over the queue's range of the index `messages_backlog` (no row read)."""
        with self.db.read() as connection:
            active, inactive, delayed, oldest = connection.execute(
                _BACKLOG_SQL, (now_ms, now_ms // 1000, queue_id)
            ).fetchone()
        return Backlog(QueueCounts(active, inactive, delayed), oldest)

    def enqueued_since(
        self, queue_id: str, since_ms: int, until_ms: int, now_ms: int, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        """Stored and kept messages together in message id order (one moving between the two, deleted with rewind
        on or rewound, is still read once); the cursor is the last id read."""
        with self.db.read() as connection:
            rows = connection.execute(
                _ENQUEUED_SQL, (queue_id, after or "", since_ms, until_ms, now_ms // 1000) * 2 + (limit,)
            ).fetchall()
        return [message_of(row) for row in rows], (rows[-1][1] if len(rows) == limit else None)

    # --- the change events (operation log) and exports ----------------------------------------

    def changes(self, limit: int = 1000) -> tuple[list[MessageChange], int]:
        """The oldest change events and the sequence number of the last one (0 if none)."""
        with self.db.read() as connection:
            rows = connection.execute(
                f"SELECT seq, event FROM {changes.CHANGE_TABLE} ORDER BY seq LIMIT ?", (limit,)
            ).fetchall()
        return [changes.decode(event) for _, event in rows], (rows[-1][0] if rows else 0)

    def upgrade(self, convert: Callable[[list[dict[str, Any]]], list[MessageChange]]) -> int:
        """Changes an older version recorded in another shape, turned into events by `convert` (`changes.upgrade`)."""
        return changes.upgrade(self.db, convert)

    def forget_changes(self, upto: int) -> None:
        with self.db.write() as connection:
            connection.execute(f"DELETE FROM {changes.CHANGE_TABLE} WHERE seq <= ?", (upto,))

    def all_messages(self, batch: int = 1000) -> Iterable[Message]:
        """Every stored message (for exports), in pages."""
        after = ("", "")
        while True:
            with self.db.read() as connection:
                rows = connection.execute(
                    f"SELECT {COLUMNS} FROM messages WHERE (queue_id, message_id) > (?, ?) "
                    "ORDER BY queue_id, message_id LIMIT ?",
                    (*after, batch),
                ).fetchall()
            yield from map(message_of, rows)
            if len(rows) < batch:
                return
            after = (rows[-1][0], rows[-1][1])
