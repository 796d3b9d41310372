"""The operation log: one item per message event of a queue or topic with LoggingEnabled.

Schema (docs/analytics.md): `pk = {account}#{kind}#{resource}`, `sk = {time_ms:013}#{event_id}`,
then `account, kind, resource, event, time, message_id` and the optional fields of `LogRecord`, with
`x` the TTL (epoch seconds). The same event may be written twice (retried writes): readers dedupe on
(pk, sk), so the event id must be stable for one event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mnsd.storage.dynamodb import layout

if TYPE_CHECKING:
    from mnsd.storage.catalog import Catalog

RETENTION_SECONDS = 7 * 86400


@dataclass(frozen=True)
class LogRecord:
    account: str
    kind: str  # queue | topic
    resource: str
    event: str  # send receive delete change_visibility expire publish push drop
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

    def item(self) -> dict[str, Any]:
        fields = asdict(self)
        event_id = fields.pop("event_id")
        item: dict[str, Any] = {
            "pk": {"S": f"{self.account}#{self.kind}#{self.resource}"},
            "sk": {"S": f"{self.time:013d}#{event_id}"},
            "x": {"N": str(self.time // 1000 + RETENTION_SECONDS)},
        }
        for name, value in fields.items():
            if value is not None:
                item[name] = {"N": str(value)} if isinstance(value, int) else {"S": str(value)}
        return item


class OperationLog(Protocol):
    """Where log records go (each storage engine has its log table)."""

    def write(self, records: list[LogRecord]) -> None: ...


# --- queue events, from the message table's stream ---------------------------------------------

TTL_PRINCIPAL = "dynamodb.amazonaws.com"  # who deletes an item whose TTL passed


_number = layout.number


def _body_size(image: dict[str, Any]) -> int | None:
    body = layout.body_of(image)
    return None if body is None else len(body.encode("utf-8"))


def queue_event(record: dict[str, Any], account: str, queue: str) -> LogRecord | None:
    """The event one stream record of a lease item stands for (None for body items and no-op changes).

    Times: a send is stamped with its enqueue time and a first receive with its first dequeue time
    (both ms, from the item); other events with the stream record's time (DynamoDB gives seconds).
    """
    change = record["dynamodb"]
    new, old = change.get("NewImage") or {}, change.get("OldImage") or {}
    image = new or old
    if not layout.is_lease(image):
        return None
    approximate = int(float(change.get("ApproximateCreationDateTime", 0)) * 1000)
    enqueue_time = _number(image, "e") or 0
    first_dequeue = _number(image, "f")
    common = {
        "account": account,
        "kind": "queue",
        "resource": queue,
        "message_id": image["id"]["S"],
        "event_id": record["eventID"],
        "enqueue_time": enqueue_time,
    }
    name = record["eventName"]
    if name == "INSERT":
        visible_at = _number(new, "v") or enqueue_time
        return LogRecord(
            event="send", time=enqueue_time, dequeue_count=0, priority=int(image["sk"]["S"][1:3]),
            delay=max(0, visible_at - enqueue_time) // 1000, body_size=_body_size(new), **common,
        )  # fmt: skip
    count = _number(image, "d") or 0
    if layout.is_kept(old):
        return None  # a kept lease (deleted with rewind on) rewound, dropped or expired: its delete was logged
    if layout.is_kept(new):  # deleted with rewind on: the lease is kept in place
        return LogRecord(
            event="delete", time=approximate, dequeue_count=count, first_dequeue_time=first_dequeue if count else None,
            **common,
        )  # fmt: skip
    if name == "REMOVE":
        # TTL's deletes, and a receive's of a lease it met past its retention (a delete by a receipt handle
        # needs an unexpired lease), are expiries.
        identity = record.get("userIdentity") or {}
        expires_at = _number(image, layout.TTL_ATTRIBUTE)
        lapsed = expires_at is not None and approximate and expires_at <= approximate // 1000
        event = "expire" if identity.get("principalId") == TTL_PRINCIPAL or lapsed else "delete"
        return LogRecord(
            event=event, time=approximate, dequeue_count=count, first_dequeue_time=first_dequeue if count else None,
            **common,
        )  # fmt: skip
    if count > (_number(old, "d") or 0):
        at = first_dequeue if count == 1 and first_dequeue is not None else approximate
        return LogRecord(event="receive", time=at, dequeue_count=count, first_dequeue_time=first_dequeue, **common)
    if _number(new, "r") != _number(old, "r"):
        return LogRecord(event="change_visibility", time=approximate, dequeue_count=count, **common)
    return None


class QueueEventLog:
    """Turns change records of the message table (DynamoDB stream records, or the embedded engine's
    records of the same shape) into operation-log records of logging queues."""

    def __init__(self, catalog: Catalog, oplog: OperationLog) -> None:
        self.catalog = catalog
        self.oplog = oplog
        self._queues: dict[str, tuple[str, str] | None] = {}

    def _queue(self, queue_id: str) -> tuple[str, str] | None:
        if queue_id not in self._queues:
            self._queues[queue_id] = self.catalog.queue_name(queue_id)
        return self._queues[queue_id]

    def handle(self, records: list[dict[str, Any]]) -> int:
        """Log the events of flagged leases; the number of records written."""
        found = []
        for record in records:
            change = record["dynamodb"]
            image = change.get("NewImage") or change.get("OldImage") or {}
            if layout.LOGGING_ATTRIBUTE not in image:
                continue
            queue = self._queue(layout.queue_id_of(image[layout.PARTITION_KEY]["S"]))
            if queue is None:
                continue
            event = queue_event(record, *queue)
            if event is not None:
                found.append(event)
        self.oplog.write(found)
        return len(found)
