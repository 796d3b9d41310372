"""Entities and results written as MNS response elements: one function per element the API answers with."""

from __future__ import annotations

import json
from collections.abc import Sequence

from mnsd.access.keys import AccessKey
from mnsd.access.tokens import TemporaryCredentials
from mnsd.ground import errors
from mnsd.log.metrics import HourlyCounts
from mnsd.metrics import monitored
from mnsd.metrics.minutes import WINDOW_MINUTES, Minute
from mnsd.model.kinds import kind_of
from mnsd.model.messages import Message, Property
from mnsd.model.queues import INT_ATTRIBUTES, Queue, QueueCounts
from mnsd.model.topics import TOPIC_RETENTION_SECONDS, Subscription, Topic, TopicMessage
from mnsd.queues.messages import Received, SendResult, VisibilityResult
from mnsd.wire.codec import Node, Value

Fields = list[tuple[str, Value]]


def _property_nodes(tag: str, items: tuple[Property, ...]) -> list[Node]:
    return [Node(tag, [("Name", p.name), ("Value", p.value), ("Type", p.type)]) for p in items]


def message_node(message: Message, receipt_handle: str | None = None) -> Node:
    """A received (with handle) or peeked (without) message."""
    fields: Fields = [("MessageId", message.message_id)]
    if receipt_handle is not None:
        fields.append(("ReceiptHandle", receipt_handle))
    fields += [
        ("MessageBodyMD5", message.body_md5),
        ("MessageBody", message.body),
        ("EnqueueTime", message.enqueue_time),
        ("FirstDequeueTime", message.first_dequeue_time),
        ("DequeueCount", message.dequeue_count),
        ("Priority", message.priority),
    ]
    if receipt_handle is not None:
        fields.append(("NextVisibleTime", message.visible_at))
    if message.message_group_id:
        fields.append(("MessageGroupId", message.message_group_id))
    if message.user_properties:
        fields.append(("UserProperties", _property_nodes("PropertyValue", message.user_properties)))
    if message.system_properties:
        fields.append(("SystemProperties", _property_nodes("SystemPropertyValue", message.system_properties)))
    return Node("Message", fields)


def received(message: Received) -> Node:
    """ReceiveMessage: the message with its receipt handle and next visible time."""
    return message_node(message.message, message.receipt_handle)


def received_batch(messages: Sequence[Received]) -> Node:
    """BatchReceiveMessage."""
    return Node("Messages", [("Message", received(r)) for r in messages])


def peeked_batch(messages: Sequence[Message]) -> Node:
    """BatchPeekMessage."""
    return Node("Messages", [("Message", message_node(m)) for m in messages])


def sent(result: SendResult) -> Node:
    """SendMessage (the receipt handle only for a delayed message)."""
    fields: Fields = [
        ("MessageId", result.message.message_id),
        ("MessageBodyMD5", result.message.body_md5),
        ("ReceiptHandle", result.receipt_handle),
    ]
    return Node("Message", fields + _sent_group(result.message))


def _sent_group(message: Message) -> Fields:
    """A FIFO queue's answer to a send names the message's group (SDK 1.3.0 reads it back)."""
    return [("MessageGroupId", message.message_group_id)] if message.fifo else []


def sent_batch(results: Sequence[SendResult]) -> Node:
    """BatchSendMessage: each message's result, or its error (the status: `mnsd.calls.planes.Plane.sent_batch`)."""
    nodes = [
        Node("Message", [("ErrorCode", r.error.code), ("ErrorMessage", r.error.message)])
        if r.error is not None
        else Node(
            "Message",
            [("MessageId", r.message.message_id), ("MessageBodyMD5", r.message.body_md5), *_sent_group(r.message)],
        )
        for r in results
    ]
    return Node("Messages", [("Message", n) for n in nodes])


def delete_failures(failures: Sequence[tuple[str, errors.MnsError]]) -> Node:
    """BatchDeleteMessage's failures (the status: `mnsd.calls.planes.Plane.delete_failures`)."""
    nodes: Fields = [("Error", Node("Error", _handle_error(h, e))) for h, e in failures]
    return Node("Errors", nodes)


def _handle_error(handle: str, error: errors.MnsError) -> Fields:
    """A receipt handle a batch could not use: BatchDeleteMessage's error entry."""
    return [("ErrorCode", error.code), ("ErrorMessage", error.message), ("ReceiptHandle", handle)]


def visibility_changed(receipt_handle: str, next_visible_time: int) -> Node:
    """ChangeMessageVisibility."""
    return Node("ChangeVisibility", [("ReceiptHandle", receipt_handle), ("NextVisibleTime", next_visible_time)])


def visibility_batch(results: Sequence[VisibilityResult]) -> Node:
    """A batch ChangeMessageVisibility: a `<ChangeVisibility>` per handle, in the order given, holding what
    ChangeMessageVisibility answers (the new ReceiptHandle, NextVisibleTime) or what BatchDeleteMessage answers of a
    handle that failed (ErrorCode, ErrorMessage, the ReceiptHandle given). The status: `mnsd.calls.planes.Plane`."""
    nodes: Fields = [
        (
            "ChangeVisibility",
            Node("ChangeVisibility", _handle_error(r.given, r.error))
            if r.error is not None
            else visibility_changed(r.receipt_handle, r.next_visible_time),
        )
        for r in results
    ]
    return Node("ChangeVisibilities", nodes)


def published(message: TopicMessage) -> Node:
    """PublishMessage."""
    return Node("Message", [("MessageId", message.message_id), ("MessageBodyMD5", message.body_md5)])


def queue_node(
    queue: Queue, counts: QueueCounts | None, held_groups: int | None = None, *, metrics_default: bool
) -> Node:
    """GetQueueAttributes (with counts, and a FIFO queue's groups in flight) and a ListQueue entry's meta (without).
    `MetricsEnabled` answers whether the queue is monitored: its choice, else the stack's `metrics_default`."""
    a = queue.attributes
    fields: Fields = [
        ("QueueName", queue.name),
        ("CreateTime", queue.create_time),
        ("LastModifyTime", queue.last_modify_time),
        *((attribute.element, getattr(a, attribute.field)) for attribute in INT_ATTRIBUTES),
        ("LoggingEnabled", a.logging_enabled),
        ("MetricsEnabled", monitored(a.metrics_chosen, metrics_default)),
        ("QueueType", kind_of(queue).name),
    ]
    policy = a.dlq_policy
    if policy is not None:
        fields.append(("DlqPolicy", dlq_policy_text(True, policy.target, policy.max_receive_count)))
    if a.rewind_period:
        fields.append(("RewindPeriod", a.rewind_period))
    if a.max_receives_per_second:
        limit = {"Enabled": True, "MaxReceivesPerSecond": a.max_receives_per_second}
        fields.append(("TenantRateLimitPolicy", json.dumps(limit, separators=(",", ":"))))
    if a.policy:
        fields.append(("Policy", a.policy))
    if a.alarms:
        fields.append(("Alarms", a.alarms))
    if counts is not None:
        fields += [
            ("ActiveMessages", counts.active),
            ("InactiveMessages", counts.inactive),
            ("DelayMessages", counts.delayed),
        ]
    if held_groups is not None:
        fields.append(("MessageGroupsInFlight", held_groups))
    return Node("Queue", fields)


def dlq_policy_text(enabled: bool, target: str, max_receive_count: int | None = None) -> str:
    """A DlqPolicy as the JSON text GetQueueAttributes and GetSubscriptionAttributes answer with, as the
    OpenAPI gives it: SDK 1.3.0 reads each child of the response's root as text and fails on a nested
    element. Requests may give either form (`mnsd.wire.requests.dlq_policy_input`)."""
    policy: dict[str, object] = {"Enabled": enabled, "DeadLetterTargetQueue": target}
    if max_receive_count is not None:
        policy["MaxReceiveCount"] = max_receive_count
    return json.dumps(policy, separators=(",", ":"))


def redrive_result(moved: int) -> Node:
    """RedriveQueue (`PUT /queues/{dlq}?redrive=true`): how many dead-lettered messages went back."""
    return Node("RedriveResult", [("MovedMessages", moved)])


def queue_list(
    queues: Sequence[Queue], next_marker: str | None, endpoint: str, with_meta: bool, *, metrics_default: bool
) -> Node:
    """ListQueue: each queue's URL (and its attributes with meta), then the next page's marker."""
    entries = [(q.name, queue_node(q, None, metrics_default=metrics_default) if with_meta else None) for q in queues]
    return _listing("Queue", entries, next_marker, endpoint)


def _listing(kind: str, entries: list[tuple[str, Node | None]], next_marker: str | None, endpoint: str) -> Node:
    """ListQueue and ListTopic: each entry's URL beside its meta (or only its name without), then the next page's
    marker. `kind` names the entry (`Queue`), its URL (`QueueURL`, under `/queues/`) and the list (`Queues`)."""
    nodes = []
    for name, meta in entries:
        url = (f"{kind}URL", f"{endpoint}/{kind.lower()}s/{name}")
        # The live service names each entry beside its URL (the Node SDK reads it); the meta has the name.
        fields = meta.fields if meta is not None else [(f"{kind}Name", name)]
        nodes.append(Node(kind, [url, *fields]))
    return Node(f"{kind}s", [(kind, node) for node in nodes] + [("NextMarker", next_marker)])


def topic_node(topic: Topic, message_count: int | None, *, metrics_default: bool) -> Node:
    """GetTopicAttributes (with the message count) and a ListTopic entry's meta (without). `MetricsEnabled` answers
    whether the topic is monitored: its choice, else the stack's `metrics_default`."""
    fields: Fields = [
        ("TopicName", topic.name),
        ("CreateTime", topic.create_time),
        ("LastModifyTime", topic.last_modify_time),
        ("MaximumMessageSize", topic.attributes.maximum_message_size),
        ("MessageRetentionPeriod", TOPIC_RETENTION_SECONDS),
    ]
    if message_count is not None:
        fields.append(("MessageCount", message_count))
    fields.append(("LoggingEnabled", topic.attributes.logging_enabled))
    fields.append(("MetricsEnabled", monitored(topic.attributes.metrics_enabled, metrics_default)))
    if topic.attributes.policy:
        fields.append(("Policy", topic.attributes.policy))
    return Node("Topic", fields)


def topic_list(
    topics: Sequence[Topic], next_marker: str | None, endpoint: str, with_meta: bool, *, metrics_default: bool
) -> Node:
    """ListTopic: each topic's URL (and its attributes with meta), then the next page's marker."""
    entries = [(t.name, topic_node(t, None, metrics_default=metrics_default) if with_meta else None) for t in topics]
    return _listing("Topic", entries, next_marker, endpoint)


def subscription_node(s: Subscription) -> Node:
    """GetSubscriptionAttributes."""
    a = s.attributes
    fields: Fields = [
        ("SubscriptionName", s.name),
        ("Subscriber", s.account_id),
        ("TopicOwner", s.account_id),
        ("TopicName", s.topic_name),
        ("Endpoint", a.endpoint),
        ("NotifyStrategy", a.notify_strategy),
        ("NotifyContentFormat", a.notify_content_format),
        ("FilterTag", a.filter_tag or None),
        ("CreateTime", s.create_time),
        ("LastModifyTime", s.last_modify_time),
    ]
    if a.dlq_enabled or a.dlq_target_queue:
        fields.append(("DlqPolicy", dlq_policy_text(a.dlq_enabled, a.dlq_target_queue)))
    return Node("Subscription", fields)


def subscription_list(
    subscriptions: Sequence[Subscription], next_marker: str | None, base: str, with_meta: bool = False
) -> Node:
    """ListSubscriptionByTopic: each subscription's URL under `base` (and its attributes with meta: the Java SDK's
    `listSubscriptions` asks for them), then the next page's marker."""
    entries: Fields = []
    for subscription in subscriptions:
        url = ("SubscriptionURL", f"{base}/{subscription.name}")
        fields = subscription_node(subscription).fields if with_meta else []
        entries.append(("Subscription", Node("Subscription", [url, *fields])))
    return Node("Subscriptions", [*entries, ("NextMarker", next_marker)])


def account_node(logging_bucket: str) -> Node:
    """GetAccountAttributes."""
    return Node("Account", [("LoggingBucket", logging_bucket)])


def credentials_node(credentials: TemporaryCredentials) -> Node:
    """IssueSecurityToken: the temporary credentials, as Alibaba STS names them."""
    return Node(
        "Credentials",
        [
            ("AccessKeyId", credentials.access_key_id),
            ("AccessKeySecret", credentials.access_key_secret),
            ("SecurityToken", credentials.security_token),
            ("Expiration", credentials.expiration),
        ],
    )


def access_keys(keys: Sequence[AccessKey]) -> Node:
    """ListAccessKeys: each key's id, whether it is a root key, and its policy (JSON); never its secret."""
    entries: Fields = [
        (
            "AccessKey",
            Node(
                "AccessKey",
                [
                    ("AccessKeyId", key.key_id),
                    ("Root", key.policy is None),
                    ("Policy", key.policy.document if key.policy is not None else None),
                ],
            ),
        )
        for key in keys
    ]
    return Node("AccessKeys", entries)


def error_node(error: errors.MnsError, request_id: str, host_id: str) -> Node:
    """The `<Error>` every failed call answers with."""
    return Node(
        "Error",
        [("Code", error.code), ("Message", error.message), ("RequestId", request_id), ("HostId", host_id)],
    )


def hourly_metrics(root: str, fields: Fields, hours: int, truncated: bool, hourly: Sequence[HourlyCounts]) -> Node:
    """The console's hourly activity (`?metrics=hourly`): one `Bucket` per hour, its start in epoch seconds."""
    buckets = [Node("Bucket", [("Time", h.hour_ms // 1000), *h.counts.items()]) for h in hourly]
    return Node(root, [*fields, ("Hours", hours), ("Truncated", truncated), ("Buckets", buckets)])


def minute_metrics(queue_name: str, minutes: Sequence[Minute]) -> Node:
    """The console's last hour of a queue (`?metrics=minutely`): one `Bucket` per minute, its start in epoch seconds,
    each series under its CloudWatch name (counts summed over the minute, gauges as last read; whole numbers)."""
    buckets = [
        Node("Bucket", [("Time", m.start_ms // 1000), *((metric.name, round(v)) for metric, v in m.values.items())])
        for m in minutes
    ]
    return Node("QueueMetrics", [("QueueName", queue_name), ("Minutes", WINDOW_MINUTES), ("Buckets", buckets)])
