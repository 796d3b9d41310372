"""The operation log: one item per message event of a queue or topic with LoggingEnabled.

A record is kept under `{account}#{kind}#{resource}` and `{time_ms:013}#{event_id}`, for `RETENTION_SECONDS`
(each engine's log table; the DynamoDB item, which the analytics jobs read from exports, is
`mnsd.storage.dynamodb.tables.oplog.log_item`, schema in docs/analytics.md). The same event may be written twice
(retried writes): readers dedupe on that key, so the event id must be stable for one event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Protocol

from mnsd.log.changes import MessageChange

RETENTION_SECONDS = 7 * 86400


@dataclass(frozen=True)
class LogRecord:
    account: str
    kind: str  # queue | topic
    resource: str
    event: str  # send receive change_visibility delete dead_letter redrive rewind expire publish push drop
    time: int  # ms
    message_id: str
    event_id: str
    enqueue_time: int | None = None
    dequeue_count: int | None = None
    first_dequeue_time: int | None = None
    priority: int | None = None
    delay: int | None = None
    body_size: int | None = None
    subscription: str | None = None
    endpoint_kind: str | None = None
    attempt: int | None = None
    outcome: str | None = None  # success | failure (push); dead_letter (a drop that went to the DLQ)
    status: int | None = None
    latency_ms: int | None = None
    publish_time: int | None = None
    access_key_id: str | None = None  # who sent, received or re-timed it (`mnsd.log.changes`)
    next_visible_time: int | None = None  # receive, change_visibility: ms (0 s from `time`: given back)
    target_queue: str | None = None  # dead_letter, redrive: the queue it went to
    target_message_id: str | None = None  # dead_letter, redrive: its id there

    @property
    def partition(self) -> str:
        return f"{self.account}#{self.kind}#{self.resource}"

    @property
    def key(self) -> str:
        """The record's place in its partition: time order, then the event id."""
        return f"{self.time:013d}#{self.event_id}"

    @property
    def expires_at(self) -> int:
        """When the log forgets it (epoch seconds)."""
        return self.time // 1000 + RETENTION_SECONDS


class OperationLog(Protocol):
    """Where log records go (each storage engine has its log table)."""

    def write(self, records: list[LogRecord]) -> None: ...


# --- queue events, from the engines' message change events -------------------------------------


class QueueNames(Protocol):
    def queue_name(self, queue_id: str) -> tuple[str, str] | None:
        """(account, name) of the queue an id was made for (the queue may have been deleted since)."""
        ...


def queue_record(change: MessageChange, account: str, queue: str, target_queue: str | None = None) -> LogRecord:
    """The log record of a message change of the queue `queue` of `account` (a move's: to `target_queue`)."""
    fields = asdict(change)
    del fields["queue_id"], fields["target_queue_id"]
    fields["target_queue"] = target_queue
    fields["event"] = change.event.value
    return LogRecord(account=account, kind="queue", resource=queue, event_id=fields.pop("change_id"), **fields)


class QueueEventLog:
    """Writes the message change events of logging queues (whichever engine reported them) to the log."""

    def __init__(self, queues: QueueNames, oplog: OperationLog) -> None:
        self.queues = queues
        self.oplog = oplog
        self._names: dict[str, tuple[str, str] | None] = {}

    def _queue(self, queue_id: str) -> tuple[str, str] | None:
        if queue_id not in self._names:
            self._names[queue_id] = self.queues.queue_name(queue_id)
        return self._names[queue_id]

    def handle(self, changes: list[MessageChange]) -> int:
        """Log the events of queues that still have a name; the number of records written."""
        found = []
        for change in changes:
            queue = self._queue(change.queue_id)
            if queue is not None:
                target = self._queue(change.target_queue_id) if change.target_queue_id else None
                found.append(queue_record(change, *queue, target_queue=target[1] if target else None))
        self.oplog.write(found)
        return len(found)
