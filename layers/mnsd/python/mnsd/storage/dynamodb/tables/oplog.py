"""The operation log table on DynamoDB: one item per `LogRecord` (`log_item`), the layout docs/analytics.md
describes and the analytics jobs read from the table's exports.

Its items are `items.log.LogItem`s: `pk = {account}#{kind}#{resource}`, `sk = {time_ms:013}#{event_id}`, `x` the
TTL (epoch seconds), then each field of the record that has a value (numbers as N, the others as S).

The index `MESSAGE_INDEX` (partition `message_id`, sort `pk`, every attribute projected) finds one message's
records of one queue or topic (`history`). Both are attributes every item has had from the first version, so the
index holds the items written before it was added (DynamoDB fills a new index from the table).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from mnsd.log.history import HistoryRead
from mnsd.log.metrics import LogEvent, LogRead
from mnsd.log.oplog import LogRecord
from mnsd.storage.dynamodb.items.log import MESSAGE_INDEX, LogItem
from mnsd.storage.dynamodb.items.wire import Expression, item_of
from mnsd.storage.dynamodb.items.wire import record_of as _read

__all__ = ["MESSAGE_INDEX", "DynamoOperationLog", "log_item", "record_of"]

_BATCH = 25
_READ_PAGE = 1000
_FIELDS = [field.name for field in dataclasses.fields(LogRecord) if field.name != "event_id"]
# What a read of counts projects: the key that holds the time, and the counted fields (`LogEvent`).
_COUNTED: tuple[Any, ...] = (LogItem.sk, LogItem.event, LogItem.message_id, LogItem.dequeue_count)
_COUNTED += (LogItem.subscription, LogItem.attempt, LogItem.outcome)


def log_item(record: LogRecord) -> dict[str, Any]:
    fields = {name: getattr(record, name) for name in _FIELDS}
    stored = {
        name: value
        for name, value in fields.items()
        if value is not None and (value != "" or name != "message_id")  # (no empty string as an index key)
    }
    return item_of(LogItem, {"pk": record.partition, "sk": record.key, "x": record.expires_at, **stored})


def record_of(item: dict[str, Any]) -> LogRecord:
    """The record a log item stores."""
    fields = _read(LogItem, item)
    event_id = fields.pop("sk").split("#", 1)[1]
    fields = {name: value for name, value in fields.items() if name in _FIELDS}
    fields.setdefault("message_id", "")
    return LogRecord(event_id=event_id, **fields)


def _event_of(item: dict[str, Any]) -> LogEvent:
    """The counted fields of a log item, as a read projects it."""
    read = _read(LogItem, item)
    return LogEvent(
        time=int(read["sk"][:13]),
        event=read.get("event") or "",
        message_id=read.get("message_id") or "",
        dequeue_count=read.get("dequeue_count"),
        subscription=read.get("subscription"),
        attempt=read.get("attempt"),
        outcome=read.get("outcome"),
    )


class DynamoOperationLog:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def write(self, records: list[LogRecord]) -> None:
        """Writes every record or raises: the caller's batch is then retried (records are idempotent)."""
        for start in range(0, len(records), _BATCH):
            pending = [{"PutRequest": {"Item": log_item(r)}} for r in records[start : start + _BATCH]]
            for backoff in (0.05, 0.1, 0.2, 0.4, 0.8, 0):
                response = self.client.batch_write_item(RequestItems={self.table: pending})
                pending = response.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                time.sleep(backoff)
            if pending:
                raise RuntimeError(f"{len(pending)} operation-log records still unprocessed after retries")

    def read(
        self, account: str, kind: str, resource: str, start_ms: int, end_ms: int, limit: int, subscription: str = ""
    ) -> LogRead:
        """One partition, a key range of times, the counted fields only; at most `limit` items read."""
        read = Expression()
        keys = (LogItem.pk == f"{account}#{kind}#{resource}") & LogItem.sk.between(
            f"{start_ms:013d}",
            f"{end_ms:013d}~",  # "~" sorts after the "#" that ends the time
        )
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": read.condition(keys),
            "ProjectionExpression": read.projection(*_COUNTED),
        }
        if subscription:
            request["FilterExpression"] = read.condition(LogItem.subscription == subscription)
        request.update(read.arguments())
        events: list[LogEvent] = []
        remaining = limit
        while remaining > 0:
            page = self.client.query(**request, Limit=min(_READ_PAGE, remaining))
            events += [_event_of(item) for item in page.get("Items", [])]
            remaining -= page.get("ScannedCount", 0)
            if "LastEvaluatedKey" not in page:
                return LogRead(events, truncated=False)
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return LogRead(events, truncated=True)

    def history(self, account: str, kind: str, resource: str, message_id: str, limit: int) -> HistoryRead:
        """One message's records of one queue or topic, from `MESSAGE_INDEX` (one key, at most `limit` read)."""
        found = Expression()
        keys = (LogItem.message_id == message_id) & (LogItem.pk == f"{account}#{kind}#{resource}")
        request: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": MESSAGE_INDEX,
            "KeyConditionExpression": found.condition(keys),
            **found.arguments(),
        }
        records: list[LogRecord] = []
        while len(records) <= limit:  # (one more than `limit`: whether more are left)
            page = self.client.query(**request, Limit=min(_READ_PAGE, limit + 1 - len(records)))
            records += [record_of(item) for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return HistoryRead(records[:limit], truncated=len(records) > limit)
