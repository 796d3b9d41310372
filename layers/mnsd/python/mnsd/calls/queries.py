"""The query parameters of the message operations, the same on either data plane (XML or JSON): checked as they are
read, against the domain's limits, as MNS does before it looks up the queue."""

from __future__ import annotations

from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.ground.validation import int_in_range
from mnsd.model.inputs import MAX_BATCH, visibility_timeout
from mnsd.queues.messages import MAX_WAIT_SECONDS


def wait_seconds(request: HttpRequest) -> int | None:
    """The `waitseconds` of ReceiveMessage and BatchReceiveMessage, if given (else the queue's)."""
    text = request.query("waitseconds")
    return None if text is None else int_in_range("waitseconds", text, 0, MAX_WAIT_SECONDS, "seconds")


def batch_size(request: HttpRequest) -> int:
    """The `numOfMessages` of BatchReceiveMessage and BatchPeekMessage."""
    return int_in_range("numOfMessages", request.query("numOfMessages"), 1, MAX_BATCH)


def visibility_change(request: HttpRequest) -> tuple[str, int]:
    """The receipt handle and new visibility timeout (seconds) of ChangeMessageVisibility."""
    handle = request.query("ReceiptHandle")
    if not handle:
        raise errors.MissingReceiptHandle()
    return handle, visibility_timeout(request.query("VisibilityTimeout"))
