"""Requests read into the domain's inputs: bodies give what each element holds (the domain checks the
values); query parameters are checked as they are read, against the domain's limits, as MNS does before
it looks up the queue."""

from __future__ import annotations

import re

from mnsd.access.tokens import DEFAULT_DURATION, MAX_DURATION, MIN_DURATION, TokenRequest, token_policy
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.ground.validation import int_in_range, json_object, strict_int
from mnsd.model.inputs import (
    MessageInput,
    MessageRequest,
    PropertyInput,
    PublishInput,
    VisibilityChange,
    counted_handles,
    message_batch,
    message_input,
    visibility_batch,
)
from mnsd.model.queues import INT_ATTRIBUTES, DlqPolicyInput, QueueAttributeChanges, RateLimitInput
from mnsd.model.topics import SubscriptionChanges, SubscriptionInput, TopicAttributeChanges
from mnsd.wire.codec import Element


def wire_values(xml: Element, *tags: str) -> dict[str, str | None]:
    """The text of each element named (None where absent), keyed by its wire name in snake_case
    (`DelaySeconds`: `delay_seconds`), as the domain's inputs name their fields."""
    return {_snake_case(tag): xml.value(tag) for tag in tags}


def _snake_case(tag: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", tag).lower()


def _properties(xml: Element, container: str, entry: str) -> tuple[PropertyInput, ...]:
    node = xml.child(container)
    if node is None:
        return ()
    return tuple(PropertyInput(v.value("Name"), v.value("Value"), v.value("Type")) for v in node.all(entry))


def message_request(xml: Element) -> MessageRequest:
    """A `<Message>` of SendMessage or BatchSendMessage, as given."""
    return MessageRequest(
        body=xml.value("MessageBody"),
        delay_seconds=xml.value("DelaySeconds"),
        priority=xml.value("Priority"),
        user_properties=_properties(xml, "UserProperties", "PropertyValue"),
        system_properties=_properties(xml, "SystemProperties", "SystemPropertyValue"),
        message_group_id=xml.value("MessageGroupId"),
    )


def sent_message(xml: Element) -> MessageInput:
    """The `<Message>` of SendMessage, checked."""
    return message_input(message_request(xml))


def sent_messages(xml: Element) -> list[MessageInput]:
    """The `<Message>` entries of BatchSendMessage's `<Messages>`, checked (no other element may stand there)."""
    entries = xml.children
    if any(entry.tag != "Message" for entry in entries):
        raise errors.InvalidArgument(
            "The XML you provided did not validate against our published schema, cause by Element Messages."
        )
    return message_batch([message_request(entry) for entry in entries])


def receipt_handles(xml: Element) -> list[str]:
    """The `<ReceiptHandle>` entries of BatchDeleteMessage's `<ReceiptHandles>`: 1 to `MAX_BATCH` of them."""
    return counted_handles([node.text for node in xml.all("ReceiptHandle")])


# A batch ChangeMessageVisibility's body: its root, its entries (each a handle, or a handle with its own timeout).
BATCH_VISIBILITY, VISIBILITY_ENTRY = "ChangeVisibilities", "ChangeVisibility"


def visibility_changes(xml: Element) -> list[VisibilityChange]:
    """The entries of a batch ChangeMessageVisibility's `<ChangeVisibilities>`, in order: each a `<ReceiptHandle>`
    (taking the batch's own `<VisibilityTimeout>`) or a `<ChangeVisibility>` holding a `<ReceiptHandle>` and,
    optionally, a `<VisibilityTimeout>` of its own; 1 to `MAX_BATCH` of them."""
    entries: list[tuple[str | None, str | None]] = []
    for node in xml.children:
        if node.tag == "ReceiptHandle":
            entries.append((node.text, None))
        elif node.tag == VISIBILITY_ENTRY:
            entries.append((node.value("ReceiptHandle"), node.value("VisibilityTimeout")))
        elif node.tag != "VisibilityTimeout":
            raise errors.InvalidArgument(
                f"The XML you provided did not validate against our published schema, cause by Element {node.tag}."
            )
    return visibility_batch(entries, xml.value("VisibilityTimeout"))


# The plain elements of a `<Queue>` and of a `<Topic>` body (their nested policies are read apart).
_QUEUE_ATTRIBUTES = (
    *(attribute.element for attribute in INT_ATTRIBUTES),
    "LoggingEnabled",
    "RewindPeriod",
    "Policy",
    "QueueType",
    "MetricsEnabled",
    "Alarms",
)
_TOPIC_ATTRIBUTES = ("MaximumMessageSize", "LoggingEnabled", "Policy", "MetricsEnabled")
_DLQ_POLICY = ("Enabled", "DeadLetterTargetQueue", "MaxReceiveCount")
_ELEMENTS_OR_JSON = "its elements or a JSON object"


def queue_attribute_changes(xml: Element | None) -> QueueAttributeChanges:
    """The attributes a `<Queue>` body (CreateQueue, SetQueueAttributes) gives; none without a body."""
    if xml is None:
        return QueueAttributeChanges()
    return QueueAttributeChanges(
        dlq_policy=dlq_policy_input(xml.child("DlqPolicy")),
        rate_limit=rate_limit_input(xml.child("TenantRateLimitPolicy")),
        tags=None,  # the XML API has none (the OpenAPI's `mnsd.rpc`)
        **wire_values(xml, *_QUEUE_ATTRIBUTES),
    )


def rate_limit_input(xml: Element | None) -> RateLimitInput | None:
    """A `<TenantRateLimitPolicy>`: nested elements, or the JSON text GetQueueAttributes answers with."""
    if xml is None:
        return None
    if not xml.children and xml.text.strip():
        return RateLimitInput.from_json(json_object("TenantRateLimitPolicy", xml.text, _ELEMENTS_OR_JSON))
    return RateLimitInput(xml.value("Enabled"), xml.value("MaxReceivesPerSecond"))


def dlq_policy_input(xml: Element | None) -> DlqPolicyInput | None:
    """A `<DlqPolicy>` (of a queue or a subscription), as given; None when absent.

    Either nested elements (`<Enabled>`, `<DeadLetterTargetQueue>`, `<MaxReceiveCount>`) or the JSON text
    GetQueueAttributes answers with (`{"Enabled":true,"DeadLetterTargetQueue":"q","MaxReceiveCount":3}`).
    """
    if xml is None:
        return None
    if not xml.children and xml.text.strip():
        return _dlq_policy_json(xml.text)
    return DlqPolicyInput(**wire_values(xml, *_DLQ_POLICY))


def _dlq_policy_json(text: str) -> DlqPolicyInput:
    return DlqPolicyInput.from_json(json_object("DlqPolicy", text, _ELEMENTS_OR_JSON))


def rewind_time(request: HttpRequest) -> int:
    """The `rewindtime` of RewindQueue (Unix seconds); the queue checks it against its window."""
    return rewind_seconds(request.query("rewindtime") or "")


def rewind_seconds(text: str) -> int:
    """A rewind's time as given (Unix seconds), refused unless it is an integer."""
    since = strict_int(text)
    if since is None:
        raise errors.InvalidArgument("The value of rewindtime should be a time in Unix seconds.")
    return since


def topic_attribute_changes(xml: Element | None) -> TopicAttributeChanges:
    """The attributes a `<Topic>` body (CreateTopic, SetTopicAttributes) gives; none without a body."""
    if xml is None:
        return TopicAttributeChanges()
    return TopicAttributeChanges(tags=None, **wire_values(xml, *_TOPIC_ATTRIBUTES))


def subscription_input(xml: Element) -> SubscriptionInput:
    """The `<Subscription>` body of Subscribe."""
    return SubscriptionInput(
        dlq_policy=dlq_policy_input(xml.child("DlqPolicy")),
        **wire_values(xml, "Endpoint", "FilterTag", "NotifyStrategy", "NotifyContentFormat"),
    )


def subscription_changes(xml: Element) -> SubscriptionChanges:
    """The `<Subscription>` body of SetSubscriptionAttributes."""
    return SubscriptionChanges(
        notify_strategy=xml.value("NotifyStrategy"), dlq_policy=dlq_policy_input(xml.child("DlqPolicy"))
    )


def publish_input(xml: Element) -> PublishInput:
    """The `<Message>` body of PublishMessage. `<MessageAttributes>` holds `<DirectMail>` and `<DirectSMS>` (the
    Python SDK's and Java SDK 1.x's), or `<DM>` and `<DYSMS>` (Java SDK 2.x's), each JSON text."""
    attributes = xml.child("MessageAttributes") or Element("MessageAttributes")
    return PublishInput(
        body=xml.value("MessageBody"),
        tag=xml.value("MessageTag"),
        user_properties=_properties(xml, "UserProperties", "PropertyValue"),
        message_group_id=xml.value("MessageGroupId"),
        direct_mail=attributes.value("DirectMail"),
        direct_sms=attributes.value("DirectSMS"),
        dm=attributes.value("DM"),
        dysms=attributes.value("DYSMS"),
    )


def logging_bucket(xml: Element) -> str | None:
    """The `<LoggingBucket>` of SetAccountAttributes' `<Account>` body, if given."""
    return xml.value("LoggingBucket")


def security_token_request(xml: Element | None) -> TokenRequest:
    """IssueSecurityToken's optional `<SecurityToken>`: `DurationSeconds` (900..43200) and a `Policy` (JSON)."""
    if xml is None:
        return TokenRequest()
    duration = xml.value("DurationSeconds")
    seconds = (
        DEFAULT_DURATION
        if duration is None
        else int_in_range("DurationSeconds", duration.strip(), MIN_DURATION, MAX_DURATION, "seconds")
    )
    return TokenRequest(seconds, token_policy(xml.value("Policy")))
