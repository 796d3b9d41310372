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


# What an EventBridge push puts on its bus: rules match `{"source": ["mns"], "detail-type": ["MNS Notification"]}`.
EVENT_SOURCE = "mns"
EVENT_DETAIL_TYPE = "MNS Notification"


def function_payload(subscription: Subscription, message: TopicMessage) -> bytes:
    """The event a Lambda function is invoked with (its payload is JSON): the JSON notification as an object, the XML
    notification or the SIMPLIFIED body as a JSON string."""
    body = notification_body(subscription, message)
    if subscription.attributes.notify_content_format == JSON:
        return body.encode("utf-8")
    return json.dumps(body).encode("utf-8")


def event_detail(subscription: Subscription, message: TopicMessage) -> str:
    """The `Detail` of an EventBridge push (a JSON object): the JSON notification itself; the XML notification or the
    SIMPLIFIED body as `Notification`, SIMPLIFIED with `MessageId` (and `MessageTag`), as its HTTP headers carry."""
    body = notification_body(subscription, message)
    content_format = subscription.attributes.notify_content_format
    if content_format == JSON:
        return body
    detail = {"Notification": body}
    if content_format == SIMPLIFIED:
        detail["MessageId"] = message.message_id
        if message.tag:
            detail["MessageTag"] = message.tag
    return json.dumps(detail)
