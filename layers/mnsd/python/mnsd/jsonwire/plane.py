"""The JSON data plane: a call's body read, and its results answered, as the SMQProxy SDKs (2026-04-09) write and
read them (`mnsd.request.planes.DataPlane`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from mnsd import errors
from mnsd.http import HttpRequest, HttpResponse
from mnsd.jsonwire import requests, responses
from mnsd.queues.messages import Received, SendResult
from mnsd.queues.model import Message, MessageInput
from mnsd.topics.model import PublishInput, TopicMessage

CONTENT_TYPE = "application/json;charset=utf-8"


def json_response(fields: responses.Fields, status: int = 200) -> HttpResponse:
    return HttpResponse(status, responses.encode(fields), {"Content-Type": CONTENT_TYPE})


class JsonPlane:
    def __init__(self, request: HttpRequest) -> None:
        self.request = request

    @cached_property
    def body(self) -> requests.Body:
        return requests.parse(self.request.body)

    def root(self, *expected: str) -> str:
        found = requests.root(self.body)
        if found not in expected:
            raise errors.InvalidArgument(f"The JSON you provided is not one of this operation's: it has {found}.")
        return found

    def sent_message(self) -> MessageInput:
        return requests.sent_message(self.body)

    def sent_messages(self) -> list[MessageInput]:
        return requests.sent_messages(self.body)

    def receipt_handles(self) -> list[str]:
        return requests.receipt_handles(self.body)

    def publish_input(self) -> PublishInput:
        return requests.publish_input(self.body)

    def sent(self, result: SendResult) -> HttpResponse:
        return json_response(responses.sent(result), 201)

    def sent_batch(self, results: Sequence[SendResult]) -> HttpResponse:
        return json_response(*responses.sent_batch(results))

    def received(self, result: Received) -> HttpResponse:
        return json_response(responses.received(result))

    def received_batch(self, results: Sequence[Received]) -> HttpResponse:
        return json_response(responses.messages([responses.received(r) for r in results]))

    def peeked(self, message: Message) -> HttpResponse:
        return json_response(responses.message(message))

    def peeked_batch(self, messages: Sequence[Message]) -> HttpResponse:
        return json_response(responses.messages([responses.message(m) for m in messages]))

    def visibility_changed(self, receipt_handle: str, next_visible_time: int) -> HttpResponse:
        return json_response(responses.visibility_changed(receipt_handle, next_visible_time))

    def delete_failures(self, failures: Sequence[tuple[str, errors.MnsError]]) -> HttpResponse:
        return json_response(*responses.delete_failures(failures))

    def published(self, message: TopicMessage) -> HttpResponse:
        return json_response(responses.published(message), 201)
