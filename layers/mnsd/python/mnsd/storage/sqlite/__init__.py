"""The embedded engine: every table in one SQLite database (standard library, WAL mode).

`sqlite_storage(path)` opens (or creates) the database at `path`, or a throwaway one for `:memory:`.
See `database.py` for the durability each setting gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mnsd.storage import Storage
from mnsd.storage.sqlite.database import MEMORY, Database
from mnsd.storage.sqlite.messages import SqliteMessageStore
from mnsd.storage.sqlite.stores import SqliteMetaTable, SqliteOperationLog, SqliteTopicMessageStore

ENGINE = "sqlite"
DATABASE_FILE = "mns.sqlite3"

__all__ = ["ENGINE", "MEMORY", "Database", "SqliteStorage", "sqlite_storage"]


@dataclass(frozen=True)
class SqliteStorage(Storage):
    messages: SqliteMessageStore
    meta: SqliteMetaTable
    topic_messages: SqliteTopicMessageStore
    log: SqliteOperationLog
    database: Database

    def sweep_expired(self, now_ms: int) -> int:
        """Remove what retention ended (messages, topic messages, log records); how many messages."""
        removed = self.messages.sweep_expired(now_ms)
        self.topic_messages.sweep_expired(now_ms)
        self.log.sweep_expired(now_ms)
        return removed


def sqlite_storage(path: str | Path, synchronous: str = "NORMAL") -> SqliteStorage:
    """The engine on a database file (or `:memory:`); a directory holds the file `mns.sqlite3`."""
    target = str(path)
    if target != MEMORY and Path(target).suffix == "":
        target = str(Path(target) / DATABASE_FILE)
    database = Database(target, synchronous)
    storage = SqliteStorage(
        engine=ENGINE,
        meta=SqliteMetaTable(database),
        messages=SqliteMessageStore(database),
        topic_messages=SqliteTopicMessageStore(database),
        log=SqliteOperationLog(database),
        database=database,
    )
    return storage
