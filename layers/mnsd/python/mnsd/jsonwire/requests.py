"""JSON request bodies read into the domain's inputs, as the SMQProxy SDKs (2026-04-09) write them.

A body is one JSON object: SendMessage and PublishMessage give the message's fields at its top level,
BatchSendMessage a `Messages` array of them, BatchDeleteMessage a `ReceiptHandles` array, a batch
ChangeMessageVisibility a `ChangeVisibilities` array (and a `VisibilityTimeout` for its entries that name none). Numbers may come as JSON
numbers or as their text; the domain checks their ranges as it does for XML. Unknown fields are ignored, as unknown
XML elements are.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnsd.ground import errors, jsontext
from mnsd.model import inputs
from mnsd.model.inputs import (
    MessageInput,
    MessageRequest,
    PropertyInput,
    PublishInput,
    counted_handles,
    message_batch,
    message_input,
)

Body = dict[str, Any]

# What XML 1.0 cannot carry: JSON can (`\u0000`, a lone surrogate), but a message sent here is read on the XML plane too.
_NOT_IN_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# The body each operation's JSON has at its top level, by the root element its XML would have.
BATCH_SEND, BATCH_DELETE, BATCH_VISIBILITY, MESSAGE = "Messages", "ReceiptHandles", "ChangeVisibilities", "Message"


def parse(body: bytes) -> Body:
    """The request's JSON object (an empty body is an empty object)."""
    if not body.strip():
        return {}
    parsed = jsontext.parse_json(body, "The JSON you provided")
    if not isinstance(parsed, dict):
        raise errors.InvalidArgument("The JSON you provided should be an object.")
    return parsed


def root(body: Body, expected: tuple[str, ...]) -> str:
    """What the body is, named as its XML root would be (a batch of messages, of receipt handles, or one message):
    one of `expected`, the operation's."""
    found = next((name for name in (BATCH_SEND, BATCH_DELETE, BATCH_VISIBILITY) if name in body), MESSAGE)
    if found not in expected:
        wanted = " or ".join(name if name != MESSAGE else "a message's fields" for name in expected)
        raise errors.InvalidArgument(f"The JSON you provided should hold {wanted}.")
    return found


def text(body: Body, name: str) -> str | None:
    """A field holding text or a whole number, as text (None where absent or null)."""
    value = body.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is not None and not isinstance(value, str):
        raise errors.InvalidArgument(f"The value of {name} should be a string or an integer.")
    return None if value is None else _carried(value, name)


def _carried(value: str, name: str) -> str:
    """Text a message can carry on either plane: what XML 1.0 can hold."""
    if _NOT_IN_XML.search(value):
        raise errors.InvalidArgument(f"The value of {name} holds a character a message cannot carry.")
    return value


def _entries(body: Body, name: str) -> list[Any]:
    value = body.get(name)
    if not isinstance(value, list):
        raise errors.InvalidArgument(f"The value of {name} should be an array.")
    return value


def _object(value: Any, name: str) -> Body:
    if not isinstance(value, dict):
        raise errors.InvalidArgument(f"Each entry of {name} should be an object.")
    return value


def user_properties(body: Body) -> tuple[PropertyInput, ...]:
    """`UserProperties`: `{name: {"DataType": ..., "StringValue": ...}}`, a BINARY one's value in `BinaryValue`."""
    given = body.get("UserProperties")
    if given is None:
        return ()
    if not isinstance(given, dict):
        raise errors.InvalidArgument("The value of UserProperties should be an object.")
    found = []
    for name, value in given.items():
        entry = _object(value, "UserProperties")
        kind = text(entry, "DataType")
        field = "BinaryValue" if (kind or "").upper() == "BINARY" else "StringValue"
        found.append(PropertyInput(_carried(name, "UserProperties"), text(entry, field), kind))
    return tuple(found)


def message_request(body: Body) -> MessageRequest:
    """A message of SendMessage or BatchSendMessage, as given."""
    return MessageRequest(
        body=text(body, "MessageBody"),
        delay_seconds=text(body, "DelaySeconds"),
        priority=text(body, "Priority"),
        user_properties=user_properties(body),
        message_group_id=text(body, "MessageGroupId"),
    )


def sent_message(body: Body) -> MessageInput:
    """SendMessage's message, checked."""
    return message_input(message_request(body))


def sent_messages(body: Body) -> list[MessageInput]:
    """BatchSendMessage's `Messages`, checked."""
    return message_batch([message_request(_object(entry, BATCH_SEND)) for entry in _entries(body, BATCH_SEND)])


def receipt_handles(body: Body) -> list[str]:
    """BatchDeleteMessage's `ReceiptHandles`: 1 to `MAX_BATCH` of them."""
    handles = _entries(body, BATCH_DELETE)
    if not all(isinstance(handle, str) for handle in handles):
        raise errors.InvalidArgument("Each entry of ReceiptHandles should be a string.")
    return counted_handles(handles)


def visibility_changes(body: Body) -> list[inputs.VisibilityChange]:
    """A batch ChangeMessageVisibility's `ChangeVisibilities`, in order: each entry a receipt handle (taking the
    body's `VisibilityTimeout`) or `{"ReceiptHandle", "VisibilityTimeout"}` (its own, else the body's); 1 to
    `MAX_BATCH` of them."""
    entries: list[tuple[str | None, str | None]] = []
    for entry in _entries(body, BATCH_VISIBILITY):
        if isinstance(entry, str):
            entries.append((entry, None))
        else:
            given = _object(entry, BATCH_VISIBILITY)
            entries.append((text(given, "ReceiptHandle"), text(given, "VisibilityTimeout")))
    return inputs.visibility_batch(entries, text(body, "VisibilityTimeout"))


def _attribute(attributes: Body, name: str) -> str | None:
    """A message attribute holding JSON: its text as sent, or an object given as one (the domain parses it)."""
    value = attributes.get(name)
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def publish_input(body: Body) -> PublishInput:
    """PublishMessage's message. `MessageAttributes` holds DirectMail and DirectSMS (the SDK's), or DM and DYSMS."""
    attributes = body.get("MessageAttributes") or {}
    if not isinstance(attributes, dict):
        raise errors.InvalidArgument("The value of MessageAttributes should be an object.")
    return PublishInput(
        body=text(body, "MessageBody"),
        tag=text(body, "MessageTag"),
        direct_mail=_attribute(attributes, "DirectMail"),
        direct_sms=_attribute(attributes, "DirectSMS"),
        dm=_attribute(attributes, "DM"),
        dysms=_attribute(attributes, "DYSMS"),
        user_properties=user_properties(body),
        message_group_id=text(body, "MessageGroupId"),
    )
