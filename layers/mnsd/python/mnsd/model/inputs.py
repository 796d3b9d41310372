"""Request inputs: a message as a request gives it (texts, None where absent) and its parsing into a checked
`MessageInput`, whatever API plane carried it (`mnsd.wire` parses the XML one into these)."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.ground import errors, jsontext
from mnsd.ground.validation import int_in_range
from mnsd.model.messages import Property, body_md5

MAX_BATCH = 16
MAX_BATCH_BYTES = 65536
VISIBILITY_RANGE = (0, 43200)  # a ChangeMessageVisibility's VisibilityTimeout, seconds


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


def counted_handles(handles: list[str]) -> list[str]:
    """A batch of receipt handles (BatchDeleteMessage's, on either plane), refused unless it holds 1 to `MAX_BATCH`."""
    if not 1 <= len(handles) <= MAX_BATCH:
        raise errors.InvalidArgument(f"The count of receipt handles should between 1 and {MAX_BATCH}.")
    return handles


@dataclass(frozen=True)
class PublishInput:
    """A PublishMessage request as given: texts, None where absent; `TopicService.publish` checks it."""

    body: str | None = None
    tag: str | None = None
    direct_mail: str | None = None  # the DirectMail message attribute: JSON text
    direct_sms: str | None = None  # the DirectSMS message attribute: JSON text
    user_properties: tuple[PropertyInput, ...] = ()
    message_group_id: str | None = None
    dm: str | None = None  # the DM message attribute (Java SDK 2.x's DirectMail): JSON text
    dysms: str | None = None  # the DYSMS message attribute (Java SDK 2.x's DirectSMS): JSON text


def json_attribute(text: str | None, name: str) -> dict | None:
    """A message attribute holding JSON (DirectMail, DirectSMS), parsed."""
    if text is None:
        return None
    try:
        value = jsontext.loads(text)
    except ValueError:
        raise errors.InvalidArgument(f"The {name} attribute should be a JSON object.") from None
    if not isinstance(value, dict):
        raise errors.InvalidArgument(f"The {name} attribute should be a JSON object.")
    return value


@dataclass(frozen=True)
class VisibilityChange:
    """One receipt handle of a batch ChangeMessageVisibility and its new visibility timeout (seconds), checked."""

    receipt_handle: str  # as given ("" when missing: that handle fails on its own, MissingReceiptHandle)
    visibility_timeout: int


def visibility_timeout(text: str | None) -> int:
    """A VisibilityTimeout as given, required and in `VISIBILITY_RANGE`."""
    if text is None:
        raise errors.MissingVisibilityTimeout()
    return int_in_range("VisibilityTimeout", text, *VISIBILITY_RANGE, "seconds")


def visibility_batch(entries: list[tuple[str | None, str | None]], default: str | None) -> list[VisibilityChange]:
    """A batch ChangeMessageVisibility as a request gives it, checked whole before any handle is used: 1 to
    `MAX_BATCH` (receipt handle, its own VisibilityTimeout or None for the batch's `default`)."""
    if not 1 <= len(entries) <= MAX_BATCH:
        raise errors.InvalidArgument(f"The count of receipt handles should between 1 and {MAX_BATCH}.")
    return [
        VisibilityChange(handle or "", visibility_timeout(default if timeout is None else timeout))
        for handle, timeout in entries
    ]
