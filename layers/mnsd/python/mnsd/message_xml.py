"""Queue messages on the wire: `<Message>` request elements in, message elements out."""

from __future__ import annotations

from mnsd import errors
from mnsd.queue_model import Message, MessageInput, Property
from mnsd.validation import int_in_range
from mnsd.xmlcodec import Element, Node

PROPERTY_TYPES = ("STRING", "NUMBER", "BOOLEAN", "BINARY")


def _properties(xml: Element, container: str, entry: str) -> tuple[Property, ...]:
    node = xml.child(container)
    if node is None:
        return ()
    found = []
    for value in node.all(entry):
        name, text, kind = value.value("Name"), value.value("Value"), value.value("Type")
        if not name or text is None or not kind:
            raise errors.InvalidArgument(f"Each {entry} needs Name, Value and Type.")
        found.append(Property(name, text, kind))
    return tuple(found)


def properties_of(xml: Element) -> tuple[Property, ...]:
    return _properties(xml, "UserProperties", "PropertyValue")


def message_input(xml: Element) -> MessageInput:
    body = xml.value("MessageBody")
    if not body:
        raise errors.InvalidArgument("The MessageBody should not be empty.")
    delay = xml.value("DelaySeconds")
    priority = xml.value("Priority")
    return MessageInput(
        body=body,
        delay_seconds=None if delay is None else int_in_range("DelaySeconds", delay, 0, 604800, "seconds"),
        priority=8 if priority is None else int_in_range("Priority", priority, 1, 16),
        user_properties=properties_of(xml),
        system_properties=_properties(xml, "SystemProperties", "SystemPropertyValue"),
        message_group_id=xml.value("MessageGroupId") or "",
    )


def _property_nodes(tag: str, items: tuple[Property, ...]) -> list[Node]:
    return [Node(tag, [("Name", p.name), ("Value", p.value), ("Type", p.type)]) for p in items]


def message_node(message: Message, receipt_handle: str | None = None) -> Node:
    """A received (with handle) or peeked (without) message."""
    fields: list[tuple[str, object]] = [("MessageId", message.message_id)]
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
    return Node("Message", fields)  # type: ignore[arg-type]
