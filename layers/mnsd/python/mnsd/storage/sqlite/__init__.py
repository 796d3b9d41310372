"""The embedded engine: every table in one SQLite database (standard library, WAL mode).

`sqlite_storage(data_dir)` opens (or creates) the database in `data_dir`, or a throwaway one for `:memory:`.
See `database.py` for the durability each setting gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mnsd.storage import Storage
from mnsd.storage.sqlite.database import MEMORY, Database
from mnsd.storage.sqlite.fifo import SqliteFifoMessages
from mnsd.storage.sqlite.messages import SqliteMessageStore
from mnsd.storage.sqlite.stores import SqliteMetaTable, SqliteOperationLog, SqliteTopicMessageStore

ENGINE = "sqlite"
DATABASE_FILE = "mns.sqlite3"

__all__ = ["ENGINE", "MEMORY", "Database", "SqliteStorage", "sqlite_storage"]


@dataclass(frozen=True)
class SqliteStorage(Storage):
    messages: SqliteMessageStore
    fifo_messages: SqliteFifoMessages
    meta: SqliteMetaTable
    topic_messages: SqliteTopicMessageStore
    log: SqliteOperationLog
    database: Database

    def sweep_expired(self, now_ms: int) -> int:
        """Remove what retention ended (messages of either kind, topic messages, log records); how many messages."""
        removed = self.messages.sweep_expired(now_ms)
        self.topic_messages.sweep_expired(now_ms)
        self.log.sweep_expired(now_ms)
        return removed


def sqlite_storage(data_dir: str | Path, synchronous: str = "NORMAL") -> SqliteStorage:
    """The engine on the file `mns.sqlite3` of a data directory, whatever its name (`/tmp/tmp.Ab12` too),
    created if missing; or on a throwaway database for `:memory:`."""
    target = MEMORY if str(data_dir) == MEMORY else str(Path(data_dir) / DATABASE_FILE)
    database = Database(target, synchronous)
    storage = SqliteStorage(
        engine=ENGINE,
        meta=SqliteMetaTable(database),
        messages=SqliteMessageStore(database),
        fifo_messages=SqliteFifoMessages(database),
        topic_messages=SqliteTopicMessageStore(database),
        log=SqliteOperationLog(database),
        database=database,
    )
    return storage
