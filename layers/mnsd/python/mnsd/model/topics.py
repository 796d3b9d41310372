"""Topics, subscriptions, endpoints and topic messages, with their MNS ranges and defaults."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Protocol

from mnsd.ground import errors
from mnsd.ground.validation import int_in_range, mns_bool
from mnsd.model.cloud_targets import EVENTBRIDGE, LAMBDA, cloud_target
from mnsd.model.messages import Property, body_md5
from mnsd.model.names import check_queue_name
from mnsd.model.policy import resource_policy_document
from mnsd.model.queues import DlqPolicyInput
from mnsd.model.tags import TagChanges, applied

TOPIC_RETENTION_SECONDS = 86400  # topic messages are kept one day, whatever their delivery
MAX_TAG_LENGTH = 16

BACKOFF_RETRY = "BACKOFF_RETRY"
EXPONENTIAL_DECAY_RETRY = "EXPONENTIAL_DECAY_RETRY"
NOTIFY_STRATEGIES = (BACKOFF_RETRY, EXPONENTIAL_DECAY_RETRY)
XML, JSON, SIMPLIFIED = "XML", "JSON", "SIMPLIFIED"
CONTENT_FORMATS = (XML, JSON, SIMPLIFIED)

QUEUE, HTTP, MAIL, SMS = "queue", "http", "mail", "sms"
CLOUD_KINDS = (LAMBDA, EVENTBRIDGE)  # a Lambda function, an EventBridge bus (`mnsd.model.cloud_targets`)
_QUEUE_ENDPOINT = re.compile(r"acs:mns:(?P<region>[^:]+):(?P<account>\d+):queues/(?P<name>[A-Za-z0-9][A-Za-z0-9-]*)\Z")
_MAIL_ENDPOINT = re.compile(r"mail:directmail:(?P<address>[^@\s]+@[^@\s]+\.[^@\s]+)\Z")
_SMS_ENDPOINT = re.compile(r"sms:directsms:(?P<phone>anonymous|\+?\d{5,20})\Z")
_HTTP_ENDPOINT = re.compile(r"https?://[^/\s?#]+(?P<path>/[^\s#]*)?\Z", re.IGNORECASE)
RESERVED_PATH_PREFIX = "/mns-reserved-"
# What the push kinds no AWS service stands behind deliver to, and why each is refused (`mnsd.rpc.push_kinds`).
UNSERVED_KINDS = {
    "fc": "Alibaba Cloud Function Compute functions are not on AWS: subscribe a Lambda function by its ARN "
    "(arn:{partition}:lambda:{region}:{account}:function:{name}) instead.",
    "eventbus": "Alibaba Cloud EventBridge buses are not on AWS: subscribe an Amazon EventBridge bus by its ARN "
    "(arn:{partition}:events:{region}:{account}:event-bus/{name}) instead.",
    "mpush": "Alibaba Cloud Mobile Push apps are not on AWS: subscribe an HTTP endpoint or a queue instead.",
    "kafka": "Alibaba Cloud Kafka instances are not on AWS: subscribe an HTTP endpoint or a queue instead.",
}
# The Endpoint texts of those kinds: the resource names Alibaba Cloud gives them, and MNS's PushEndpoint.
_UNSERVED_ENDPOINTS = (
    ("acs:fc:", "fc"),
    ("acs:eventbridge:", "eventbus"),
    ("push:", "mpush"),
    ("acs:alikafka:", "kafka"),
)
QUEUE_ENDPOINT_REFUSAL = "A QueueEndpoint must name a queue of the topic's account and region."


class QueueGrants(Protocol):
    def may_send(self, sender: str, owner: str, queue: str) -> bool:
        """Whether account `sender` may send to queue `queue` of account `owner` (its own: always)."""
        ...


@dataclass(frozen=True)
class TopicAttributeChanges:
    """Topic attributes as a request gives them: the text of each one given, None for the others."""

    maximum_message_size: str | None = None
    logging_enabled: str | None = None
    policy: str | None = None  # the resource policy (JSON), "" to remove it
    metrics_enabled: str | None = None  # True, False, or "" (the stack's default again)
    tags: TagChanges | None = None  # the OpenAPI's tags (`mnsd.model.tags`)


@dataclass(frozen=True)
class TopicAttributes:
    maximum_message_size: int = 65536
    logging_enabled: bool = False
    policy: str = ""  # the resource policy granting other accounts (JSON, `mnsd.model.policy`); "": none
    # Live metrics on AWS (`mnsd.metrics.monitored`): the topic's and its subscriptions' counts; None: the default.
    metrics_enabled: bool | None = None
    tags: str = dataclasses.field(default="", compare=False)  # as a queue's (`mnsd.model.tags`)

    def updated_from(self, given: TopicAttributeChanges) -> TopicAttributes:
        """These attributes with the given ones applied, each checked."""
        size = self.maximum_message_size
        if given.maximum_message_size is not None:
            size = int_in_range("MaximumMessageSize", given.maximum_message_size, 1024, 65536, "bytes")
        logging = self.logging_enabled
        if given.logging_enabled is not None:
            logging = mns_bool("LoggingEnabled", given.logging_enabled)
        policy = self.policy if given.policy is None else resource_policy_document(given.policy)
        chosen = self.metrics_enabled
        if given.metrics_enabled is not None:
            chosen = None if not given.metrics_enabled.strip() else mns_bool("MetricsEnabled", given.metrics_enabled)
        tags = self.tags if given.tags is None else applied(self.tags, given.tags)
        return dataclasses.replace(
            self, maximum_message_size=size, logging_enabled=logging, policy=policy, metrics_enabled=chosen, tags=tags
        )


@dataclass(frozen=True)
class Topic:
    account_id: str
    name: str
    topic_id: str  # one per incarnation
    attributes: TopicAttributes
    create_time: int  # seconds
    last_modify_time: int  # seconds


@dataclass(frozen=True)
class Endpoint:
    """Where a subscription delivers: `kind` is queue, http, mail, sms, lambda or eventbridge; `target` what names it
    there (a function's or bus's ARN)."""

    kind: str
    target: str
    region: str = ""
    account_id: str = ""


def parse_endpoint(text: str, region: str, account_id: str) -> Endpoint:
    """Check an Endpoint as Subscribe receives it (EndpointInvalid otherwise).

    A QueueEndpoint names a queue of the topic's region; one of another account is delivered to only while
    that queue's policy lets the topic's account send to it (`TopicService.subscribe`, `Deliverer`)."""
    text = text.strip()
    if found := _QUEUE_ENDPOINT.match(text):
        if found["region"] != region:
            raise errors.EndpointInvalid(QUEUE_ENDPOINT_REFUSAL)
        return Endpoint(QUEUE, found["name"], found["region"], found["account"])
    if found := _HTTP_ENDPOINT.match(text):
        if (found["path"] or "").lower().startswith(RESERVED_PATH_PREFIX):
            raise errors.EndpointInvalid("The endpoint's path may not start with mns-reserved-.")
        return Endpoint(HTTP, text)
    if found := _MAIL_ENDPOINT.match(text):
        return Endpoint(MAIL, found["address"])
    if found := _SMS_ENDPOINT.match(text):
        return Endpoint(SMS, found["phone"])
    if target := cloud_target(text):  # its region and the deployment's allow-list: `TopicService.subscribe`
        return Endpoint(target.kind, target.arn, target.region, target.account_id)
    kind = next((kind for prefix, kind in _UNSERVED_ENDPOINTS if text.lower().startswith(prefix)), None)
    raise errors.EndpointInvalid(f"Push kind {kind} is not served: {UNSERVED_KINDS[kind]}" if kind else None)


@dataclass(frozen=True)
class SubscriptionInput:
    """A Subscribe request as given: texts, None where absent; `subscription_attributes` checks it."""

    endpoint: str | None = None
    filter_tag: str | None = None
    notify_strategy: str | None = None
    notify_content_format: str | None = None
    dlq_policy: DlqPolicyInput | None = None
    endpoint_given: str | None = None  # Mns-open's Endpoint as written, where `endpoint` is its full form


@dataclass(frozen=True)
class SubscriptionChanges:
    """A SetSubscriptionAttributes request as given (the NotifyStrategy and the DlqPolicy may change)."""

    notify_strategy: str | None = None
    dlq_policy: DlqPolicyInput | None = None


@dataclass(frozen=True)
class SubscriptionAttributes:
    endpoint: str
    filter_tag: str = ""
    notify_strategy: str = BACKOFF_RETRY
    notify_content_format: str = XML
    # DlqPolicy: where a push whose retries are exhausted goes instead of being dropped (a queue of the
    # subscription's account). A disabled policy keeps the queue it names.
    dlq_enabled: bool = False
    dlq_target_queue: str = ""
    # The Endpoint as Mns-open's Subscribe was given it, where that differs from `endpoint` (a bare queue name, read
    # back so on that plane, as Alibaba's does and Terraform compares); "" otherwise. Not compared: the same
    # subscription made on either plane is the same subscription.
    endpoint_given: str = dataclasses.field(default="", compare=False)

    @property
    def shown_endpoint(self) -> str:
        """The Endpoint as Mns-open reads it back: as it was given."""
        return self.endpoint_given or self.endpoint

    @property
    def dead_letter_queue(self) -> str | None:
        """The queue exhausted pushes go to, or None when they are dropped."""
        return self.dlq_target_queue if self.dlq_enabled and self.dlq_target_queue else None

    def with_dlq_policy(self, given: DlqPolicyInput | None) -> SubscriptionAttributes:
        """These attributes with a request's DlqPolicy applied, its values checked (not the queue's existence)."""
        if given is None:
            return self
        enabled = True if given.enabled is None else mns_bool("DlqPolicy.Enabled", given.enabled)
        target = (given.dead_letter_target_queue or "").strip()
        if target:
            try:
                check_queue_name(target)
            except errors.MnsError:
                raise errors.InvalidArgument(
                    "The value of DlqPolicy.DeadLetterTargetQueue is not a valid queue name."
                ) from None
        target = target or self.dlq_target_queue  # re-enabled without naming one: the queue it kept
        if enabled and not target:
            raise errors.InvalidArgument("An enabled DlqPolicy needs a DeadLetterTargetQueue.")
        queue_endpoint = _QUEUE_ENDPOINT.match(self.endpoint)
        if enabled and queue_endpoint and queue_endpoint["name"] == target:
            raise errors.InvalidArgument("A subscription cannot dead-letter to the queue it delivers to.")
        return dataclasses.replace(self, dlq_enabled=enabled, dlq_target_queue=target)


def _choice(element: str, text: str, allowed: tuple[str, ...]) -> str:
    value = text.strip().upper()
    if value not in allowed:
        raise errors.InvalidArgument(f"The value of {element} should be one of {', '.join(allowed)}.")
    return value


def notify_strategy(text: str) -> str:
    return _choice("NotifyStrategy", text, NOTIFY_STRATEGIES)


def subscription_attributes(given: SubscriptionInput, region: str, account_id: str) -> SubscriptionAttributes:
    """The attributes of a Subscribe request, validated."""
    endpoint = given.endpoint
    if not endpoint:
        raise errors.EndpointInvalid("The Endpoint is required.")
    kind = parse_endpoint(endpoint, region, account_id).kind
    as_given = (given.endpoint_given or "").strip()
    tag = given.filter_tag
    if tag is not None and not 1 <= len(tag) <= MAX_TAG_LENGTH:
        raise errors.InvalidArgument("The length of filter tag should be between 1 and 16.")
    strategy = given.notify_strategy
    content_format = given.notify_content_format
    fmt = XML if not content_format else _choice("NotifyContentFormat", content_format, CONTENT_FORMATS)
    if kind in (MAIL, SMS):  # mail and SMS carry the message body only
        if content_format and fmt != SIMPLIFIED:
            raise errors.InvalidArgument("Mail and SMS endpoints support the SIMPLIFIED format only.")
        fmt = SIMPLIFIED
    return SubscriptionAttributes(
        endpoint=endpoint.strip(),
        filter_tag=tag or "",
        notify_strategy=BACKOFF_RETRY if not strategy else notify_strategy(strategy),
        notify_content_format=fmt,
        endpoint_given=as_given if as_given != endpoint.strip() else "",
    ).with_dlq_policy(given.dlq_policy)


@dataclass(frozen=True)
class Subscription:
    account_id: str  # the topic owner, who is also the subscriber
    topic_name: str
    name: str
    attributes: SubscriptionAttributes
    create_time_ms: int  # the subscription receives messages published from this moment on
    last_modify_time: int  # seconds
    topic_id: str  # the topic incarnation it belongs to

    @property
    def create_time(self) -> int:
        return self.create_time_ms // 1000

    def endpoint(self, region: str) -> Endpoint:
        return parse_endpoint(self.attributes.endpoint, region, self.account_id)

    def arn(self, region: str) -> str:
        """The subscription's resource name, as dead-lettered messages name their origin."""
        return f"acs:mns:{region}:{self.account_id}:topics/{self.topic_name}/subscriptions/{self.name}"

    def accepts(self, message: TopicMessage) -> bool:
        tag = self.attributes.filter_tag
        return message.publish_time >= self.create_time_ms and (not tag or tag == message.tag)


@dataclass(frozen=True)
class TopicMessage:
    account_id: str
    topic_name: str
    topic_id: str
    message_id: str
    body: str
    tag: str
    publish_time: int  # ms
    direct_mail: dict | None = None
    direct_sms: dict | None = None
    user_properties: tuple[Property, ...] = ()
    logging_enabled: bool = False  # the topic's LoggingEnabled when it was published
    metrics_enabled: bool | None = None  # the topic's MetricsEnabled when it was published: its pushes' counts follow
    message_group_id: str = ""  # handed on to queue endpoints (a FIFO queue keeps the group's order)

    @property
    def body_md5(self) -> str:
        return body_md5(self.body)


@dataclass(frozen=True)
class TopicMessagePublished:
    """A published message as its engine's change feed announces it for fan-out (on DynamoDB, the topic message
    table's stream: `mnsd.storage.dynamodb.tables.changes`). `position` is where the announcement stands in that feed (a
    stream record's sequence number): the feed hands the message over again from there when its fan-out fails."""

    message: TopicMessage
    position: str
