"""The operation log table on DynamoDB (item layout: `mnsd.oplog.LogRecord.item`)."""

from __future__ import annotations

import time
from typing import Any

from mnsd.oplog import LogRecord

_BATCH = 25


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
