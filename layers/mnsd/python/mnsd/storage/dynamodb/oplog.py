"""The operation log table on DynamoDB: one item per `LogRecord` (`log_item`), the layout docs/analytics.md
describes and the analytics jobs read from the table's exports.

`pk = {account}#{kind}#{resource}`, `sk = {time_ms:013}#{event_id}`, `x` the TTL (epoch seconds), then each
field of the record that has a value (numbers as N, the others as S).

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

MESSAGE_INDEX = "message"  # the records of one message: partition `message_id`, sort `pk`
_BATCH = 25
_READ_PAGE = 1000
_FIELDS = [field.name for field in dataclasses.fields(LogRecord) if field.name != "event_id"]


def log_item(record: LogRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": {"S": record.partition},
        "sk": {"S": record.key},
        "x": {"N": str(record.expires_at)},
    }
    for name in _FIELDS:
        value = getattr(record, name)
        if value is not None and (value != "" or name != "message_id"):  # (no empty string as an index key)
            item[name] = {"N": str(value)} if isinstance(value, int) else {"S": str(value)}
    return item


def record_of(item: dict[str, Any]) -> LogRecord:
    """The record a log item stores."""
    fields: dict[str, Any] = {
        name: int(item[name]["N"]) if "N" in item[name] else item[name]["S"] for name in _FIELDS if name in item
    }
    fields.setdefault("message_id", "")
    return LogRecord(event_id=item["sk"]["S"].split("#", 1)[1], **fields)


def _event_of(item: dict[str, Any]) -> LogEvent:
    """The counted fields of a log item, as a read projects it."""

    def number(name: str) -> int | None:
        return int(item[name]["N"]) if name in item else None

    def text(name: str) -> str | None:
        return item[name]["S"] if name in item else None

    return LogEvent(
        time=int(item["sk"]["S"][:13]),
        event=text("event") or "",
        message_id=text("message_id") or "",
        dequeue_count=number("dequeue_count"),
        subscription=text("subscription"),
        attempt=number("attempt"),
        outcome=text("outcome"),
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
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :start AND :end",
            "ProjectionExpression": "sk, #event, message_id, dequeue_count, #subscription, attempt, outcome",
            "ExpressionAttributeNames": {"#event": "event", "#subscription": "subscription"},
            "ExpressionAttributeValues": {
                ":pk": {"S": f"{account}#{kind}#{resource}"},
                ":start": {"S": f"{start_ms:013d}"},
                ":end": {"S": f"{end_ms:013d}~"},  # "~" sorts after the "#" that ends the time
            },
        }
        if subscription:
            request["FilterExpression"] = "#subscription = :subscription"
            request["ExpressionAttributeValues"][":subscription"] = {"S": subscription}
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
        request: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": MESSAGE_INDEX,
            "KeyConditionExpression": "message_id = :m AND pk = :pk",
            "ExpressionAttributeValues": {":m": {"S": message_id}, ":pk": {"S": f"{account}#{kind}#{resource}"}},
        }
        records: list[LogRecord] = []
        while len(records) <= limit:  # (one more than `limit`: whether more are left)
            page = self.client.query(**request, Limit=min(_READ_PAGE, limit + 1 - len(records)))
            records += [record_of(item) for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return HistoryRead(records[:limit], truncated=len(records) > limit)
