"""The operation log table on DynamoDB (item layout: `mnsd.oplog.LogRecord.item`)."""

from __future__ import annotations

import time
from typing import Any

from mnsd.metrics import LogEvent, LogRead, event_of
from mnsd.oplog import LogRecord

_BATCH = 25
_READ_PAGE = 1000


class DynamoOperationLog:
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
            events += [event_of(item) for item in page.get("Items", [])]
            remaining -= page.get("ScannedCount", 0)
            if "LastEvaluatedKey" not in page:
                return LogRead(events, truncated=False)
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return LogRead(events, truncated=True)
