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
        for start in range(0, len(records), _BATCH):
            pending = [{"PutRequest": {"Item": r.item()}} for r in records[start : start + _BATCH]]
            for backoff in (0.05, 0.1, 0.2, 0.4, 0.8, 0):
                response = self.client.batch_write_item(RequestItems={self.table: pending})
                pending = response.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                time.sleep(backoff)
