"""An SQLite database shared by threads: a bounded pool of connections on a file (WAL, readers never wait
for the writer; a thread holds one for a block, nested blocks of the thread use the same), one connection behind a
lock for `:memory:`. Writes are short `BEGIN IMMEDIATE` transactions; no lock is held between them. However many
threads come and go, the file is open `POOL_SIZE` times at most.

Durability: WAL with `synchronous=NORMAL`. A committed transaction survives a crash of the process
(it is in the WAL, which the OS holds); a power loss or OS crash may lose the transactions of the
last moments before it (never corrupts the database). `MNS_SQLITE_SYNCHRONOUS=FULL` syncs every commit.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from mnsd.model.messages import Message, Property

MEMORY = ":memory:"
BUSY_TIMEOUT_MS = 10_000
# Checkpoints (which sync the database file) are left to `checkpoint()`, called off the request path;
# a commit checkpoints itself only if the WAL grew past this many pages (about 40 MB) meanwhile.
AUTOCHECKPOINT_PAGES = 10_000
# Connections on a file at most (each holds the database and its WAL open): a thread beyond waits for one.
POOL_SIZE = 8

HASH_DIGITS = 8


@lru_cache(maxsize=4096)
def group_key(group: str) -> str:
    """How a FIFO message names its group in the indexes (column `group_key`, and the SQL function of that name):
    its hash (`HASH_DIGITS` hex digits, the same in every process) first, then the group (groups.py says why)."""
    digest = hashlib.blake2b(group.encode("utf-8"), digest_size=HASH_DIGITS // 2).hexdigest()
    return f"{digest}{group}"


# The message columns later versions added, each with its default: a database an older version made gets them
# as it opens (its messages unordered). `group_key`: a FIFO message's group, placed by its hash (groups.py).
ADDED_MESSAGE_COLUMNS = (
    ("fifo", "INTEGER NOT NULL DEFAULT 0"),
    ("group_key", "TEXT NOT NULL DEFAULT ''"),
)
# Message columns renamed since, (former name, name): an older database's are renamed as it opens (its partial
# indexes follow the column).
RENAMED_MESSAGE_COLUMNS = (("ordered", "fifo"),)
# The columns of a message row, in `messages` and in `kept_messages` alike.
MESSAGE_COLUMNS = (
    """
    queue_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    priority INTEGER NOT NULL,
    position INTEGER NOT NULL,
    visible_at INTEGER NOT NULL,
    version INTEGER NOT NULL,
    dequeue_count INTEGER NOT NULL,
    enqueue_time INTEGER NOT NULL,
    first_dequeue_time INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    body_md5 TEXT NOT NULL,
    body TEXT NOT NULL,
    user_properties TEXT,
    system_properties TEXT,
    message_group_id TEXT NOT NULL DEFAULT '',
    logging INTEGER NOT NULL DEFAULT 0,
"""
    + "".join(f"    {name} {declaration},\n" for name, declaration in ADDED_MESSAGE_COLUMNS)
    + "    PRIMARY KEY (queue_id, message_id)\n"
)
# Their names, in the order every statement reads and writes them (`message_of`).
COLUMNS = (
    "queue_id, message_id, priority, position, visible_at, version, dequeue_count, enqueue_time, "
    "first_dequeue_time, expires_at, body_md5, body, user_properties, system_properties, message_group_id, logging, "
    "fifo, group_key"
)
# The first of them, `queue_id` to `body`: the fields of a message that it holds as they are stored.
AS_STORED = tuple(COLUMNS.split(", ")[:12])

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS messages (
{MESSAGE_COLUMNS}) WITHOUT ROWID;
-- A receive reads only what it can claim: per priority, the messages already visible, oldest first.
CREATE INDEX IF NOT EXISTS messages_ready ON messages (queue_id, priority, visible_at);
-- Counts and the oldest message's enqueue time (a backlog is read from it alone), the next visible time.
CREATE INDEX IF NOT EXISTS messages_backlog ON messages (queue_id, visible_at, dequeue_count, expires_at, enqueue_time);
CREATE INDEX IF NOT EXISTS messages_expiry ON messages (expires_at);
-- Messages deleted while their queue's RewindPeriod was on: kept (never received nor counted) for a rewind.
CREATE TABLE IF NOT EXISTS kept_messages (
{MESSAGE_COLUMNS}) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kept_messages_enqueue ON kept_messages (queue_id, enqueue_time);
CREATE INDEX IF NOT EXISTS kept_messages_expiry ON kept_messages (expires_at);
-- Each group's counter of a FIFO queue (`MessageStore.sequence`), forgotten long after its last use.
CREATE TABLE IF NOT EXISTS message_groups (
    queue_id TEXT NOT NULL, message_group_id TEXT NOT NULL, next_position INTEGER NOT NULL, used_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, message_group_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS message_groups_used ON message_groups (used_at);
-- The change events of logging queues' messages (`changes.py`), for the operation log.
CREATE TABLE IF NOT EXISTS message_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (
    partition TEXT NOT NULL, name TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (partition, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS topic_messages (
    topic_id TEXT NOT NULL, message_id TEXT NOT NULL, expires_at INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (topic_id, message_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS topic_messages_expiry ON topic_messages (expires_at);
-- The operation log: a record (`mnsd.log.oplog.LogRecord`, JSON) by (partition, key), as `LogRecord` names them;
-- `message_id` (a copy of the record's) is added by `_upgrade` with the index on it (`ADDED_SCHEMA`).
CREATE TABLE IF NOT EXISTS operation_log (
    pk TEXT NOT NULL, sk TEXT NOT NULL, expires_at INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS operation_log_expiry ON operation_log (expires_at);
"""
# The index `messages_backlog` replaced (it lacked the enqueue time): dropped from an older database as it opens.
REPLACED_INDEX = "messages_visibility"
# Indexes on added columns: made once the columns are there (`Database._upgrade`).
ADDED_SCHEMA = """
-- A message's history: its records of one queue or topic (`SqliteOperationLog.history`).
CREATE INDEX IF NOT EXISTS operation_log_message ON operation_log (message_id, pk);
-- FIFO messages (FIFO queues) group by group, each in position order: its head and run, a claim's checks.
CREATE INDEX IF NOT EXISTS messages_groups ON messages (queue_id, group_key, position, expires_at) WHERE fifo = 1;
-- The FIFO messages received at least once, by group: a group is held while one of them is hidden.
CREATE INDEX IF NOT EXISTS messages_received
    ON messages (queue_id, group_key, visible_at, expires_at) WHERE fifo = 1 AND dequeue_count > 0;
"""


class Database:
    def __init__(self, path: str | Path, synchronous: str = "NORMAL") -> None:
        self.path = str(path)
        self.synchronous = synchronous if synchronous in ("OFF", "NORMAL", "FULL", "EXTRA") else "NORMAL"
        self._local = threading.local()
        self._memory_lock = threading.RLock()
        # Writers of this process queue here rather than in SQLite's busy handler, which sleeps in steps
        # of up to 100 ms; held for one short transaction only. (Other processes still meet busy_timeout.)
        self._write_lock = threading.Lock()
        self._memory: sqlite3.Connection | None = None
        # The pool's slots: an idle connection, or None for one not opened yet; a block takes one (waits while all
        # are taken) and gives it back. (SimpleQueue: a semaphore and a queue took a tenth of a lifecycle's time.)
        self._slots: queue.SimpleQueue[sqlite3.Connection | None] = queue.SimpleQueue()
        for _ in range(POOL_SIZE):
            self._slots.put(None)
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        if self.path == MEMORY:
            self._memory = self._open()
        else:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with self.read() as connection:
            connection.executescript(SCHEMA)
        self._upgrade()

    def _upgrade(self) -> None:
        """Rename and add the columns an older database lacks (in one transaction: another process may open it
        too), then the indexes on them."""
        with self.write() as connection:
            for table in ("messages", "kept_messages"):
                present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
                for former, name in RENAMED_MESSAGE_COLUMNS:
                    if former in present and name not in present:
                        connection.execute(f"ALTER TABLE {table} RENAME COLUMN {former} TO {name}")
                        present = (present - {former}) | {name}
                for name, declaration in ADDED_MESSAGE_COLUMNS:
                    if name not in present:
                        connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {declaration}")
            logged = {row[1] for row in connection.execute("PRAGMA table_info(operation_log)")}
            if "message_id" not in logged:  # the records written before it: their id copied from the record
                connection.execute("ALTER TABLE operation_log ADD COLUMN message_id TEXT")
                connection.execute("UPDATE operation_log SET message_id = json_extract(record, '$.message_id')")
        with self.read() as connection:
            connection.executescript(ADDED_SCHEMA)
            connection.execute(f"DROP INDEX IF EXISTS {REPLACED_INDEX}")

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != MEMORY:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
        connection.execute(f"PRAGMA synchronous = {self.synchronous}")
        connection.create_function("group_key", 1, group_key, deterministic=True)
        with self._all_lock:
            self._all.append(connection)
        return connection

    @contextmanager
    def _held(self) -> Iterator[sqlite3.Connection]:
        """The connection of this thread's block: the one it already holds, else one of the pool's (opened when none
        is idle), back to the pool when the block ends."""
        held: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if held is not None:
            yield held
            return
        slot = self._slots.get()
        try:
            connection = slot if slot is not None else self._open()
        except BaseException:
            self._slots.put(None)
            raise
        self._local.connection = connection
        try:
            yield connection
        finally:
            self._local.connection = None
            self._slots.put(connection)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads (each statement sees a committed snapshot)."""
        if self._memory is not None:
            with self._memory_lock:
                yield self._memory
        else:
            with self._held() as connection:
                yield connection

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises. (A pooled connection is taken
        before the write lock: the thread holding the lock never waits for a connection.)"""
        if self._memory is not None:
            with self._memory_lock:
                yield from _transaction(self._memory)
            return
        with self._held() as connection, self._write_lock:
            yield from _transaction(connection)

    def checkpoint(self) -> None:
        """Copy what the WAL holds into the database file, as far as readers allow (never waits for them)."""
        if self._memory is None:
            with self.read() as connection:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        with self._all_lock:
            connections, self._all = self._all, []
        for connection in connections:
            try:
                connection.close()
            except sqlite3.ProgrammingError:  # closed by another thread's use: nothing left to do
                pass


def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _parse_properties(text: str | None) -> tuple[Property, ...]:
    return tuple(Property(*entry) for entry in json.loads(text)) if text else ()


def message_of(row: tuple[Any, ...]) -> Message:
    """The message a row of `COLUMNS` holds: the fields `AS_STORED`, then those stored otherwise (properties as
    JSON, flags as integers); the row's `group_key` is the store's own."""
    return Message(
        **dict(zip(AS_STORED, row, strict=False)),
        user_properties=_parse_properties(row[12]),
        system_properties=_parse_properties(row[13]),
        message_group_id=row[14],
        logging=bool(row[15]),
        fifo=bool(row[16]),
    )
