"""A message's history on DynamoDB reads one key of the log's index `message`, however many records its queue holds:
one Query, no Scan, no filter (what `OperationLogStore.history` promises)."""

from __future__ import annotations

import uuid
from typing import Any

from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.log.oplog import LogRecord
from mnsd.storage.dynamodb.tables.oplog import MESSAGE_INDEX, DynamoOperationLog

NOW = 1_765_000_000_000


class Recording:
    """A DynamoDB client that notes each call's operation and arguments."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        def call(**kwargs: Any) -> Any:
            self.calls.append((name, kwargs))
            return method(**kwargs)

        return call


def test_one_messages_history_is_one_query_of_one_index_key(dynamodb) -> None:
    settings = Settings()
    create_tables(dynamodb, settings)
    log = DynamoOperationLog(dynamodb, settings.log_table)

    def record(n: int, message_id: str) -> LogRecord:
        return LogRecord("A", "queue", "q", "receive", NOW + n, message_id, uuid.uuid4().hex, dequeue_count=1)

    log.write([record(n, f"OTHER{n % 50}") for n in range(400)] + [record(n, "MINE") for n in range(3)])
    recording = Recording(dynamodb)

    found = DynamoOperationLog(recording, settings.log_table).history("A", "queue", "q", "MINE", 1000)

    assert [r.message_id for r in found.records] == ["MINE"] * 3 and not found.truncated
    ((operation, request),) = recording.calls
    assert operation == "query" and request["IndexName"] == MESSAGE_INDEX
    names, values = request["ExpressionAttributeNames"], request["ExpressionAttributeValues"]
    assert request["KeyConditionExpression"] == "(#0 = :0 AND #1 = :1)" and (names["#0"], names["#1"]) == (
        "message_id",
        "pk",
    )
    assert values == {":0": {"S": "MINE"}, ":1": {"S": "A#queue#q"}}
    assert "FilterExpression" not in request
