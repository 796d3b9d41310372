"""The DynamoDB tables the service needs, as the local runtime and the tests create them.

The CDK app declares the same keys and TTL attribute (see infra/).
"""

from __future__ import annotations

from typing import Any

from mnsd.ground.settings import Settings
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.oplog import MESSAGE_INDEX

KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
KEY_ATTRIBUTES = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]
TTL_ATTRIBUTE = layout.TTL_ATTRIBUTE
# The message table's ready index: the leases of an indexing queue by visibility time (`layout.READY_INDEX`).
READY_INDEX = {
    "IndexName": layout.READY_INDEX,
    "KeySchema": [
        {"AttributeName": layout.PARTITION_KEY, "KeyType": "HASH"},
        {"AttributeName": layout.INDEX_KEY, "KeyType": "RANGE"},
    ],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(layout.INDEX_ATTRIBUTES)},
}

# The log table's index of one message's records (`mnsd.storage.dynamodb.tables.oplog.MESSAGE_INDEX`).
LOG_MESSAGE_INDEX = {
    "IndexName": MESSAGE_INDEX,
    "KeySchema": [{"AttributeName": "message_id", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"},
}


def create_tables(client: Any, settings: Settings) -> None:
    tables = (settings.meta_table, settings.message_table, settings.topic_message_table, settings.log_table)
    for name in tables:
        # The message table's stream feeds the operation log, as on AWS.
        stream = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        messages: dict[str, Any] = {
            "StreamSpecification": stream,
            "GlobalSecondaryIndexes": [READY_INDEX],
            "AttributeDefinitions": [*KEY_ATTRIBUTES, {"AttributeName": layout.INDEX_KEY, "AttributeType": "N"}],
        }
        log: dict[str, Any] = {
            "GlobalSecondaryIndexes": [LOG_MESSAGE_INDEX],
            "AttributeDefinitions": [*KEY_ATTRIBUTES, {"AttributeName": "message_id", "AttributeType": "S"}],
        }
        shape = {settings.message_table: messages, settings.log_table: log}.get(
            name, {"AttributeDefinitions": KEY_ATTRIBUTES}
        )
        client.create_table(TableName=name, KeySchema=KEY_SCHEMA, BillingMode="PAY_PER_REQUEST", **shape)
        # Point-in-time recovery: what ExportTableToPointInTime needs (the analytics exports).
        client.update_continuous_backups(
            TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
    for name in tables:  # the meta table: request counters (`mnsd.storage.dynamodb.tables.rates`)
        client.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
        )
