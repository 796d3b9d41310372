"""Queue messages: what a message carries, its lease and the one rule of its state, where it lives (`MessageRef`),
and the marks of a dead letter."""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from mnsd.ground import errors

# The system properties a dead letter carries (the names SDK 1.3.0 knows), and its two message types.
DLQ_MESSAGE_TYPE = "DLQMessageType"
DLQ_SOURCE_ARN = "DLQSourceArn"
DLQ_ORIGIN_MESSAGE_ID = "DLQOriginMessageId"
DLQ_PROPERTIES = (DLQ_MESSAGE_TYPE, DLQ_SOURCE_ARN, DLQ_ORIGIN_MESSAGE_ID)
DLQ_TYPE_QUEUE = "QUEUE"  # moved by a queue's DlqPolicy (a receive past MaxReceiveCount)
DLQ_TYPE_SUBSCRIPTION = "SUBSCRIPTION"  # a push given up by a subscription with a DlqPolicy
# A MessageGroupId: 1-128 printable ASCII characters but space and '|' (SQS's set, less the receipt separator).
_GROUP_ID = re.compile(r"[!-{}~]{1,128}\Z")


def message_group_id(text: str) -> str:
    if not _GROUP_ID.match(text):
        raise errors.InvalidArgument(
            "The MessageGroupId should be 1 to 128 printable ASCII characters, without spaces or '|'."
        )
    return text


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


def body_md5(body: str) -> str:
    return hashlib.md5(body.encode("utf-8")).hexdigest().upper()


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
    fifo: bool = False  # a FIFO queue's message, so marked by its kind (`QueueKind.placed`): `position` is its place in its group


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
    fifo: bool = False  # a FIFO queue's message, so marked by its kind (`QueueKind.placed`): `position` is its place in its group

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
    ) -> Message:
        """This message as a new one of another queue (a dead letter, or one redriven back): receivable now,
        never received, its body, priority, user properties, group and end of retention kept; to be placed there by
        the target's kind (`mnsd.model.kinds.QueueKind.placed`)."""
        content = dataclasses.replace(self.content, system_properties=system_properties, logging=logging)
        return Message.enqueued(queue_id, message_id, now_ms, now_ms, self.expires_at, content)

    def retimed(self, version: int, now_ms: int, visible_at: int) -> Message:
        """This message with its next visible time moved by the holder of the handle for `version`."""
        if not self.held_by(version, now_ms):
            raise ValueError("the lease is no longer held by this handle")
        return dataclasses.replace(self, visible_at=visible_at, version=self.version + 1)
