"""FIFO messages (FIFO queues) on SQLite: the groups' counters, the runs of free groups, a run claim's checks.

Nothing records whether a group is held: it is read from the rows (a message of the group received and still
hidden), so every write of a message (claim, delete, re-time, move, expiry, rewind) keeps it right by itself.

Two partial indexes over the FIFO messages: `messages_groups` (by group, then position: a group's head and
run, and whether a message of the group remains before a position) and `messages_received` (the group's
messages received at least once, by visibility: whether one is hidden now). A message names its group by
`group_key`, its group's hash (8 hex digits) then the group, so groups sit in the indexes in hash order: a scan
starting at a random hash starts at a random group and concurrent consumers spread over the groups. One column
lets a scan step to the next group with one index seek (`group_key > ?`; a bound over two columns, hash then
group, would read through the whole group it starts after). A scan reads one head per group it looks at, one
probe per free group and the messages it returns, whatever the depth of the queue; empty groups cost nothing.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from typing import Any

from mnsd.model import fifo
from mnsd.model.messages import Message
from mnsd.storage.sqlite.database import COLUMNS, HASH_DIGITS, group_key, message_of

HASHES = 1 << 32

# Row indexes of the columns a scan looks at (`database.COLUMNS`).
_VISIBLE_AT, _GROUP_KEY = 4, 17

# The FIFO messages group after group, each group's in position order, from a group key on (up to another).
# A scan reads a group's first rows and leaves the rest unread (SQLite steps a statement as far as it is read).
_GROUPS_SQL = (
    f"SELECT {COLUMNS} FROM messages INDEXED BY messages_groups WHERE queue_id = ? AND fifo = 1 "
    "AND group_key {after} ? AND group_key < ? AND expires_at > ? ORDER BY group_key, position"
)
_FROM_SQL = _GROUPS_SQL.format(after=">=")
_AFTER_SQL = _GROUPS_SQL.format(after=">")
# A group's messages received and hidden (Inactive): its hold (`fifo.Hold.of`), as far as it takes to see it.
_HIDDEN_SQL = (
    f"SELECT {COLUMNS} FROM messages INDEXED BY messages_received WHERE queue_id = ? AND fifo = 1 "
    "AND dequeue_count > 0 AND group_key = ? AND visible_at > ? AND expires_at > ? LIMIT 1"
)
_BETWEEN_SQL = (
    "SELECT 1 FROM messages INDEXED BY messages_groups WHERE queue_id = ? AND fifo = 1 AND group_key = ? "
    "AND position > ? AND position < ? AND expires_at > ? LIMIT 1"
)
_HELD_SQL = (
    "SELECT DISTINCT group_key FROM messages INDEXED BY messages_received WHERE queue_id = ? AND fifo = 1 "
    "AND dequeue_count > 0 AND visible_at > ? AND expires_at > ? LIMIT ?"
)
_SEQUENCE_SQL = (
    "INSERT INTO message_groups (queue_id, message_group_id, next_position, used_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT DO UPDATE SET next_position = next_position + ?, used_at = excluded.used_at RETURNING next_position"
)
# Emptied groups' counters (`fifo.forgettable`): no send for `fifo.SEND_SETTLE_MS` (a message numbered is not in
# `messages` until its put), no unexpired message stored or kept. (A message hidden is stored: nothing holds them.)
# The counters a sweep looks at next: settled (no send for `fifo.SEND_SETTLE_MS`: a message numbered is not in
# `messages` until its put), in the order of their last send, from where the last sweep stopped.
_SETTLED_SQL = (
    "SELECT used_at, queue_id, message_group_id FROM message_groups INDEXED BY message_groups_used "
    "WHERE used_at <= ? AND (used_at, queue_id, message_group_id) > (?, ?, ?) "
    "ORDER BY used_at, queue_id, message_group_id LIMIT ?"
)
# A settled counter forgotten if its group is emptied (`fifo.forgettable`): no unexpired message stored or kept (a
# message in flight is stored: nothing else holds a group).
_EMPTIED_SQL = (
    "DELETE FROM message_groups WHERE queue_id = ?1 AND message_group_id = ?2 AND NOT EXISTS (SELECT 1 FROM messages "
    "INDEXED BY messages_groups WHERE queue_id = ?1 AND fifo = 1 AND group_key = ?3 AND expires_at > ?4) "
    "AND NOT EXISTS (SELECT 1 FROM kept_messages WHERE queue_id = ?1 AND message_group_id = ?2 AND expires_at > ?4)"
)
Cursor = tuple[int, str, str]  # (last send, queue id, group) of the last counter a sweep looked at
_START: Cursor = (-(1 << 63), "", "")
_LOWEST = -(1 << 63)


def sequence(connection: sqlite3.Connection, queue_id: str, group: str, count: int, now_ms: int) -> int:
    """The first of `count` new positions of the group (the counter holds the next one to give): a new counter
    starts at `fifo.first_position`, so one forgotten after its lifetime (`forget_counters`) and made again
    numbers above what it gave before."""
    start = fifo.first_position(now_ms) + count
    (following,) = connection.execute(_SEQUENCE_SQL, (queue_id, group, start, now_ms, count)).fetchone()
    return int(following) - count


def forget_counters(connection: sqlite3.Connection, now_ms: int, limit: int, after: Cursor | None) -> Cursor | None:
    """Delete the counters of emptied groups (`fifo.forgettable`) among the next `limit` settled ones after `after`
    (None: from the first); where the next sweep goes on from (None: from the first again). A group past its
    lifetime (`fifo.GROUP_LIFETIME_MS`) has no unexpired message: it is forgotten so."""
    now_s = now_ms // 1000
    settled = connection.execute(_SETTLED_SQL, (now_ms - fifo.SEND_SETTLE_MS, *(after or _START), limit)).fetchall()
    connection.executemany(_EMPTIED_SQL, [(queue_id, group, group_key(group), now_s) for _, queue_id, group in settled])
    return tuple(settled[-1]) if len(settled) == limit else None


def free_runs(connection: sqlite3.Connection, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
    """Up to `wanted` messages: the runs of free groups (`fifo.head_run`), group after group, from a random group
    on round to the one before it."""
    start = f"{random.randrange(HASHES):0{HASH_DIGITS}x}"
    now_s = now_ms // 1000
    found: list[Message] = []
    for lower, upper in ((start, "g"), ("", start)):  # hex digits sort below "g"
        sql, key = _FROM_SQL, lower
        while len(found) < wanted:
            rows = connection.execute(sql, (queue_id, key, upper, now_s))
            head = rows.fetchone()
            if head is None:
                break
            sql, key = _AFTER_SQL, head[_GROUP_KEY]
            # A free group: its run (else a delayed or hidden message holds it back; the head's visibility is
            # looked at first, as it costs no probe).
            if head[_VISIBLE_AT] <= now_ms and not _hidden(connection, queue_id, key, now_ms):
                group = _group_messages(head, rows)
                found += fifo.head_run(group, now_ms, wanted - len(found)).messages
            rows.close()  # its statement reset, so the next execution reuses it rather than compiling another
    return found


def _group_messages(head: tuple[Any, ...], rows: Iterator[tuple[Any, ...]]) -> Iterator[Message]:
    """The messages of the group `head` begins, as the rows are read (stopping at the next group's first)."""
    yield message_of(head)
    for row in rows:
        if row[_GROUP_KEY] != head[_GROUP_KEY]:
            return
        yield message_of(row)


def _hidden(connection: sqlite3.Connection, queue_id: str, key: str, now_ms: int) -> bool:
    """Whether the group is held (`fifo.Hold`): its hold read from its rows, as far as one message in flight."""
    rows = connection.execute(_HIDDEN_SQL, (queue_id, key, now_ms, now_ms // 1000)).fetchall()
    return fifo.Hold.of(map(message_of, rows), now_ms).held(now_ms)


def may_follow(connection: sqlite3.Connection, previous: Message | None, message: Message, now_ms: int) -> bool:
    """Whether a run may take `message` next: after `previous` (the run's last, taken in this transaction), no
    message of the group left between them; as the run's first (no `previous`), the group not held and no
    message of it before `message`."""
    key = group_key(message.message_group_id)
    if previous is None and _hidden(connection, message.queue_id, key, now_ms):
        return False
    after = _LOWEST if previous is None else previous.position
    between = connection.execute(_BETWEEN_SQL, (message.queue_id, key, after, message.position, now_ms // 1000))
    return between.fetchone() is None


def held_groups(connection: sqlite3.Connection, queue_id: str, now_ms: int, limit: int) -> list[str]:
    rows = connection.execute(_HELD_SQL, (queue_id, now_ms, now_ms // 1000, limit)).fetchall()
    return [key[HASH_DIGITS:] for (key,) in rows]
