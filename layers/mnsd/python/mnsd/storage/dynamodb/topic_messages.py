"""The topic message table on DynamoDB: one item per published message, written once, removed by TTL after a day.

`pk` is the topic incarnation, `sk` the message id. The item carries everything a delivery needs,
so the stream record that announces it (on AWS) is enough to fan it out without another read.

Attributes: a account, t topic name, p publish ms, g tag, b/z body (as in the message table),
ml DirectMail JSON, ms DirectSMS JSON, u user properties, l LoggingEnabled, me MetricsEnabled (where the topic
set it), x expiry (epoch seconds, TTL).
"""

from __future__ import annotations

import json
from typing import Any

from mnsd.model.topics import TOPIC_RETENTION_SECONDS, TopicMessage
from mnsd.storage.dynamodb import queries
from mnsd.storage.dynamodb.layout import body_attributes, body_of, parse_properties, properties


def to_item(message: TopicMessage) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": {"S": message.topic_id},
        "sk": {"S": message.message_id},
        "a": {"S": message.account_id},
        "t": {"S": message.topic_name},
        "p": {"N": str(message.publish_time)},
        "x": {"N": str(message.publish_time // 1000 + TOPIC_RETENTION_SECONDS)},
        **body_attributes(message.body),
    }
    if message.tag:
        item["g"] = {"S": message.tag}
    if message.direct_mail is not None:
        item["ml"] = {"S": json.dumps(message.direct_mail)}
    if message.direct_sms is not None:
        item["ms"] = {"S": json.dumps(message.direct_sms)}
    if message.logging_enabled:
        item["l"] = {"BOOL": True}
    if message.metrics_enabled is not None:
        item["me"] = {"BOOL": message.metrics_enabled}
    if message.user_properties:
        item["u"] = properties(message.user_properties)
    if message.message_group_id:
        item["mg"] = {"S": message.message_group_id}
    return item


def from_item(item: dict[str, Any]) -> TopicMessage:
    """A message from its item, as read or as a stream record's NewImage."""
    return TopicMessage(
        account_id=item["a"]["S"],
        topic_name=item["t"]["S"],
        topic_id=item["pk"]["S"],
        message_id=item["sk"]["S"],
        body=body_of(item) or "",
        tag=item["g"]["S"] if "g" in item else "",
        publish_time=int(item["p"]["N"]),
        direct_mail=json.loads(item["ml"]["S"]) if "ml" in item else None,
        direct_sms=json.loads(item["ms"]["S"]) if "ms" in item else None,
        user_properties=parse_properties(item.get("u")),
        logging_enabled="l" in item,
        metrics_enabled=item["me"]["BOOL"] if "me" in item else None,
        message_group_id=item["mg"]["S"] if "mg" in item else "",
    )


class DynamoTopicMessageStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def put(self, message: TopicMessage) -> None:
        self.client.put_item(TableName=self.table, Item=to_item(message))

    def get(self, topic_id: str, message_id: str, now_ms: int) -> TopicMessage | None:
        """A message still in its retention period, or None."""
        response = self.client.get_item(TableName=self.table, Key={"pk": {"S": topic_id}, "sk": {"S": message_id}})
        item = response.get("Item")
        if item is None or int(item["x"]["N"]) <= now_ms // 1000:
            return None
        return from_item(item)

    def count(self, topic_id: str, now_ms: int) -> int:
        """Messages published in the retention period (TTL deletes lazily: expired items are filtered)."""
        return queries.count(
            self.client,
            TableName=self.table,
            KeyConditionExpression="pk = :pk",
            FilterExpression="x > :now",
            ExpressionAttributeValues={":pk": {"S": topic_id}, ":now": {"N": str(now_ms // 1000)}},
        )
