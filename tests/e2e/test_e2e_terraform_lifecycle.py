"""What the Terraform provider (`aliyun/alicloud`, `alicloud_message_service_*`) does, call for call and in its order,
against the local server on each engine: v1 signatures, every parameter in a form body with `RegionId` and
`ClientToken` beside them; create, read (and read again: no drift), update, tag, untag, read after an out-of-band
delete (the not-found codes the provider matches), destroy.

Each resource's `read` maps the answer onto state exactly as the provider's `Read` function does
(`alicloud/resource_alicloud_message_service_{queue,topic,subscription,endpoint_acl}.go`), and `plan` is the
difference between that state and the configuration: empty means no drift.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from mns.account import Account
from mns.topic import TopicMessage

from tests.support.servers import ACCOUNT_A
from tests.support.terraform import KEY, SECRET, Provider

# `IsExpectedErrors` lists of the provider's Describe functions: a read that ends with one of these forgets the resource.
QUEUE_GONE = ("ResourceNotFound:QueueName", "RESOURCE_NOT_FOUND", "QueueNotExist")
TOPIC_GONE = ("ResourceNotFound:TopicName", "TopicNotExist")
SUBSCRIPTION_GONE = ("SubscriptionNotExist", "ResourceNotFound:TopicName/subscriptionName", "TopicNotExist")


def _tags(raw: Any) -> dict[str, str]:
    """`tagsToMap`: `[{TagKey, TagValue}]` as a map."""
    return {t["TagKey"]: t["TagValue"] for t in raw or []}


def plan(state: dict[str, Any], config: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {key: (state.get(key), wanted) for key, wanted in config.items() if state.get(key) != wanted}


def _state(raw: dict[str, Any], *names: str) -> dict[str, Any]:
    """`d.Set("visibility_timeout", objectRaw["VisibilityTimeout"])`, for each state key named."""
    return {name: raw["".join(word.title() for word in name.split("_"))] for name in names}


QUEUE_STATE = ("queue_name", "create_time", "delay_seconds", "maximum_message_size", "message_retention_period")
QUEUE_STATE += ("polling_wait_seconds", "queue_type", "visibility_timeout", "logging_enabled")


def read_queue(provider: Provider, name: str) -> dict[str, Any] | None:
    raw = provider.describe("GetQueueAttributes", QUEUE_GONE, QueueName=name)
    if raw is None:
        return None
    dlq = raw.get("DlqPolicy") or {}
    return {
        **_state(raw, *QUEUE_STATE),
        "enable_sse": raw["EnableSSE"],
        "dlq_policy": [
            {
                "dead_letter_target_queue": dlq["DeadLetterTargetQueue"],
                "enabled": dlq["Enabled"],
                "max_receive_count": int(dlq["MaxReceiveCount"]),  # formatInt: a string in the answer
            }
        ]
        if dlq
        else [],
        "tags": _tags(raw["Tags"]),
    }


# The provider's request parameter for each configured attribute of a queue.
QUEUE_PARAMETERS = {
    "MessageRetentionPeriod": "message_retention_period",
    "PollingWaitSeconds": "polling_wait_seconds",
    "VisibilityTimeout": "visibility_timeout",
    "DelaySeconds": "delay_seconds",
    "MaximumMessageSize": "maximum_message_size",
    "EnableLogging": "logging_enabled",
}


def test_a_queue_lives_through_the_providers_lifecycle_without_drift(endpoint):
    provider = Provider(endpoint)
    name, dlq = f"tf-q-{uuid.uuid4().hex[:10]}", f"tf-dlq-{uuid.uuid4().hex[:10]}"
    provider.ok("CreateQueue", QueueName=dlq)
    config = {
        "queue_name": name,
        "delay_seconds": 0,
        "maximum_message_size": 65536,
        "message_retention_period": 3600,
        "polling_wait_seconds": 0,
        "visibility_timeout": 40,
        "logging_enabled": False,
        "dlq_policy": [{"dead_letter_target_queue": dlq, "enabled": True, "max_receive_count": 3}],
        "tags": {"env": "dev", "team": "orders"},
    }
    # what `resourceAliCloudMessageServiceQueueCreate` puts in its request, from the configuration above
    request: dict[str, Any] = {"QueueName": name}
    for parameter, key in QUEUE_PARAMETERS.items():
        request[parameter] = config[key]
    request.update({"Tag.1.Key": "env", "Tag.1.Value": "dev", "Tag.2.Key": "team", "Tag.2.Value": "orders"})
    request["DlqPolicy"] = json.dumps({"DeadLetterTargetQueue": dlq, "Enabled": True, "MaxReceiveCount": 3})
    provider.ok("CreateQueue", **request)
    state = read_queue(provider, name)
    assert state is not None and plan(state, config) == {}
    assert read_queue(provider, name) == state  # refresh: the same state again

    # update: only what changed, EnableLogging always (GetOkExists); then tags: untag the removed, tag the added
    config.update(
        visibility_timeout=60, dlq_policy=[{"dead_letter_target_queue": "", "enabled": False, "max_receive_count": 0}]
    )
    provider.ok(
        "SetQueueAttributes", QueueName=name, VisibilityTimeout=60, EnableLogging=False, DlqPolicy='{"Enabled":false}'
    )
    config["tags"] = {"env": "prod", "owner": "platform"}
    provider.ok("UntagResources", ResourceType="queue", **{"ResourceId.1": name, "TagKey.1": "team"})
    provider.ok(
        "TagResources",
        ResourceType="queue",
        **{
            "ResourceId.1": name,
            "Tag.1.Key": "env",
            "Tag.1.Value": "prod",
            "Tag.2.Key": "owner",
            "Tag.2.Value": "platform",
        },
    )
    state = read_queue(provider, name)
    assert state is not None and plan(state, config) == {}
    assert read_queue(provider, name) == state

    Account(endpoint, KEY, SECRET).get_queue(name).delete()  # out of band
    assert read_queue(provider, name) is None
    provider.ok("DeleteQueue", QueueName=name)  # destroy: nothing left is no error
    provider.ok("DeleteQueue", QueueName=dlq)
    assert provider.calls[:4] == ["CreateQueue", "CreateQueue", "GetQueueAttributes", "GetQueueAttributes"]


def read_topic(provider: Provider, name: str) -> dict[str, Any] | None:
    raw = provider.describe("GetTopicAttributes", TOPIC_GONE, TopicName=name)
    if raw is None:
        return None
    return {
        "topic_name": raw["TopicName"],
        "max_message_size": raw["MaxMessageSize"],
        "logging_enabled": raw["LoggingEnabled"],
        "enable_sse": raw["EnableSSE"],
        "topic_type": raw["TopicType"],
        "tags": _tags(raw["Tags"]),
    }


def read_subscription(provider: Provider, topic: str, name: str) -> dict[str, Any] | None:
    raw = provider.describe("GetSubscriptionAttributes", SUBSCRIPTION_GONE, TopicName=topic, SubscriptionName=name)
    if raw is None:
        return None
    dlq = raw.get("DlqPolicy") or {}
    return {
        **_state(raw, "topic_name", "subscription_name", "endpoint", "filter_tag", "notify_content_format"),
        "notify_strategy": raw["NotifyStrategy"],
        "dlq_policy": [{"dead_letter_target_queue": dlq["DeadLetterTargetQueue"], "enabled": dlq["Enabled"]}]
        if dlq
        else [],
    }


def test_a_topic_and_its_subscription_live_through_the_providers_lifecycle(endpoint):
    provider = Provider(endpoint)
    topic = f"tf-t-{uuid.uuid4().hex[:10]}"
    topic_config = {"topic_name": topic, "max_message_size": 16384, "logging_enabled": True, "tags": {"a": "1"}}
    provider.ok(
        "CreateTopic",
        TopicName=topic,
        EnableLogging=True,
        MaxMessageSize=16384,
        **{"Tag.1.Key": "a", "Tag.1.Value": "1"},
    )
    state = read_topic(provider, topic)
    assert state is not None and plan(state, topic_config) == {} and state["topic_type"] == "normal"

    # the acceptance test's subscription, its endpoint on a loopback address the test server may push to
    sub_config = {
        "topic_name": topic,
        "subscription_name": "sub",
        "endpoint": "http://127.0.0.1:9/test",
        "filter_tag": "tf-test",
        "notify_content_format": "JSON",
        "notify_strategy": "EXPONENTIAL_DECAY_RETRY",
    }
    provider.ok(
        "Subscribe",
        TopicName=topic,
        SubscriptionName="sub",
        NotifyStrategy="EXPONENTIAL_DECAY_RETRY",
        NotifyContentFormat="JSON",
        MessageTag="tf-test",
        Endpoint="http://127.0.0.1:9/test",
        PushType="http",
    )
    sub = read_subscription(provider, topic, "sub")
    assert sub is not None and plan(sub, sub_config) == {}
    assert read_subscription(provider, topic, "sub") == sub

    sub_config["notify_strategy"] = "BACKOFF_RETRY"
    provider.ok("SetSubscriptionAttributes", TopicName=topic, SubscriptionName="sub", NotifyStrategy="BACKOFF_RETRY")
    assert plan(read_subscription(provider, topic, "sub") or {}, sub_config) == {}

    topic_config.update(max_message_size=32768, logging_enabled=False, tags={"b": "2"})
    provider.ok("SetTopicAttributes", TopicName=topic, EnableLogging=False, MaxMessageSize=32768)
    provider.ok("UntagResources", ResourceType="topic", **{"ResourceId.1": topic, "TagKey.1": "a"})
    provider.ok("TagResources", ResourceType="topic", **{"ResourceId.1": topic, "Tag.1.Key": "b", "Tag.1.Value": "2"})
    state = read_topic(provider, topic)
    assert state is not None and plan(state, topic_config) == {}

    Account(endpoint, KEY, SECRET).get_subscription(topic, "sub").unsubscribe()  # out of band
    assert read_subscription(provider, topic, "sub") is None
    provider.ok("Unsubscribe", TopicName=topic, SubscriptionName="sub")
    Account(endpoint, KEY, SECRET).get_topic(topic).delete()
    assert read_topic(provider, topic) is None
    assert read_subscription(provider, topic, "sub") is None  # TopicNotExist: gone too
    provider.ok("DeleteTopic", TopicName=topic)


def test_the_endpoint_and_an_acl_entry_live_through_the_providers_lifecycle(endpoint):
    provider = Provider(endpoint)
    entry = {"EndpointType": "public", "AclStrategy": "allow", "CidrList": "127.0.0.0/8"}
    provider.ok("AuthorizeEndpointAcl", **entry)
    data = provider.ok("GetEndpointAttribute", EndpointType="public")["Data"]
    found = [c for c in data["CidrList"] if (c["AclStrategy"], c["Cidr"]) == ("allow", "127.0.0.0/8")]
    assert data["EndpointEnabled"] is True and len(found) == 1
    assert provider.ok("GetEndpointAttribute", EndpointType="public")["Data"] == data  # no drift
    provider.ok("RevokeEndpointAcl", **entry)
    data = provider.ok("GetEndpointAttribute", EndpointType="public")["Data"]
    assert data["CidrList"] == []  # the entry's read finds it gone


def read_subscriptions(provider: Provider, topic: str) -> list[dict[str, Any]]:
    """`alicloud_message_service_subscriptions`: ListSubscriptionByTopic's rows mapped as the data source maps them
    (`object["SubscriptionURL"]` among them), pages read until one is short."""
    rows, page = [], 1
    while True:
        data = provider.ok("ListSubscriptionByTopic", TopicName=topic, PageNum=page, PageSize=50)["Data"]
        rows += [
            {
                "id": f"{row['TopicName']}:{row['SubscriptionName']}",
                "endpoint": row["Endpoint"],
                "notify_strategy": row["NotifyStrategy"],
                "topic_owner": row["TopicOwner"],
                "subscription_url": row["SubscriptionURL"],
                "create_time": int(row["CreateTime"]),
            }
            for row in data["PageData"]
        ]
        if len(data["PageData"]) < 50:
            return rows
        page += 1


def test_a_subscription_to_a_bare_queue_name_reads_back_as_configured(endpoint):
    """The provider's example: `push_type = "queue"`, `endpoint = alicloud_message_service_queue.x.queue_name`. The
    Endpoint read back is the one configured (a full `acs:mns:` form would be a change planned on every run)."""
    provider = Provider(endpoint)
    topic, queue = f"tf-t-{uuid.uuid4().hex[:10]}", f"tf-q-{uuid.uuid4().hex[:10]}"
    provider.ok("CreateQueue", QueueName=queue)
    provider.ok("CreateTopic", TopicName=topic)
    config = {
        "topic_name": topic,
        "subscription_name": "to-queue",
        "endpoint": queue,
        "filter_tag": "",
        "notify_content_format": "SIMPLIFIED",
        "notify_strategy": "BACKOFF_RETRY",
    }
    created = provider.ok(
        "Subscribe",
        TopicName=topic,
        SubscriptionName="to-queue",
        NotifyStrategy="BACKOFF_RETRY",
        NotifyContentFormat="SIMPLIFIED",
        Endpoint=queue,
        PushType="queue",
    )
    assert created["Status"] == "Success" and created["Code"] == 200
    state = read_subscription(provider, topic, "to-queue")
    assert state is not None and plan(state, config) == {}
    assert read_subscription(provider, topic, "to-queue") == state  # refresh: the same state again

    config["notify_strategy"] = "EXPONENTIAL_DECAY_RETRY"
    provider.ok(
        "SetSubscriptionAttributes",
        TopicName=topic,
        SubscriptionName="to-queue",
        NotifyStrategy="EXPONENTIAL_DECAY_RETRY",
    )
    assert plan(read_subscription(provider, topic, "to-queue") or {}, config) == {}

    [row] = read_subscriptions(provider, topic)
    assert (row["id"], row["endpoint"], row["topic_owner"]) == (f"{topic}:to-queue", queue, ACCOUNT_A[0])
    assert row["subscription_url"].endswith(f"/topics/{topic}/subscriptions/to-queue")
    status, body = provider.rpc("ListSubscriptionByTopic", TopicName=topic, EndpointValue=queue)
    assert status == 200 and [s["SubscriptionName"] for s in body["Data"]["PageData"]] == ["to-queue"]

    # delivered to the queue it names, as a subscription made with the full form is
    Account(endpoint, KEY, SECRET).get_topic(topic).publish_message(TopicMessage("to the queue"))
    target = Account(endpoint, KEY, SECRET).get_queue(queue)
    target.set_encoding(False)
    received = target.receive_message(5)
    assert received.message_body == "to the queue"

    provider.ok("Unsubscribe", TopicName=topic, SubscriptionName="to-queue")
    assert read_subscription(provider, topic, "to-queue") is None
    provider.ok("DeleteTopic", TopicName=topic)
    provider.ok("DeleteQueue", QueueName=queue)
