"""The message calls of the XML API that move messages: batch receive, batch send, batch delete, and a queue's
message counts. Bodies are text sent and read back exactly (never base64-coded by the client: it copies what the
sender wrote), with their user properties."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from mnsclient.errors import ServiceError
from mnsclient.xml import XmlClient, parsed, refusal
from mnsd.ground.errors import MalformedXML
from mnsd.wire import codec

# The namespace of a request body, as Alibaba's SDKs write it.
NAMESPACE = "http://mns.aliyuncs.com/doc/v1/"


@dataclass(frozen=True)
class Property:
    name: str
    value: str
    type: str


@dataclass(frozen=True)
class Message:
    """A received message: what is copied (body text exactly as sent, priority, group, user properties) and what
    identifies it on its queue."""

    message_id: str
    receipt_handle: str
    body: str
    priority: int = 8
    group: str = ""
    dequeue_count: int = 1
    properties: tuple[Property, ...] = field(default=())


def body_bytes(body: str) -> int:
    """A body's size as a batch's limit counts it: the UTF-8 bytes of its text as written in the request. The service
    counts the text it reads back (`&lt;` is one byte there), so this is never less than its count, and the same for
    a body without `<`, `&`, `>` or a carriage return (base64 is one)."""
    return len(codec.escaped(body).encode("utf-8"))


def copy_xml(message: Message) -> str:
    """The `<Message>` of a BatchSendMessage that sends `message` again as it was received."""
    parts = [f"<MessageBody>{codec.escaped(message.body)}</MessageBody>"]
    if message.group:  # a FIFO queue takes no delay or priority per message (its own delay applies)
        parts.append(f"<MessageGroupId>{codec.escaped(message.group)}</MessageGroupId>")
    else:  # received once its delay is over: none is left
        parts.append(f"<DelaySeconds>0</DelaySeconds><Priority>{message.priority}</Priority>")
    if message.properties:
        values = "".join(
            f"<PropertyValue><Name>{codec.escaped(p.name)}</Name><Value>{codec.escaped(p.value)}</Value>"
            f"<Type>{codec.escaped(p.type)}</Type></PropertyValue>"
            for p in message.properties
        )
        parts.append(f"<UserProperties>{values}</UserProperties>")
    return f"<Message>{''.join(parts)}</Message>"


def _number(element: codec.Element, name: str, default: int) -> int:
    return int(element.value(name) or default)


def _received(element: codec.Element) -> Message:
    properties = tuple(
        Property(p.value("Name") or "", p.value("Value") or "", p.value("Type") or "")
        for holder in element.all("UserProperties")
        for p in holder.all("PropertyValue")
    )
    return Message(
        element.value("MessageId") or "",
        element.value("ReceiptHandle") or "",
        element.value("MessageBody") or "",
        _number(element, "Priority", 8),
        element.value("MessageGroupId") or "",
        _number(element, "DequeueCount", 1),
        properties,
    )


def _messages(queue: str) -> str:
    return f"/queues/{quote(queue, safe='')}/messages"


class MessageClient(XmlClient):
    def receive(self, queue: str, count: int, wait_seconds: int = 1) -> list[Message]:
        """BatchReceiveMessage: up to `count` messages (none when the queue answers MessageNotExist)."""
        reply = self.exchange("GET", f"{_messages(queue)}?numOfMessages={count}&waitseconds={wait_seconds}")
        if reply.status == 404 and refusal(reply).code == "MessageNotExist":
            return []
        root = parsed(reply)
        return [_received(element) for element in root.all("Message")] if root is not None else []

    def _batch(self, method: str, queue: str, root: str, entries: str, partial: str) -> codec.Element | None:
        """A batch request on the queue's messages: None when every entry was taken, else the answer's `partial`
        element naming each entry's outcome (another answer is raised as the refusal of the whole request)."""
        body = f'<?xml version="1.0" encoding="UTF-8"?><{root} xmlns="{NAMESPACE}">{entries}</{root}>'
        reply = self.exchange(method, _messages(queue), body.encode("utf-8"))
        if reply.status < 300:
            return None
        try:
            answer = codec.parse(reply.body)
        except MalformedXML:
            raise refusal(reply) from None
        if answer.tag != partial:
            raise refusal(reply)
        return answer

    def send(self, queue: str, messages: list[Message]) -> list[ServiceError | None]:
        """BatchSendMessage: per message, None when the service took it, else its refusal (a refusal of the whole
        request is raised)."""
        root = self._batch("POST", queue, "Messages", "".join(copy_xml(m) for m in messages), "Messages")
        if root is None:
            return [None] * len(messages)
        outcomes: list[ServiceError | None] = []
        for entry in root.all("Message"):
            code = entry.value("ErrorCode")
            outcomes.append(ServiceError(500, code, entry.value("ErrorMessage") or "") if code else None)
        if len(outcomes) != len(messages):
            raise ServiceError(500, "InvalidResponse", "the batch's answer does not name every message")
        return outcomes

    def delete(self, queue: str, handles: list[str]) -> list[str]:
        """BatchDeleteMessage: the handles that were not deleted (expired: the message will be received again)."""
        body = "".join(f"<ReceiptHandle>{codec.escaped(h)}</ReceiptHandle>" for h in handles)
        root = self._batch("DELETE", queue, "ReceiptHandles", body, "Errors")
        if root is None:
            return []
        return [entry.value("ReceiptHandle") or "" for entry in root.all("Error")]

    def counts(self, queue: str) -> tuple[int, int, int]:
        """GetQueueAttributes' (ActiveMessages, InactiveMessages, DelayMessages)."""
        root = parsed(self.exchange("GET", f"/queues/{quote(queue, safe='')}"))
        if root is None:
            return 0, 0, 0
        active, inactive, delayed = (
            _number(root, name, 0) for name in ("ActiveMessages", "InactiveMessages", "DelayMessages")
        )
        return active, inactive, delayed
