"""The list request headers shared by ListQueue, ListTopic and ListSubscriptionByTopic, and the listing of an
account's queues or topics (`account_listing`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from mnsd.http import HttpRequest, HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.validation import int_in_range
from mnsd.wire.codec import Node

Listed = TypeVar("Listed")

MAX_RET_NUMBER = 1000


def list_request(request: HttpRequest) -> tuple[str, int, str | None, bool]:
    """(prefix, page size, marker, with meta) from the x-mns-* list headers."""
    ret_number = request.header("x-mns-ret-number")
    limit = MAX_RET_NUMBER if ret_number is None else int_in_range("x-mns-ret-number", ret_number, 1, MAX_RET_NUMBER)
    with_meta = (request.header("x-mns-with-meta") or "").lower() == "true"
    return request.header("x-mns-prefix") or "", limit, request.header("x-mns-marker") or None, with_meta


def account_listing(
    call: Call,
    list_page: Callable[[str, str, int, str | None], tuple[Sequence[Listed], str | None]],
    render: Callable[..., Node],
) -> HttpResponse:
    """ListQueue and ListTopic: the page of the account's queues or topics the list headers ask for (`list_page`, as
    the service lists them), rendered (`render`: as `mnsd.wire.responses.queue_list`) with the stack's
    `metrics_default`."""
    prefix, limit, marker, with_meta = list_request(call.request)
    found, next_marker = list_page(call.account_id, prefix, limit, marker)
    metrics_default = call.services.settings.metrics_default
    return xml_response(render(found, next_marker, call.endpoint(), with_meta, metrics_default=metrics_default))
