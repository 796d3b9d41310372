"""The topic message table on DynamoDB: one item per published message, written once, removed by TTL after a day.

Its items are `items.topic.TopicMessageItem`s: `pk` the topic incarnation, `sk` the message id. The item carries
everything a delivery needs, so the stream record that announces it (on AWS) is enough to fan it out without another
read.
"""

from __future__ import annotations

import json
from typing import Any

from mnsd.model.messages import Property
from mnsd.model.topics import TOPIC_RETENTION_SECONDS, TopicMessage
from mnsd.storage.dynamodb.items.layout import body_attributes, body_of
from mnsd.storage.dynamodb.items.topic import TopicMessageItem
from mnsd.storage.dynamodb.items.wire import Expression, item_of, key_of, record_of
from mnsd.storage.dynamodb.tables import queries


def to_item(message: TopicMessage) -> dict[str, Any]:
    body = record_of(TopicMessageItem, body_attributes(message.body))  # (`b` or `z`, as the message table has it)
    given: dict[str, Any] = {
        "g": message.tag or None,
        "ml": None if message.direct_mail is None else json.dumps(message.direct_mail),
        "ms": None if message.direct_sms is None else json.dumps(message.direct_sms),
        "l": message.logging_enabled or None,
        "me": message.metrics_enabled,
        "u": [[p.name, p.value, p.type] for p in message.user_properties] or None,
        "mg": message.message_group_id or None,
    }
    record = {
        "pk": message.topic_id,
        "sk": message.message_id,
        "a": message.account_id,
        "t": message.topic_name,
        "p": message.publish_time,
        "x": message.publish_time // 1000 + TOPIC_RETENTION_SECONDS,
        **body,
        **{name: value for name, value in given.items() if value is not None},  # (what a message has not, left out)
    }
    return item_of(TopicMessageItem, record)


def from_item(item: dict[str, Any]) -> TopicMessage:
    """A message from its item, as read or as a stream record's NewImage."""
    read = record_of(TopicMessageItem, item)
    return TopicMessage(
        account_id=read["a"],
        topic_name=read["t"],
        topic_id=read["pk"],
        message_id=read["sk"],
        body=body_of(item) or "",
        tag=read.get("g") or "",
        publish_time=read["p"],
        direct_mail=json.loads(read["ml"]) if "ml" in read else None,
        direct_sms=json.loads(read["ms"]) if "ms" in read else None,
        user_properties=tuple(Property(*entry) for entry in read.get("u") or ()),
        logging_enabled="l" in read,
        metrics_enabled=read.get("me"),
        message_group_id=read.get("mg") or "",
    )


class DynamoTopicMessageStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def put(self, message: TopicMessage) -> None:
        self.client.put_item(TableName=self.table, Item=to_item(message))

    def get(self, topic_id: str, message_id: str, now_ms: int) -> TopicMessage | None:
        """A message still in its retention period, or None."""
        response = self.client.get_item(TableName=self.table, Key=key_of(TopicMessageItem, topic_id, message_id))
        item = response.get("Item")
        if item is None or record_of(TopicMessageItem, item)["x"] <= now_ms // 1000:
            return None
        return from_item(item)

    def count(self, topic_id: str, now_ms: int) -> int:
        """Messages published in the retention period (TTL deletes lazily: expired items are filtered)."""
        kept = Expression()
        return queries.count(
            self.client,
            TableName=self.table,
            KeyConditionExpression=kept.condition(TopicMessageItem.pk == topic_id),
            FilterExpression=kept.condition(TopicMessageItem.x > now_ms // 1000),
            **kept.arguments(),
        )
