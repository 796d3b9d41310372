"""Queues and queue messages: attributes with their MNS ranges and defaults, and message states."""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any

from mnsd import errors
from mnsd.access.policy import resource_policy_document
from mnsd.queues.alarms import QueueAlarms, alarms_document
from mnsd.tags import TagChanges, applied
from mnsd.validation import int_in_range, json_text, mns_bool

MAX_BATCH = 16
# The system properties a dead letter carries (the names SDK 1.3.0 knows), and its two message types.
DLQ_MESSAGE_TYPE = "DLQMessageType"
DLQ_SOURCE_ARN = "DLQSourceArn"
DLQ_ORIGIN_MESSAGE_ID = "DLQOriginMessageId"
DLQ_PROPERTIES = (DLQ_MESSAGE_TYPE, DLQ_SOURCE_ARN, DLQ_ORIGIN_MESSAGE_ID)
DLQ_TYPE_QUEUE = "QUEUE"  # moved by a queue's DlqPolicy (a receive past MaxReceiveCount)
DLQ_TYPE_SUBSCRIPTION = "SUBSCRIPTION"  # a push given up by a subscription with a DlqPolicy

MAX_BATCH_BYTES = 65536

# QueueType (the OpenAPI's `normal | fifo`): chosen when a queue is created, never changed.
QUEUE_TYPES = ("normal", "fifo")
# A MessageGroupId: 1-128 printable ASCII characters but space and '|' (SQS's set, less the receipt separator).
_GROUP_ID = re.compile(r"[!-{}~]{1,128}\Z")


def queue_type(text: str) -> str:
    """A QueueType as given, checked (lower case, as the OpenAPI spells it)."""
    value = text.strip().lower()
    if value not in QUEUE_TYPES:
        raise errors.InvalidArgument("The QueueType should be normal or fifo.")
    return value


def message_group_id(text: str) -> str:
    if not _GROUP_ID.match(text):
        raise errors.InvalidArgument(
            "The MessageGroupId should be 1 to 128 printable ASCII characters, without spaces or '|'."
        )
    return text


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
    IntAttribute("MessageRetentionPeriod", "message_retention_period", 60, 604800, "seconds"),
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
    alarms: str | None = None  # JSON (`mnsd.queues.alarms`), "" to remove them
    tags: TagChanges | None = None  # the OpenAPI's tags (`mnsd.tags`)


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
    policy: str = ""  # the resource policy granting other accounts (JSON, `mnsd.access.policy`); "": none
    max_receives_per_second: int = 0  # TenantRateLimitPolicy: receives past it answer QpsLimitExceeded (0: none)
    queue_type: str = "normal"  # "fifo": each MessageGroupId's messages delivered in send order, one batch at a time
    # Live metrics on AWS (`mnsd.metrics.monitored`): True or False as the queue chose, None to follow the stack's
    # default; and the CloudWatch alarms it asks for (`mnsd.queues.alarms`, canonical JSON; "": none).
    metrics_enabled: bool | None = None
    alarms: str = ""
    # Resource tags (`mnsd.tags`: canonical JSON, "": none); not compared, so a create naming no tags finds a tagged
    # queue equal.
    tags: str = dataclasses.field(default="", compare=False)

    @property
    def fifo(self) -> bool:
        return self.queue_type == "fifo"

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


@dataclass(frozen=True)
class Property:
    name: str
    value: str
    type: str


def dead_letter_marks(kind: str, source_arn: str, origin_message_id: str) -> tuple[Property, ...]:
    """The system properties that say where a dead letter came from."""
    return (
        Property(DLQ_MESSAGE_TYPE, kind, "STRING"),
        Property(DLQ_SOURCE_ARN, source_arn, "STRING"),
        Property(DLQ_ORIGIN_MESSAGE_ID, origin_message_id, "STRING"),
    )


def without_dead_letter_marks(properties: tuple[Property, ...]) -> tuple[Property, ...]:
    return tuple(p for p in properties if p.name not in DLQ_PROPERTIES)


@dataclass(frozen=True)
class PropertyInput:
    """A user or system property as a request gives it: any part may be missing."""

    name: str | None
    value: str | None
    type: str | None


def properties(given: tuple[PropertyInput, ...], entry: str) -> tuple[Property, ...]:
    """The given properties, each complete (`entry` names their element in the error)."""
    found = []
    for value in given:
        name, text, kind = value.name, value.value, value.type
        if not name or text is None or not kind:
            raise errors.InvalidArgument(f"Each {entry} needs Name, Value and Type.")
        found.append(Property(name, text, kind))
    return tuple(found)


@dataclass(frozen=True)
class MessageRequest:
    """A message as a send request gives it: texts as given, None where absent; `message_input` checks it."""

    body: str | None = None
    delay_seconds: str | None = None
    priority: str | None = None
    user_properties: tuple[PropertyInput, ...] = ()
    system_properties: tuple[PropertyInput, ...] = ()
    message_group_id: str | None = None


@dataclass(frozen=True)
class MessageInput:
    """A message as sent, validated."""

    body: str
    delay_seconds: int | None  # None: the queue's DelaySeconds
    priority: int
    user_properties: tuple[Property, ...] = ()
    system_properties: tuple[Property, ...] = ()
    message_group_id: str = ""
    priority_given: bool = False  # the request named a Priority (a FIFO queue refuses it)

    @property
    def body_md5(self) -> str:
        return body_md5(self.body)

    def check_fifo(self) -> None:
        """Whether a FIFO queue takes this message: with a valid MessageGroupId, without its own delay or priority."""
        if not self.message_group_id:
            raise errors.InvalidArgument("A message sent to a fifo queue needs a MessageGroupId.")
        if self.delay_seconds is not None:
            raise errors.InvalidArgument("A fifo queue takes no DelaySeconds per message (the queue's applies).")
        if self.priority_given:
            raise errors.InvalidArgument("A fifo queue takes no Priority: its messages keep their send order.")
        message_group_id(self.message_group_id)


def body_md5(body: str) -> str:
    return hashlib.md5(body.encode("utf-8")).hexdigest().upper()


def message_input(given: MessageRequest) -> MessageInput:
    """A sent message, checked (before its queue is looked up, as MNS does)."""
    body = given.body
    if not body:
        raise errors.InvalidArgument("The MessageBody should not be empty.")
    delay = given.delay_seconds
    priority = given.priority
    return MessageInput(
        body=body,
        delay_seconds=None if delay is None else int_in_range("DelaySeconds", delay, 0, 604800, "seconds"),
        priority=8 if priority is None else int_in_range("Priority", priority, 1, 16),
        user_properties=properties(given.user_properties, "PropertyValue"),
        system_properties=properties(given.system_properties, "SystemPropertyValue"),
        message_group_id=given.message_group_id or "",
        priority_given=priority is not None,
    )


def message_batch(given: list[MessageRequest]) -> list[MessageInput]:
    """The messages of a batch send, checked: their count, each message, then their total size."""
    if not 1 <= len(given) <= MAX_BATCH:
        raise errors.InvalidArgument(f"The count of message should between 1 and {MAX_BATCH}.")
    inputs = [message_input(message) for message in given]
    if sum(len(m.body.encode("utf-8")) for m in inputs) > MAX_BATCH_BYTES:
        raise errors.InvalidArgument(f"The total size of messages should not be larger than {MAX_BATCH_BYTES} bytes.")
    return inputs


class MessageState(enum.Enum):
    ACTIVE = "Active"  # receivable now
    INACTIVE = "Inactive"  # received, its visibility timeout running
    DELAYED = "Delayed"  # sent with a delay, never received yet
    EXPIRED = "Expired"  # its retention period is over


def lease_state(visible_at: int, dequeue_count: int, expires_at: int, now_ms: int) -> MessageState:
    """The one rule for a message's state, from its lease fields (ms, count, epoch seconds)."""
    if expires_at <= now_ms // 1000:
        return MessageState.EXPIRED
    if visible_at <= now_ms:
        return MessageState.ACTIVE
    return MessageState.INACTIVE if dequeue_count > 0 else MessageState.DELAYED


def new_message_id(now_ms: int, slot: int = 1) -> str:
    """A new message id, `{16 hex}-{slot}-{ms hex}-{9 digits}`: the slot (a positive number) is the storage engine's
    to choose (`MessageStore.new_ids`: the DynamoDB engine names the message's partition by it)."""
    return f"{secrets.token_hex(8).upper()}-{slot}-{now_ms:X}-{secrets.randbelow(10**9):09d}"


def message_id_time(message_id: str) -> int | None:
    """The time (ms) a message id was made at (`new_message_id`); None for an id of another shape."""
    parts = message_id.split("-")
    if len(parts) != 4:
        return None
    try:
        return int(parts[2], 16)
    except ValueError:
        return None


@dataclass(frozen=True)
class MessageRef:
    """Where a message lives: its queue incarnation, queue order (priority, position) and id.

    `key` is its compact form, the one receipt handles carry.
    """

    queue_id: str
    priority: int
    position: int  # a FIFO message's: its place in its group (`MessageStore.sequence`)
    message_id: str
    group: str = ""  # a FIFO message's (a FIFO queue's) MessageGroupId; "" for the others

    @property
    def key(self) -> str:
        group = f"~{base64.urlsafe_b64encode(self.group.encode()).decode()}" if self.group else ""
        return f"L{self.priority:02d}{self.position:013d}{self.message_id}{group}"

    @classmethod
    def from_key(cls, queue_id: str, key: str) -> MessageRef:
        if len(key) < 17 or not key.startswith("L") or not key[1:16].isdigit():
            raise ValueError("not a message key")
        message_id, _, group = key[16:].partition("~")
        try:
            decoded = base64.urlsafe_b64decode(group.encode()).decode() if group else ""
        except (ValueError, UnicodeDecodeError):
            raise ValueError("not a message key") from None
        return cls(queue_id, int(key[1:3]), int(key[3:16]), message_id, decoded)


@dataclass(frozen=True)
class Content:
    """What a message carries, whatever queue it is in and whatever its lease."""

    body_md5: str
    body: str | None
    priority: int
    user_properties: tuple[Property, ...] = ()
    system_properties: tuple[Property, ...] = ()
    message_group_id: str = ""
    logging: bool = False  # the queue's LoggingEnabled at send: its events go to the operation log
    fifo: bool = False  # a FIFO queue's message: delivered in its group's order (`position` is its place there)


def _carried(source: Content | Message) -> dict[str, Any]:
    """The fields of `Content` as `source` holds them (a message's content, or content for a message)."""
    return {f.name: getattr(source, f.name) for f in dataclasses.fields(Content)}


@dataclass
class Message:
    """A stored message with its lease state (the part every receive changes)."""

    queue_id: str
    message_id: str
    priority: int
    position: int  # ms: when it first became (or becomes) receivable; orders it in the queue
    visible_at: int  # ms: NextVisibleTime
    version: int  # bumped by every receive and visibility change; receipt handles name it
    dequeue_count: int
    enqueue_time: int  # ms
    first_dequeue_time: int  # ms; EnqueueTime until the first receive
    expires_at: int  # s: end of retention
    body_md5: str
    body: str | None = None  # None until loaded when the body is stored apart from the lease
    user_properties: tuple[Property, ...] = ()
    system_properties: tuple[Property, ...] = ()
    message_group_id: str = ""
    logging: bool = False  # the queue's LoggingEnabled at send: its events go to the operation log
    fifo: bool = False  # a FIFO queue's message: delivered in its group's order (`position` is its place there)

    @classmethod
    def enqueued(
        cls,
        queue_id: str,
        message_id: str,
        now_ms: int,
        available_at: int,
        expires_at: int,
        content: Content,
        position: int | None = None,
    ) -> Message:
        """A message as it enters a queue at `now_ms`: receivable from `available_at`, never received; its place in
        the queue `available_at`, or for a FIFO message its place in its group (`position`)."""
        return cls(
            queue_id,
            message_id,
            position=available_at if position is None else position,
            visible_at=available_at,
            version=0,
            dequeue_count=0,
            enqueue_time=now_ms,
            first_dequeue_time=now_ms,
            expires_at=expires_at,
            **_carried(content),
        )

    @property
    def content(self) -> Content:
        return Content(**_carried(self))

    @property
    def ref(self) -> MessageRef:
        group = self.message_group_id if self.fifo else ""
        return MessageRef(self.queue_id, self.priority, self.position, self.message_id, group)

    def state_at(self, now_ms: int) -> MessageState:
        return lease_state(self.visible_at, self.dequeue_count, self.expires_at, now_ms)

    def held_by(self, version: int, now_ms: int) -> bool:
        """Whether a receipt handle issued for `version` still names this lease (not yet visible again)."""
        return self.version == version and self.visible_at > now_ms and self.expires_at > now_ms // 1000

    def received(self, now_ms: int, visible_at: int) -> Message:
        """This message as one receive at `now_ms` leaves it (hidden until `visible_at`); only Active ones."""
        if self.state_at(now_ms) is not MessageState.ACTIVE:
            raise ValueError(f"a {self.state_at(now_ms).value} message cannot be received")
        return dataclasses.replace(
            self,
            visible_at=visible_at,
            version=self.version + 1,
            dequeue_count=self.dequeue_count + 1,
            first_dequeue_time=now_ms if self.dequeue_count == 0 else self.first_dequeue_time,
        )

    def moved(
        self,
        queue_id: str,
        message_id: str,
        now_ms: int,
        system_properties: tuple[Property, ...],
        logging: bool,
        position: int | None = None,
    ) -> Message:
        """This message as a new one of another queue (a dead letter, or one redriven back): receivable now,
        never received, its body, priority, user properties, group and end of retention kept; in its group's order there when the
        target is a FIFO queue, at `position` in its group."""
        content = dataclasses.replace(
            self.content, system_properties=system_properties, logging=logging, fifo=position is not None
        )
        return Message.enqueued(queue_id, message_id, now_ms, now_ms, self.expires_at, content, position)

    def retimed(self, version: int, now_ms: int, visible_at: int) -> Message:
        """This message with its next visible time moved by the holder of the handle for `version`."""
        if not self.held_by(version, now_ms):
            raise ValueError("the lease is no longer held by this handle")
        return dataclasses.replace(self, visible_at=visible_at, version=self.version + 1)
