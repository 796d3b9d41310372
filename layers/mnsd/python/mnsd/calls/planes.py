"""The two data planes a message call may be made on, which one a request is on, and the plane a call is served on.

The message operations (send, receive, peek, change visibility, delete, their batches, publish) are served alike on
MNS's XML plane (2015-06-06, `mnsd.wire`) and on the JSON plane of Alibaba's SMQProxy API (2026-04-09,
`mnsd.jsonwire`): same paths, query parameters, signatures, services and errors; only the bodies differ. Each plane
is a `Codec` (its body parser, its readers of inputs, its writers of answers, under the same names) and one `Plane`
serves a call with either: an operation reads its body and writes its answer through its call's plane, and
everything between is one implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, Protocol, TypeVar

from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.jsonwire import VERSION as JSON_VERSION
from mnsd.jsonwire import requests as json_requests
from mnsd.jsonwire import responses as json_responses
from mnsd.model.inputs import MessageInput, PublishInput, VisibilityChange
from mnsd.model.messages import Message
from mnsd.model.topics import TopicMessage
from mnsd.queues.messages import Received, SendResult, VisibilityResult
from mnsd.wire import plane as xml_plane
from mnsd.wire import requests as xml_requests
from mnsd.wire import responses as xml_responses

XML_VERSION = "2015-06-06"

Body = TypeVar("Body")
Answer = TypeVar("Answer")
BodyT = TypeVar("BodyT", contravariant=True)
AnswerT = TypeVar("AnswerT", covariant=True)


class Readers(Protocol[BodyT]):
    """A plane's readers of a parsed body into the domain's inputs (`mnsd.wire.requests`, `mnsd.jsonwire.requests`)."""

    def sent_message(self, body: BodyT) -> MessageInput: ...
    def sent_messages(self, body: BodyT) -> list[MessageInput]: ...
    def receipt_handles(self, body: BodyT) -> list[str]: ...
    def visibility_changes(self, body: BodyT) -> list[VisibilityChange]: ...
    def publish_input(self, body: BodyT) -> PublishInput: ...


class Writers(Protocol[AnswerT]):
    """A plane's writers of results into answers (`mnsd.wire.responses`, `mnsd.jsonwire.responses`)."""

    def sent(self, result: SendResult) -> AnswerT: ...
    def sent_batch(self, results: Sequence[SendResult]) -> AnswerT: ...
    def received(self, message: Received) -> AnswerT: ...
    def received_batch(self, messages: Sequence[Received]) -> AnswerT: ...
    def message_node(self, message: Message, receipt_handle: str | None = None) -> AnswerT: ...
    def peeked_batch(self, messages: Sequence[Message]) -> AnswerT: ...
    def visibility_changed(self, receipt_handle: str, next_visible_time: int) -> AnswerT: ...
    def visibility_batch(self, results: Sequence[VisibilityResult]) -> AnswerT: ...
    def delete_failures(self, failures: Sequence[tuple[str, errors.MnsError]]) -> AnswerT: ...
    def published(self, message: TopicMessage) -> AnswerT: ...


@dataclass(frozen=True)
class Codec(Generic[Body, Answer]):
    """One plane's format: its body parsed, its root checked (`root(body, expected)`), its inputs read, its answers
    written and sent (`answer(written, status)`). The statuses are the `Plane`'s, the same on every plane."""

    version: str
    parse: Callable[[bytes], Body]
    root: Callable[[Body, tuple[str, ...]], str]
    read: Readers[Body]
    write: Writers[Answer]
    answer: Callable[[Answer, int], HttpResponse]


XML: Codec[Any, Any] = Codec(
    XML_VERSION, xml_plane.parsed_body, xml_plane.root, xml_requests, xml_responses, xml_plane.xml_response
)
JSON: Codec[Any, Any] = Codec(
    JSON_VERSION, json_requests.parse, json_requests.root, json_requests, json_responses, json_responses.json_response
)


class Plane(Generic[Body, Answer]):
    """A call's data plane: its body read, once, and its results answered, in its codec's format."""

    def __init__(self, request: HttpRequest, codec: Codec[Body, Answer]) -> None:
        self.request = request
        self.codec = codec

    @cached_property
    def body(self) -> Body:
        return self.codec.parse(self.request.body)

    def root(self, *expected: str) -> str:
        """What the body holds, named as its XML root element is (`Message`, `Messages`, `ReceiptHandles`): one of
        `expected`, else InvalidArgument."""
        return self.codec.root(self.body, expected)

    def sent_message(self) -> MessageInput:
        return self.codec.read.sent_message(self.body)

    def sent_messages(self) -> list[MessageInput]:
        return self.codec.read.sent_messages(self.body)

    def receipt_handles(self) -> list[str]:
        return self.codec.read.receipt_handles(self.body)

    def visibility_changes(self) -> list[VisibilityChange]:
        return self.codec.read.visibility_changes(self.body)

    def publish_input(self) -> PublishInput:
        return self.codec.read.publish_input(self.body)

    def sent(self, result: SendResult) -> HttpResponse:
        return self.codec.answer(self.codec.write.sent(result), 201)

    def sent_batch(self, results: Sequence[SendResult]) -> HttpResponse:
        """BatchSendMessage: 500 when any message failed (each one's error is in the answer), 201 otherwise."""
        status = 500 if any(result.error is not None for result in results) else 201
        return self.codec.answer(self.codec.write.sent_batch(results), status)

    def received(self, result: Received) -> HttpResponse:
        return self.codec.answer(self.codec.write.received(result), 200)

    def received_batch(self, results: Sequence[Received]) -> HttpResponse:
        return self.codec.answer(self.codec.write.received_batch(results), 200)

    def peeked(self, message: Message) -> HttpResponse:
        return self.codec.answer(self.codec.write.message_node(message), 200)

    def peeked_batch(self, messages: Sequence[Message]) -> HttpResponse:
        return self.codec.answer(self.codec.write.peeked_batch(messages), 200)

    def visibility_changed(self, receipt_handle: str, next_visible_time: int) -> HttpResponse:
        return self.codec.answer(self.codec.write.visibility_changed(receipt_handle, next_visible_time), 200)

    def visibility_batch(self, results: Sequence[VisibilityResult]) -> HttpResponse:
        """A batch ChangeMessageVisibility: 200 when every handle's visibility changed, else BatchDeleteMessage's
        status of its failures."""
        failed = [r.error for r in results if r.error is not None]
        status = _handle_failures_status(failed) if failed else 200
        return self.codec.answer(self.codec.write.visibility_batch(results), status)

    def delete_failures(self, failures: Sequence[tuple[str, errors.MnsError]]) -> HttpResponse:
        """BatchDeleteMessage's failures."""
        status = _handle_failures_status([error for _, error in failures])
        return self.codec.answer(self.codec.write.delete_failures(failures), status)

    def published(self, message: TopicMessage) -> HttpResponse:
        return self.codec.answer(self.codec.write.published(message), 201)


def _handle_failures_status(failures: Sequence[errors.MnsError]) -> int:
    """The status of a batch of receipt handles some of which failed (BatchDeleteMessage's): 400 when every failure
    is a bad receipt handle, 404 otherwise."""
    return 400 if all(isinstance(error, errors.ReceiptHandleError) for error in failures) else 404


def is_json(request: HttpRequest) -> bool:
    """Whether the request is on the JSON plane, by what it says of itself: its body's Content-Type when it names
    JSON or XML, else its `x-mns-version`. Never by `Accept` (the Tea gateway accepts JSON on XML calls too)."""
    content_type = (request.header("content-type") or "").lower()
    if "json" in content_type:
        return True
    if "xml" in content_type:
        return False
    return (request.header("x-mns-version") or "").strip() == JSON_VERSION


def codec_of(request: HttpRequest) -> Codec[Any, Any]:
    return JSON if is_json(request) else XML


def plane_of(request: HttpRequest) -> Plane[Any, Any]:
    return Plane(request, codec_of(request))


def refuse_on_json(request: HttpRequest) -> None:
    """A call the JSON plane does not serve (only message operations are on it), refused saying where it is served."""
    if is_json(request):
        raise errors.InvalidArgument(
            f"API version {JSON_VERSION} (JSON) serves only the message operations of queues and topics; "
            f"call {request.method} {request.path} with x-mns-version {XML_VERSION} and an XML body."
        )
