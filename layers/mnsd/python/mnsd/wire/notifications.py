"""The notification a push carries: a topic message in its subscription's NotifyContentFormat.

XML is `<Notification>` with TopicOwner, TopicName, Subscriber, SubscriptionName, MessageId, Message,
MessageMD5, MessageTag (when set) and PublishTime; JSON has the same keys (PublishTime as a string, as in
the spec's example); SIMPLIFIED is the body alone. Queue endpoints, HTTP endpoints and dead-letter queues
receive the same text.
"""

from __future__ import annotations

import json
from typing import Any

from mnsd.model.topics import JSON, SIMPLIFIED, XML, Subscription, TopicMessage
from mnsd.wire import codec

# The content type of an HTTP push in each format.
CONTENT_TYPES = {
    XML: "text/xml;charset=utf-8",
    JSON: "application/json;charset=utf-8",
    SIMPLIFIED: "text/plain;charset=utf-8",
}


def notification_fields(subscription: Subscription, message: TopicMessage) -> list[tuple[str, Any]]:
    fields: list[tuple[str, Any]] = [
        ("TopicOwner", message.account_id),
        ("TopicName", message.topic_name),
        ("Subscriber", subscription.account_id),
        ("SubscriptionName", subscription.name),
        ("MessageId", message.message_id),
        ("Message", message.body),
        ("MessageMD5", message.body_md5),
    ]
    if message.tag:
        fields.append(("MessageTag", message.tag))
    return fields + [("PublishTime", message.publish_time)]


def notification_body(subscription: Subscription, message: TopicMessage) -> str:
    """The text a queue or HTTP endpoint receives, in the subscription's NotifyContentFormat."""
    content_format = subscription.attributes.notify_content_format
    if content_format == SIMPLIFIED:
        return message.body
    fields = notification_fields(subscription, message)
    if content_format == JSON:
        return json.dumps({name: str(value) if name == "PublishTime" else value for name, value in fields})
    return codec.encode(codec.Node("Notification", fields)).decode("utf-8")
