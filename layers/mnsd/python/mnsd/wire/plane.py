"""The XML data plane: a call's body read, and its results answered, in the MNS XML of 2015-06-06
(`mnsd.request.planes.DataPlane`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from mnsd import errors
from mnsd.http import HttpRequest, HttpResponse
from mnsd.queues.messages import Received, SendResult
from mnsd.queues.model import Message, MessageInput
from mnsd.topics.model import PublishInput, TopicMessage
from mnsd.wire import codec, requests, responses


def xml_response(root: codec.Node, status: int = 200) -> HttpResponse:
    return HttpResponse(status, codec.encode(root), {"Content-Type": "text/xml;charset=utf-8"})


def parsed_body(body: bytes) -> codec.Element:
    """A request body, parsed (an empty one is malformed)."""
    if not body.strip():
        raise errors.MalformedXML()
    return codec.parse(body)


class XmlPlane:
    def __init__(self, request: HttpRequest) -> None:
        self.request = request

    @cached_property
    def body(self) -> codec.Element:
        return parsed_body(self.request.body)

    def root(self, *expected: str) -> str:
        """The body's root element, which must be one the operation defines (the spec's schema)."""
        tag = self.body.tag
        if tag not in expected:
            raise errors.InvalidArgument(
                f"The XML you provided did not validate against our published schema, cause by Element {tag}."
            )
        return tag

    def sent_message(self) -> MessageInput:
        return requests.sent_message(self.body)

    def sent_messages(self) -> list[MessageInput]:
        return requests.sent_messages(self.body)

    def receipt_handles(self) -> list[str]:
        return requests.receipt_handles(self.body)

    def publish_input(self) -> PublishInput:
        return requests.publish_input(self.body)

    def sent(self, result: SendResult) -> HttpResponse:
        return xml_response(responses.sent(result), status=201)

    def sent_batch(self, results: Sequence[SendResult]) -> HttpResponse:
        return xml_response(*responses.sent_batch(results))

    def received(self, result: Received) -> HttpResponse:
        return xml_response(responses.received(result))

    def received_batch(self, results: Sequence[Received]) -> HttpResponse:
        return xml_response(responses.received_batch(results))

    def peeked(self, message: Message) -> HttpResponse:
        return xml_response(responses.message_node(message))

    def peeked_batch(self, messages: Sequence[Message]) -> HttpResponse:
        return xml_response(responses.peeked_batch(messages))

    def visibility_changed(self, receipt_handle: str, next_visible_time: int) -> HttpResponse:
        return xml_response(responses.visibility_changed(receipt_handle, next_visible_time))

    def delete_failures(self, failures: Sequence[tuple[str, errors.MnsError]]) -> HttpResponse:
        return xml_response(*responses.delete_failures(failures))

    def published(self, message: TopicMessage) -> HttpResponse:
        return xml_response(responses.published(message), status=201)
