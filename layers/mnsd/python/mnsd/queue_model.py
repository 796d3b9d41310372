"""Queues and queue messages: attributes with their MNS ranges and defaults, and message states."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from mnsd.validation import int_in_range, mns_bool
from mnsd.xmlcodec import Element


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
class QueueAttributes:
    delay_seconds: int = 0
    maximum_message_size: int = 65536
    message_retention_period: int = 259200
    visibility_timeout: int = 30
    polling_wait_seconds: int = 0
    logging_enabled: bool = False

    def updated_from(self, xml: Element) -> QueueAttributes:
        """These attributes with the ones present in a `<Queue>` request body applied."""
        changes: dict[str, object] = {}
        for attribute in INT_ATTRIBUTES:
            text = xml.value(attribute.element)
            if text is not None:
                changes[attribute.field] = int_in_range(
                    attribute.element, text, attribute.low, attribute.high, attribute.unit
                )
        logging = xml.value("LoggingEnabled")
        if logging is not None:
            changes["logging_enabled"] = mns_bool("LoggingEnabled", logging)
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Queue:
    account_id: str
    name: str
    queue_id: str  # one per incarnation: a re-created queue never sees its predecessor's messages
    attributes: QueueAttributes
    create_time: int  # seconds
    last_modify_time: int  # seconds


@dataclass(frozen=True)
class QueueCounts:
    active: int = 0
    inactive: int = 0
    delayed: int = 0


@dataclass(frozen=True)
class Property:
    name: str
    value: str
    type: str


@dataclass(frozen=True)
class MessageInput:
    """A message as sent, validated."""

    body: str
    delay_seconds: int | None  # None: the queue's DelaySeconds
    priority: int
    user_properties: tuple[Property, ...] = ()
    system_properties: tuple[Property, ...] = ()
    message_group_id: str = ""

    @property
    def body_md5(self) -> str:
        return body_md5(self.body)


def body_md5(body: str) -> str:
    return hashlib.md5(body.encode("utf-8")).hexdigest().upper()


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
