"""The `Data` of the OpenAPI's answers, built from the domain's entities with the field names and types the SDK's
models and the Terraform provider read (`MaxReceiveCount` a string, tags as `{TagKey, TagValue}`, booleans as JSON
booleans, times in seconds as on the XML plane)."""

from __future__ import annotations

from typing import Any

from mnsd.model.queues import INT_ATTRIBUTES, Queue, QueueCounts
from mnsd.model.tags import tag_map
from mnsd.model.topics import TOPIC_RETENTION_SECONDS, Subscription, Topic

View = dict[str, Any]

# Server-side encryption per resource is not offered (the stack encrypts its tables as a whole): every resource answers
# it off, and a request turning it on is refused (`mnsd.rpc.inputs`).
_NO_SSE: View = {"EnableSSE": False, "EncryptionEnabled": False, "KmsKeyId": "", "SseAlgorithm": "", "SseType": ""}


def tags(document: str) -> list[View]:
    return [{"TagKey": key, "TagValue": value} for key, value in tag_map(document).items()]


def _kept(create_time: int, last_modify_time: int, tag_document: str) -> View:
    """What a queue's and a topic's answers share: their times, tags, and encryption (off)."""
    return {"CreateTime": create_time, "LastModifyTime": last_modify_time, "Tags": tags(tag_document), **_NO_SSE}


# The attributes answered as they are kept, under their wire names (`notify_strategy`: NotifyStrategy).
_QUEUE_ATTRIBUTES = ("queue_type", *(attribute.field for attribute in INT_ATTRIBUTES), "logging_enabled")
_SUBSCRIPTION_ATTRIBUTES = ("notify_strategy", "notify_content_format", "filter_tag")


def _wired(attributes: object, names: tuple[str, ...]) -> View:
    """Attributes as they are kept, under their wire names (`notify_strategy`: NotifyStrategy)."""
    return {"".join(word.title() for word in name.split("_")): getattr(attributes, name) for name in names}


def queue_view(queue: Queue, counts: QueueCounts) -> View:
    a = queue.attributes
    policy = a.dlq_policy
    return {
        "QueueName": queue.name,
        **_wired(a, _QUEUE_ATTRIBUTES),
        "ActiveMessages": counts.active,
        "InactiveMessages": counts.inactive,
        "DelayMessages": counts.delayed,
        "DlqPolicy": {
            "Enabled": policy is not None,
            "DeadLetterTargetQueue": policy.target if policy else "",
            "MaxReceiveCount": str(policy.max_receive_count if policy else 0),
        },
        "TenantRateLimitPolicy": {
            "Enabled": bool(a.max_receives_per_second),
            "MaxReceivesPerSecond": a.max_receives_per_second,
        },
        **_kept(queue.create_time, queue.last_modify_time, a.tags),
    }


def queue_entry(queue: Queue, counts: QueueCounts, endpoint: str) -> View:
    """A ListQueue `PageData` entry: the queue's attributes and its URLs (the provider's data source reads them)."""
    url = f"{endpoint}/queues/{queue.name}"
    return {**queue_view(queue, counts), "QueueUrl": url, "QueueInternalUrl": url}


def topic_view(topic: Topic, message_count: int, endpoint: str) -> View:
    a = topic.attributes
    url = f"{endpoint}/topics/{topic.name}"
    return {
        "TopicName": topic.name,
        "TopicType": "normal",
        "MaxMessageSize": a.maximum_message_size,
        "MessageRetentionPeriod": TOPIC_RETENTION_SECONDS,
        "MessageCount": message_count,
        "LoggingEnabled": a.logging_enabled,
        "TopicUrl": url,
        "TopicInnerUrl": url,
        **_kept(topic.create_time, topic.last_modify_time, a.tags),
    }


def subscription_view(s: Subscription) -> View:
    a = s.attributes
    names = {"SubscriptionName": s.name, "TopicName": s.topic_name, "TopicOwner": s.account_id}
    times = {"CreateTime": s.create_time, "LastModifyTime": s.last_modify_time}
    dlq = {"Enabled": a.dlq_enabled, "DeadLetterTargetQueue": a.dlq_target_queue}
    wired = {"Endpoint": a.shown_endpoint, **_wired(a, _SUBSCRIPTION_ATTRIBUTES)}
    return {**names, **wired, **times, "DlqPolicy": dlq}


def page(entries: list[View], page_num: int, page_size: int, total: int) -> View:
    return {
        "PageData": entries,
        "PageNum": page_num,
        "PageSize": page_size,
        "Pages": -(-total // page_size),
        "Size": len(entries),
        "Total": total,
    }
