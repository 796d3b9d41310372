"""A message's history by its id: the operation log's records of one message of one queue or topic, oldest first.

Each engine's log store finds them by an index on the message id (`OperationLogStore.history`: no scan of the
queue's partition). `message_history` decides the answer, one of:

- `History`: the events found (copies of one event, written twice by a retried write, once), in time order;
- `NotLogging`: nothing found and the queue or topic does not log (LoggingEnabled off);
- `AgedOut`: nothing found, and the message id says it was made before the log's window (the log keeps each
  record `RETENTION_SECONDS`): its events were recorded, and forgotten;
- `NotInWindow`: nothing found in the window, for a message the window should hold (or an id of no known shape).

Records found are answered even when logging is off now: they were written while it was on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mnsd.log.oplog import RETENTION_SECONDS, LogRecord

MAX_EVENTS = 1000  # read per call at most (a message received a thousand times is a poison message already)


@dataclass(frozen=True)
class HistoryRead:
    records: list[LogRecord]
    truncated: bool  # the limit stopped the read


class HistoryReader(Protocol):
    def history(self, account: str, kind: str, resource: str, message_id: str, limit: int) -> HistoryRead: ...


@dataclass(frozen=True)
class History:
    events: list[LogRecord]  # oldest first
    truncated: bool
    since_ms: int  # the start of the log's window: nothing older is kept
    logging_enabled: bool


@dataclass(frozen=True)
class NotLogging:
    pass


@dataclass(frozen=True)
class AgedOut:
    made_ms: int  # when the message id was made
    since_ms: int


@dataclass(frozen=True)
class NotInWindow:
    since_ms: int


HistoryAnswer = History | NotLogging | AgedOut | NotInWindow


def window_start(now_ms: int) -> int:
    """The oldest time whose records the log still keeps."""
    return now_ms - RETENTION_SECONDS * 1000


def in_order(records: list[LogRecord]) -> list[LogRecord]:
    """One record per event (`LogRecord.key` names it), by time, then by the event's place in a message's life."""
    unique = {(record.partition, record.key): record for record in records}
    return sorted(unique.values(), key=lambda r: (r.time, _ORDER.get(r.event, len(_ORDER)), r.key))


# Events of one message in the same millisecond: in the order they can happen.
_ORDER = {
    name: n
    for n, name in enumerate(
        ("send", "publish", "receive", "change_visibility", "push", "delete", "rewind", "dead_letter", "redrive")
    )
}


def message_history(
    reader: HistoryReader,
    account: str,
    kind: str,
    resource: str,
    message_id: str,
    logging_enabled: bool,
    now_ms: int,
    made_ms: int | None,
) -> HistoryAnswer:
    """The answer for one message (see the module's docstring); `made_ms`: when its id says it was made, if it says."""
    since = window_start(now_ms)
    read = reader.history(account, kind, resource, message_id, MAX_EVENTS)
    kept = [record for record in read.records if record.expires_at * 1000 > now_ms]  # TTL deletes lazily
    if kept:
        return History(in_order(kept), read.truncated, since, logging_enabled)
    if not logging_enabled:
        return NotLogging()
    if made_ms is not None and made_ms < since:
        return AgedOut(made_ms, since)
    return NotInWindow(since)
