"""The classic MNS API (XML, signed V2: `MNS KeyId:Signature`, HMAC-SHA1 over the method, Content-MD5, Content-Type,
Date, the `x-mns-*` headers and the resource as sent) for what moves messages: batch receive, batch send, batch
delete, and a queue's message counts."""

from __future__ import annotations

import base64
import hashlib
import hmac
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from email.utils import formatdate
from urllib.parse import quote
from xml.sax.saxutils import escape

from migrate.batching import MOST_MESSAGES, cut
from migrate.credentials import Side
from migrate.errors import ServiceError
from migrate.transport import Reply, Transport

VERSION = "2015-06-06"
XML_TYPE = "text/xml;charset=UTF-8"
NAMESPACE = "http://mns.aliyuncs.com/doc/v1/"
BATCH = MOST_MESSAGES
# Characters an XML reader would change in element text (`\r` becomes `\n`), written as references to keep them.
_KEPT = {"\r": "&#13;"}


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


def sign_v2(
    secret: str, method: str, md5: str, content_type: str, date: str, headers: dict[str, str], resource: str
) -> str:
    canonical = "".join(
        f"{k}:{v}\n" for k, v in sorted((k.lower(), v) for k, v in headers.items() if k.lower().startswith("x-mns-"))
    )
    text = f"{method}\n{md5}\n{content_type}\n{date}\n{canonical}{resource}"
    return base64.b64encode(hmac.new(secret.encode(), text.encode(), hashlib.sha1).digest()).decode()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _text(element: ET.Element, name: str, default: str = "") -> str:
    for child in element:
        if _local(child.tag) == name:
            return child.text or ""
    return default


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if _local(child.tag) == name]


def _xml_text(text: str) -> str:
    return escape(text, _KEPT)


def body_bytes(body: str) -> int:
    """A body's size as a batch's limit counts it: the UTF-8 bytes of its text as written in the request. The service
    counts the text it reads back (`&lt;` is one byte there), so this is never less than its count, and the same for
    a body without `<`, `&`, `>` or a carriage return (base64 is one)."""
    return len(_xml_text(body).encode("utf-8"))


def send_batches(messages: list[Message]) -> list[list[Message]]:
    """`messages` in their order, cut into the BatchSendMessage requests the service takes."""
    return cut(messages, lambda m: body_bytes(m.body))


def copy_xml(message: Message) -> str:
    parts = [f"<MessageBody>{_xml_text(message.body)}</MessageBody>"]
    if message.group:  # a FIFO queue takes no delay or priority per message (its own delay applies)
        parts.append(f"<MessageGroupId>{_xml_text(message.group)}</MessageGroupId>")
    else:  # received once its delay is over: none is left
        parts.append(f"<DelaySeconds>0</DelaySeconds><Priority>{message.priority}</Priority>")
    if message.properties:
        values = "".join(
            f"<PropertyValue><Name>{_xml_text(p.name)}</Name><Value>{_xml_text(p.value)}</Value>"
            f"<Type>{_xml_text(p.type)}</Type></PropertyValue>"
            for p in message.properties
        )
        parts.append(f"<UserProperties>{values}</UserProperties>")
    return f"<Message>{''.join(parts)}</Message>"


def _received(element: ET.Element) -> Message:
    properties = tuple(
        Property(_text(p, "Name"), _text(p, "Value"), _text(p, "Type"))
        for holder in _children(element, "UserProperties")
        for p in _children(holder, "PropertyValue")
    )
    return Message(
        _text(element, "MessageId"),
        _text(element, "ReceiptHandle"),
        _text(element, "MessageBody"),
        int(_text(element, "Priority", "8") or 8),
        _text(element, "MessageGroupId"),
        int(_text(element, "DequeueCount", "1") or 1),
        properties,
    )


class XmlApi:
    def __init__(self, side: Side) -> None:
        self.side = side
        self.transport = Transport(side.endpoint)

    def call(self, method: str, resource: str, body: str = "", headers: dict[str, str] | None = None) -> Reply:
        data = body.encode("utf-8")
        date = formatdate(usegmt=True)
        mns_headers = {"x-mns-version": VERSION, **(headers or {})}
        md5 = base64.b64encode(hashlib.md5(data).hexdigest().encode()).decode() if data else ""
        content_type = XML_TYPE if data else ""
        sent = {**mns_headers, "Date": date, "Host": self.transport.netloc}
        if data:
            sent.update({"Content-Type": content_type, "Content-MD5": md5})
        if self.side.security_token:
            sent["security-token"] = self.side.security_token
        signature = sign_v2(self.side.access_key_secret, method, md5, content_type, date, mns_headers, resource)
        sent["Authorization"] = f"MNS {self.side.access_key_id}:{signature}"
        return self.transport.request(method, resource, data, sent)

    @staticmethod
    def error(reply: Reply) -> ServiceError:
        try:
            root = ET.fromstring(reply.body)
        except ET.ParseError:
            text = reply.body[:200].decode("utf-8", "replace")
            return ServiceError(reply.status, f"HTTP{reply.status}", text, reply.headers.get("x-mns-request-id", ""))
        return ServiceError(reply.status, _text(root, "Code"), _text(root, "Message"), _text(root, "RequestId"))

    def _checked(self, reply: Reply) -> ET.Element | None:
        if reply.status >= 300:
            raise self.error(reply)
        return ET.fromstring(reply.body) if reply.body.strip() else None

    def receive(self, queue: str, count: int = BATCH, wait_seconds: int = 1) -> list[Message]:
        """BatchReceiveMessage: up to `count` messages (none when the queue answers MessageNotExist)."""
        reply = self.call(
            "GET", f"/queues/{quote(queue, safe='')}/messages?numOfMessages={count}&waitseconds={wait_seconds}"
        )
        if reply.status == 404 and self.error(reply).code == "MessageNotExist":
            return []
        root = self._checked(reply)
        return [_received(element) for element in _children(root, "Message")] if root is not None else []

    def _batch(self, method: str, queue: str, root: str, entries: str, partial: str) -> ET.Element | None:
        """A batch request on the queue's messages: None when every entry was taken, else the answer's `partial`
        element naming each entry's outcome (another answer is raised as the refusal of the whole request)."""
        body = f'<?xml version="1.0" encoding="UTF-8"?><{root} xmlns="{NAMESPACE}">{entries}</{root}>'
        reply = self.call(method, f"/queues/{quote(queue, safe='')}/messages", body)
        if reply.status < 300:
            return None
        try:
            answer = ET.fromstring(reply.body)
        except ET.ParseError:
            raise self.error(reply) from None
        if _local(answer.tag) != partial:
            raise self.error(reply)
        return answer

    def send(self, queue: str, messages: list[Message]) -> list[ServiceError | None]:
        """BatchSendMessage: per message, None when the service took it, else its refusal (a refusal of the whole
        request is raised)."""
        body = "".join(copy_xml(m) for m in messages)
        root = self._batch("POST", queue, "Messages", body, "Messages")
        if root is None:
            return [None] * len(messages)
        outcomes: list[ServiceError | None] = []
        for entry in _children(root, "Message"):
            code = _text(entry, "ErrorCode")
            outcomes.append(ServiceError(500, code, _text(entry, "ErrorMessage")) if code else None)
        if len(outcomes) != len(messages):
            raise ServiceError(500, "InvalidResponse", "the batch's answer does not name every message")
        return outcomes

    def delete(self, queue: str, handles: list[str]) -> list[str]:
        """BatchDeleteMessage: the handles that were not deleted (expired: the message will be received again)."""
        body = "".join(f"<ReceiptHandle>{_xml_text(h)}</ReceiptHandle>" for h in handles)
        root = self._batch("DELETE", queue, "ReceiptHandles", body, "Errors")
        if root is None:
            return []
        return [_text(entry, "ReceiptHandle") for entry in _children(root, "Error")]

    def subscription_endpoint(self, topic: str, subscription: str) -> str:
        """GetSubscriptionAttributes' Endpoint: always in full on this plane (`acs:mns:...:queues/{name}`,
        `mail:directmail:...`), where Mns-open answers it as it was given (a bare queue name, address or number)."""
        resource = f"/topics/{quote(topic, safe='')}/subscriptions/{quote(subscription, safe='')}"
        root = self._checked(self.call("GET", resource))
        return _text(root, "Endpoint") if root is not None else ""

    def counts(self, queue: str) -> tuple[int, int, int]:
        """GetQueueAttributes' (ActiveMessages, InactiveMessages, DelayMessages)."""
        root = self._checked(self.call("GET", f"/queues/{quote(queue, safe='')}"))
        if root is None:
            return 0, 0, 0
        return tuple(
            int(_text(root, name, "0") or 0) for name in ("ActiveMessages", "InactiveMessages", "DelayMessages")
        )  # type: ignore[return-value]
