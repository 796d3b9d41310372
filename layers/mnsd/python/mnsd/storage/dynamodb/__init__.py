"""The DynamoDB engine: the service's tables on AWS (and on moto in tests and `MNS_ENGINE=moto`).

Only this package calls DynamoDB; it turns its errors (ConditionalCheckFailed) into domain outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from mnsd.settings import Settings
from mnsd.storage import Storage

ENGINE = "dynamodb"


def condition_failed(exc: ClientError) -> bool:
    """Whether a write was refused because its ConditionExpression did not hold."""
    return bool(exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException")


def conditional(call: Callable[..., Any], **request: Any) -> dict[str, Any] | None:
    """A conditional write's response, or None when its condition did not hold."""
    try:
        return dict(call(**request))
    except ClientError as exc:
        if condition_failed(exc):
            return None
        raise


def dynamodb_storage(client: Any, settings: Settings) -> Storage:
    from mnsd.storage.dynamodb.messages import DynamoMessageStore
    from mnsd.storage.dynamodb.meta import DynamoMetaTable
    from mnsd.storage.dynamodb.oplog import DynamoOperationLog
    from mnsd.storage.dynamodb.rates import DynamoRateCounter
    from mnsd.storage.dynamodb.topic_messages import DynamoTopicMessageStore
    from mnsd.stripes import Pressure

    pressure = Pressure()
    return Storage(
        engine=ENGINE,
        meta=DynamoMetaTable(client, settings.meta_table),
        messages=DynamoMessageStore(client, settings.message_table, pressure),
        topic_messages=DynamoTopicMessageStore(client, settings.topic_message_table),
        log=DynamoOperationLog(client, settings.log_table),
        pressure=pressure,
        rates=DynamoRateCounter(client, settings.meta_table),
    )
