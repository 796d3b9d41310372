"""The two data planes a message call may be made on, and which one a request is on.

The message operations (send, receive, peek, change visibility, delete, their batches, publish) are served alike on
MNS's XML plane (2015-06-06, `mnsd.wire`) and on the JSON plane of Alibaba's SMQProxy API (2026-04-09,
`mnsd.jsonwire`): same paths, query parameters, signatures, services and errors; only the bodies differ. An
operation reads its body and writes its answer through its call's plane; everything between is one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mnsd import errors
from mnsd.http import HttpRequest, HttpResponse
from mnsd.jsonwire import VERSION as JSON_VERSION
from mnsd.jsonwire.plane import JsonPlane
from mnsd.queues.messages import Received, SendResult
from mnsd.queues.model import Message, MessageInput
from mnsd.topics.model import PublishInput, TopicMessage
from mnsd.wire.plane import XmlPlane

XML_VERSION = "2015-06-06"


class DataPlane(Protocol):
    def root(self, *expected: str) -> str:
        """What the body holds, named as its XML root element is (`Message`, `Messages`, `ReceiptHandles`): one of
        `expected`, else InvalidArgument."""
        ...

    def sent_message(self) -> MessageInput: ...
    def sent_messages(self) -> list[MessageInput]: ...
    def receipt_handles(self) -> list[str]: ...
    def publish_input(self) -> PublishInput: ...
    def sent(self, result: SendResult) -> HttpResponse: ...
    def sent_batch(self, results: Sequence[SendResult]) -> HttpResponse: ...
    def received(self, result: Received) -> HttpResponse: ...
    def received_batch(self, results: Sequence[Received]) -> HttpResponse: ...
    def peeked(self, message: Message) -> HttpResponse: ...
    def peeked_batch(self, messages: Sequence[Message]) -> HttpResponse: ...
    def visibility_changed(self, receipt_handle: str, next_visible_time: int) -> HttpResponse: ...
    def delete_failures(self, failures: Sequence[tuple[str, errors.MnsError]]) -> HttpResponse: ...
    def published(self, message: TopicMessage) -> HttpResponse: ...


def is_json(request: HttpRequest) -> bool:
    """Whether the request is on the JSON plane, by what it says of itself: its body's Content-Type when it names
    JSON or XML, else its `x-mns-version`. Never by `Accept` (the Tea gateway accepts JSON on XML calls too)."""
    content_type = (request.header("content-type") or "").lower()
    if "json" in content_type:
        return True
    if "xml" in content_type:
        return False
    return (request.header("x-mns-version") or "").strip() == JSON_VERSION


def plane_of(request: HttpRequest) -> DataPlane:
    return JsonPlane(request) if is_json(request) else XmlPlane(request)


def version_of(request: HttpRequest) -> str:
    """The `x-mns-version` an answer carries: its plane's."""
    return JSON_VERSION if is_json(request) else XML_VERSION


def refuse_on_json(request: HttpRequest) -> None:
    """A call the JSON plane does not serve (only message operations are on it), refused saying where it is served."""
    if is_json(request):
        raise errors.InvalidArgument(
            f"API version {JSON_VERSION} (JSON) serves only the message operations of queues and topics; "
            f"call {request.method} {request.path} with x-mns-version {XML_VERSION} and an XML body."
        )
