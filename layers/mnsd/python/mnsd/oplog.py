"""The operation log: one item per message event of a queue or topic with LoggingEnabled.

Schema (docs/analytics.md): `pk = {account}#{kind}#{resource}`, `sk = {time_ms:013}#{event_id}`,
then `account, kind, resource, event, time, message_id` and the optional fields of `LogRecord`, with
`x` the TTL (epoch seconds). The same event may be written twice (retried writes): readers dedupe on
(pk, sk), so the event id must be stable for one event.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

RETENTION_SECONDS = 7 * 86400
_BATCH = 25


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
    outcome: str | None = None  # success | failure
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


class OperationLog:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def write(self, records: list[LogRecord]) -> None:
        """Writes every record or raises: the caller's batch is then retried (records are idempotent)."""
        for start in range(0, len(records), _BATCH):
            pending = [{"PutRequest": {"Item": r.item()}} for r in records[start : start + _BATCH]]
            for backoff in (0.05, 0.1, 0.2, 0.4, 0.8, 0):
                response = self.client.batch_write_item(RequestItems={self.table: pending})
                pending = response.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                time.sleep(backoff)
            if pending:
                raise RuntimeError(f"{len(pending)} operation-log records still unprocessed after retries")


# --- queue events, from the message table's stream ---------------------------------------------

TTL_PRINCIPAL = "dynamodb.amazonaws.com"  # who deletes an item whose TTL passed


def _number(image: dict[str, Any], name: str) -> int | None:
    return int(image[name]["N"]) if name in image else None


def _body_size(image: dict[str, Any]) -> int | None:
    from mnsd.storage.messages import body_of

    body = body_of(image)
    return None if body is None else len(body.encode("utf-8"))


def queue_event(record: dict[str, Any], account: str, queue: str) -> LogRecord | None:
    """The event one stream record of a lease item stands for (None for body items and no-op changes).

    Times: a send is stamped with its enqueue time and a first receive with its first dequeue time
    (both ms, from the item); other events with the stream record's time (DynamoDB gives seconds).
    """
    change = record["dynamodb"]
    new, old = change.get("NewImage") or {}, change.get("OldImage") or {}
    image = new or old
    if not image.get("sk", {}).get("S", "").startswith("L"):
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
    if name == "REMOVE":
        identity = record.get("userIdentity") or {}
        event = "expire" if identity.get("principalId") == TTL_PRINCIPAL else "delete"
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
    """Turns stream records of the message table into operation-log records of logging queues."""

    def __init__(self, meta: Any, oplog: OperationLog) -> None:
        self.meta = meta
        self.oplog = oplog
        self._queues: dict[str, tuple[str, str] | None] = {}

    def _queue(self, queue_id: str) -> tuple[str, str] | None:
        if queue_id not in self._queues:
            from mnsd.queue_service import QUEUE, QUEUE_IDS

            record = self.meta.get(QUEUE_IDS, QUEUE, queue_id)
            self._queues[queue_id] = None if record is None else (record["account"], record["name"])
        return self._queues[queue_id]

    def handle(self, records: list[dict[str, Any]]) -> int:
        """Log the events of flagged leases; the number of records written."""
        found = []
        for record in records:
            change = record["dynamodb"]
            image = change.get("NewImage") or change.get("OldImage") or {}
            if "l" not in image:
                continue
            queue = self._queue(image["pk"]["S"])
            if queue is None:
                continue
            event = queue_event(record, *queue)
            if event is not None:
                found.append(event)
        self.oplog.write(found)
        return len(found)
