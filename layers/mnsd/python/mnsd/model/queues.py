"""Queues: their attributes with the MNS ranges and defaults, the changes a request may ask of them and the rules
that check those changes, receivers, and the counts a queue's gauges show."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mnsd.ground import errors
from mnsd.ground.validation import int_in_range, json_text, mns_bool
from mnsd.model.alarms import QueueAlarms, alarms_document
from mnsd.model.policy import resource_policy_document
from mnsd.model.tags import TagChanges, applied

# QueueType (the OpenAPI's `normal | fifo`): chosen when a queue is created, never changed.
QUEUE_TYPES = ("normal", "fifo")


def queue_type(text: str) -> str:
    """A QueueType as given, checked (lower case, as the OpenAPI spells it)."""
    value = text.strip().lower()
    if value not in QUEUE_TYPES:
        raise errors.InvalidArgument("The QueueType should be normal or fifo.")
    return value


# MessageRetentionPeriod's longest: CMQ's 15 days (MNS stops at 7, 604,800 s; a longer one is accepted, never needed).
MAX_RETENTION_SECONDS = 1_296_000


@dataclass(frozen=True)
class IntAttribute:
    element: str
    field: str
    low: int
    high: int
    unit: str


INT_ATTRIBUTES = (
    IntAttribute("DelaySeconds", "delay_seconds", 0, 604800, "seconds"),
    IntAttribute("MaximumMessageSize", "maximum_message_size", 1024, 65536, "bytes"),
    IntAttribute("MessageRetentionPeriod", "message_retention_period", 60, MAX_RETENTION_SECONDS, "seconds"),
    IntAttribute("VisibilityTimeout", "visibility_timeout", 1, 43200, "seconds"),
    IntAttribute("PollingWaitSeconds", "polling_wait_seconds", 0, 30, "seconds"),
)


@dataclass(frozen=True)
class QueueAttributeChanges:
    """Queue attributes as a request gives them: the text of each one given, None for the others.

    `QueueAttributes.updated_from` checks them (after the queue is found, as MNS does).
    """

    delay_seconds: str | None = None
    maximum_message_size: str | None = None
    message_retention_period: str | None = None
    visibility_timeout: str | None = None
    polling_wait_seconds: str | None = None
    logging_enabled: str | None = None
    dlq_policy: DlqPolicyInput | None = None
    rewind_period: str | None = None
    policy: str | None = None  # the resource policy (JSON), "" to remove it
    rate_limit: RateLimitInput | None = None
    queue_type: str | None = None  # given at creation; a change is refused
    metrics_enabled: str | None = None  # True, False, or "" (the stack's default again)
    alarms: str | None = None  # JSON (`mnsd.model.alarms`), "" to remove them
    tags: TagChanges | None = None  # the OpenAPI's tags (`mnsd.model.tags`)


def metrics_choice(element: str, text: str) -> bool | None:
    """A MetricsEnabled as given: True or False, or "" for none (the stack's default decides)."""
    return None if not text.strip() else mns_bool(element, text)


@dataclass(frozen=True)
class RateLimitInput:
    """A `<TenantRateLimitPolicy>` as a request gives it (the OpenAPI's names): the text of each element."""

    enabled: str | None = None
    max_receives_per_second: str | None = None

    @classmethod
    def from_json(cls, given: dict[str, object]) -> RateLimitInput:
        """As the JSON object GetQueueAttributes answers (and the OpenAPI sends) gives it."""
        return cls(json_text(given.get("Enabled")), json_text(given.get("MaxReceivesPerSecond")))


MAX_RECEIVES_PER_SECOND_RANGE = (1, 100000)


def max_receives_per_second(given: RateLimitInput) -> int:
    """The receive limit a `<TenantRateLimitPolicy>` sets (0: Enabled False turns it off), checked."""
    if given.enabled is not None and not mns_bool("TenantRateLimitPolicy.Enabled", given.enabled):
        return 0
    return int_in_range("MaxReceivesPerSecond", given.max_receives_per_second, *MAX_RECEIVES_PER_SECOND_RANGE)


@dataclass(frozen=True)
class DlqPolicyInput:
    """A `<DlqPolicy>` as a request gives it: the text of each element, None where absent."""

    enabled: str | None = None
    dead_letter_target_queue: str | None = None
    max_receive_count: str | None = None

    @classmethod
    def from_json(cls, given: dict[str, object]) -> DlqPolicyInput:
        """As the JSON object GetQueueAttributes answers (and the OpenAPI sends) gives it."""
        return cls(
            json_text(given.get("Enabled")),
            json_text(given.get("DeadLetterTargetQueue")),
            json_text(given.get("MaxReceiveCount")),
        )


MAX_RECEIVE_COUNT_RANGE = (1, 1000)


@dataclass(frozen=True)
class DlqPolicy:
    """Where a queue moves a message whose next receive would exceed `max_receive_count`."""

    target: str
    max_receive_count: int


def dlq_policy(given: DlqPolicyInput) -> DlqPolicy | None:
    """The policy a `<DlqPolicy>` sets (None: Enabled False turns it off), its values checked."""
    if given.enabled is not None and not mns_bool("DlqPolicy.Enabled", given.enabled):
        return None
    target = given.dead_letter_target_queue
    if not target:
        raise errors.InvalidArgument("The DlqPolicy needs a DeadLetterTargetQueue.")
    count = int_in_range("MaxReceiveCount", given.max_receive_count, *MAX_RECEIVE_COUNT_RANGE)
    return DlqPolicy(target, count)


@dataclass(frozen=True)
class QueueAttributes:
    delay_seconds: int = 0
    maximum_message_size: int = 65536
    message_retention_period: int = 259200
    visibility_timeout: int = 30
    polling_wait_seconds: int = 0
    logging_enabled: bool = False
    # DlqPolicy, flat (the catalog stores attributes as one flat record); no target: no policy.
    dlq_target: str = ""
    dlq_max_receive_count: int = 0
    rewind_period: int = 0  # seconds a deleted message stays rewindable (0: rewind off)
    policy: str = ""  # the resource policy granting other accounts (JSON, `mnsd.model.policy`); "": none
    max_receives_per_second: int = 0  # TenantRateLimitPolicy: receives past it answer QpsLimitExceeded (0: none)
    queue_type: str = "normal"  # "fifo": each MessageGroupId's messages delivered in send order, one batch at a time
    # Live metrics on AWS (`mnsd.metrics.monitored`): True or False as the queue chose, None to follow the stack's
    # default; and the CloudWatch alarms it asks for (`mnsd.model.alarms`, canonical JSON; "": none).
    metrics_enabled: bool | None = None
    alarms: str = ""
    # Resource tags (`mnsd.model.tags`: canonical JSON, "": none); not compared, so a create naming no tags finds a
    # tagged queue equal.
    tags: str = dataclasses.field(default="", compare=False)

    @property
    def metrics_chosen(self) -> bool | None:
        """The queue's choice of being monitored: a queue with alarms is (they read its metrics); else its
        MetricsEnabled (None: the stack's default decides)."""
        return True if self.alarms else self.metrics_enabled

    @property
    def queue_alarms(self) -> QueueAlarms:
        return QueueAlarms.parse(self.alarms)

    @property
    def dlq_policy(self) -> DlqPolicy | None:
        return DlqPolicy(self.dlq_target, self.dlq_max_receive_count) if self.dlq_target else None

    def updated_from(self, given: QueueAttributeChanges) -> QueueAttributes:
        """These attributes with the given ones applied, each checked against its range."""
        changes: dict[str, Any] = {}  # int values (the fields beside them are typed otherwise)
        for attribute in INT_ATTRIBUTES:
            text = getattr(given, attribute.field)
            if text is not None:
                changes[attribute.field] = int_in_range(
                    attribute.element, text, attribute.low, attribute.high, attribute.unit
                )
        logging = self.logging_enabled
        if given.logging_enabled is not None:
            logging = mns_bool("LoggingEnabled", given.logging_enabled)
        updated = dataclasses.replace(self, logging_enabled=logging, **changes)
        if given.dlq_policy is not None:
            policy = dlq_policy(given.dlq_policy)
            updated = dataclasses.replace(
                updated,
                dlq_target=policy.target if policy else "",
                dlq_max_receive_count=policy.max_receive_count if policy else 0,
            )
        if given.policy is not None:
            updated = dataclasses.replace(updated, policy=resource_policy_document(given.policy))
        if given.rate_limit is not None:
            updated = dataclasses.replace(updated, max_receives_per_second=max_receives_per_second(given.rate_limit))
        if given.queue_type is not None and queue_type(given.queue_type) != self.queue_type:
            raise errors.InvalidArgument("The QueueType of a queue cannot be changed.")
        updated = _with_tags(_with_monitoring(updated, given), given)
        if given.rewind_period is not None:
            retention = updated.message_retention_period
            period = int_in_range("RewindPeriod", given.rewind_period, 0, retention, "seconds")
            updated = dataclasses.replace(updated, rewind_period=period)
        elif updated.rewind_period > updated.message_retention_period:
            raise errors.InvalidArgument("The value of RewindPeriod should not be larger than MessageRetentionPeriod.")
        return updated


def _with_tags(attributes: QueueAttributes, given: QueueAttributeChanges) -> QueueAttributes:
    return (
        attributes if given.tags is None else dataclasses.replace(attributes, tags=applied(attributes.tags, given.tags))
    )


def _with_monitoring(attributes: QueueAttributes, given: QueueAttributeChanges) -> QueueAttributes:
    """MetricsEnabled and Alarms applied: a queue cannot ask for alarms while refusing the metrics they read."""
    if given.metrics_enabled is not None:
        attributes = dataclasses.replace(
            attributes, metrics_enabled=metrics_choice("MetricsEnabled", given.metrics_enabled)
        )
    if given.alarms is not None:
        attributes = dataclasses.replace(attributes, alarms=alarms_document(given.alarms))
    if attributes.alarms and attributes.metrics_enabled is False:
        raise errors.InvalidArgument(
            "A queue with Alarms publishes the metrics they read: set MetricsEnabled True, or leave it unset."
        )
    return attributes


@dataclass(frozen=True)
class Receiver:
    """A named receiver of a queue (`mnsd.queues.receivers`): its own incarnation (`queue_id`) of every message sent
    to the queue since `start_time`, with its own leases, and the attributes it sets for itself (None: the queue's)."""

    name: str
    queue_id: str
    create_time_ms: int  # messages enqueued from then on are copied to it when sent
    start_time: int  # s: it receives the messages enqueued from then on
    last_modify_time: int  # s
    visibility_timeout: int | None = None
    polling_wait_seconds: int | None = None
    dlq_target: str | None = None  # None: the queue's DlqPolicy; "": none; else the policy's target
    dlq_max_receive_count: int = 0
    # Where copying the queue's messages enqueued between `start_time` and `create_time_ms` goes on (an engine's
    # cursor, "" at the start); None once done.
    copy_cursor: str | None = None


@dataclass(frozen=True)
class Queue:
    account_id: str
    name: str
    queue_id: str  # one per incarnation: a re-created queue never sees its predecessor's messages
    attributes: QueueAttributes
    create_time: int  # seconds
    last_modify_time: int  # seconds
    receivers: tuple[Receiver, ...] = ()
    receivers_version: int = 0  # bumped by every change of `receivers` (0: never had any)


@dataclass(frozen=True)
class QueueCounts:
    active: int = 0
    inactive: int = 0
    delayed: int = 0


@dataclass(frozen=True)
class Backlog:
    """A queue's messages as its gauges show them: its counts, and when the oldest of its messages that is not
    delayed (Active or Inactive) was enqueued (None: it has none)."""

    counts: QueueCounts
    oldest_enqueue_time: int | None = None  # ms

    def oldest_age_seconds(self, now_ms: int) -> float:
        """How long the oldest message not delayed has been in the queue (SQS's ApproximateAgeOfOldestMessage)."""
        return 0.0 if self.oldest_enqueue_time is None else max(0, now_ms - self.oldest_enqueue_time) / 1000
