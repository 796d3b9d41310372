"""An estate as the tool compares it: each queue, topic and subscription with the settings that are copied, read from
one side's Mns-open listings (ListQueue, ListTopic, ListSubscriptionByTopic carry every attribute, tags and dead-letter
policies in one answer per page; a subscription's Endpoint given bare, without its kind, is read in full on the
classic XML plane)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mnsclient.openapi import OpenApiClient

QUEUE, TOPIC, SUBSCRIPTION = "queue", "topic", "subscription"

# Settings that cannot change once the resource exists (a difference needs the target's resource replaced by hand).
FIXED = {
    QUEUE: ("QueueType",),
    TOPIC: ("TopicType",),
    SUBSCRIPTION: ("Endpoint", "FilterTag", "NotifyContentFormat"),
}
QUEUE_NUMBERS = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "VisibilityTimeout",
    "PollingWaitSeconds",
)


@dataclass(frozen=True)
class Resource:
    kind: str
    name: str  # a queue's or topic's name; a subscription's `topic/subscription`
    settings: dict[str, Any]
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.name


@dataclass(frozen=True)
class Estate:
    resources: dict[tuple[str, str], Resource]

    def of(self, kind: str) -> list[Resource]:
        return [r for r in self.resources.values() if r.kind == kind]


def _flag(value: Any) -> bool:
    return value is True or str(value).strip().lower() == "true"


def _tags(entry: dict[str, Any]) -> dict[str, str]:
    return {str(t.get("TagKey")): str(t.get("TagValue") or "") for t in entry.get("Tags") or [] if t.get("TagKey")}


def _dlq(policy: Any, *, with_count: bool) -> dict[str, Any] | None:
    """A dead-letter policy as it is compared: None when off, else its target queue (and a queue's receive count)."""
    if not isinstance(policy, dict) or not _flag(policy.get("Enabled")) or not policy.get("DeadLetterTargetQueue"):
        return None
    found: dict[str, Any] = {"DeadLetterTargetQueue": str(policy["DeadLetterTargetQueue"])}
    if with_count:
        found["MaxReceiveCount"] = int(policy.get("MaxReceiveCount") or 0)
    return found


def queue_resource(entry: dict[str, Any]) -> Resource:
    limit = entry.get("TenantRateLimitPolicy") or {}
    settings: dict[str, Any] = {
        "QueueType": str(entry.get("QueueType") or "normal").lower(),
        **{name: int(entry.get(name) or 0) for name in QUEUE_NUMBERS},
        "LoggingEnabled": _flag(entry.get("LoggingEnabled")),
        "DlqPolicy": _dlq(entry.get("DlqPolicy"), with_count=True),
        "MaxReceivesPerSecond": int(limit.get("MaxReceivesPerSecond") or 0) if _flag(limit.get("Enabled")) else 0,
        "EnableSSE": _flag(entry.get("EnableSSE")),
    }
    return Resource(QUEUE, str(entry["QueueName"]), settings, _tags(entry))


def topic_resource(entry: dict[str, Any]) -> Resource:
    settings: dict[str, Any] = {
        "TopicType": str(entry.get("TopicType") or "normal").lower(),
        "MaxMessageSize": int(entry.get("MaxMessageSize") or 0),
        "LoggingEnabled": _flag(entry.get("LoggingEnabled")),
        "EnableSSE": _flag(entry.get("EnableSSE")),
    }
    return Resource(TOPIC, str(entry["TopicName"]), settings, _tags(entry))


def endpoint_of(endpoint: str) -> str:
    """A subscription's endpoint as it is compared and recreated: a queue endpoint
    (`acs:mns:{region}:{account}:queues/{name}`) as `queue:{name}`, whichever account and region wrote it (it is
    recreated in the target's); mail and SMS endpoints as `email:` and `alisms:`; an HTTP endpoint as it is; any other
    kept in full."""
    text = endpoint.strip()
    if text.startswith("acs:mns:") and ":queues/" in text:
        return "queue:" + text.split(":queues/", 1)[1]
    for prefix, kind in (("mail:directmail:", "email:"), ("sms:directsms:", "alisms:")):
        if text.startswith(prefix):
            return kind + text[len(prefix) :]
    return text


# How an Endpoint written in full starts (a queue's `acs:mns:`, mail, SMS, HTTP): any other was given bare.
_IN_FULL = ("acs:", "mail:", "sms:", "http://", "https://")

# A subscription's Endpoint in full, by topic and subscription name (the XML plane's GetSubscriptionAttributes).
FullEndpoint = Callable[[str, str], str]


def subscription_resource(entry: dict[str, Any], topic: str, full_endpoint: FullEndpoint | None = None) -> Resource:
    given = str(entry.get("Endpoint") or "")
    if full_endpoint is not None and not given.strip().startswith(_IN_FULL):
        given = full_endpoint(topic, str(entry["SubscriptionName"]))
    settings: dict[str, Any] = {
        "Endpoint": endpoint_of(given),
        "FilterTag": str(entry.get("FilterTag") or ""),
        "NotifyStrategy": str(entry.get("NotifyStrategy") or "BACKOFF_RETRY"),
        "NotifyContentFormat": str(entry.get("NotifyContentFormat") or "XML"),
        "DlqPolicy": _dlq(entry.get("DlqPolicy"), with_count=False),
    }
    return Resource(SUBSCRIPTION, f"{topic}/{entry['SubscriptionName']}", settings)


def read_estate(api: OpenApiClient, prefix: str = "", full_endpoint: FullEndpoint | None = None) -> Estate:
    """Every queue and topic (whose name starts with `prefix`) of the side and every subscription of those topics
    (an Endpoint Mns-open answers bare read in full with `full_endpoint`)."""
    resources: list[Resource] = [queue_resource(e) for e in api.pages("ListQueue", {"QueueName": prefix or None})]
    topics = [topic_resource(e) for e in api.pages("ListTopic", {"TopicName": prefix or None})]
    resources += topics
    for topic in topics:
        entries = api.pages("ListSubscriptionByTopic", {"TopicName": topic.name})
        resources += [subscription_resource(e, topic.name, full_endpoint) for e in entries]
    return Estate({r.key: r for r in resources if not prefix or r.name.startswith(prefix)})
