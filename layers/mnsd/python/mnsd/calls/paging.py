"""The list request headers shared by ListQueue, ListTopic and ListSubscriptionByTopic."""

from __future__ import annotations

from mnsd.ground.http import HttpRequest
from mnsd.ground.validation import int_in_range

MAX_RET_NUMBER = 1000


def list_request(request: HttpRequest) -> tuple[str, int, str | None, bool]:
    """(prefix, page size, marker, with meta) from the x-mns-* list headers."""
    ret_number = request.header("x-mns-ret-number")
    limit = MAX_RET_NUMBER if ret_number is None else int_in_range("x-mns-ret-number", ret_number, 1, MAX_RET_NUMBER)
    with_meta = (request.header("x-mns-with-meta") or "").lower() == "true"
    return request.header("x-mns-prefix") or "", limit, request.header("x-mns-marker") or None, with_meta
