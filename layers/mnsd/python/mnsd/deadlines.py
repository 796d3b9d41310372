"""A request's time budget: the calls a request makes (and their retries) end by its deadline, counted from when the
request reached the API, so that no request outlives the time its client and its gateway wait for it.

`within` sets the deadline for a block (the request's handling); `remaining` is what is left of it, None outside a
request (a stream consumer's or a worker's call, which keeps its own bound).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# A request answers within this many seconds of its arrival (the shortest function timeout is 10 s) ...
REQUEST_SECONDS = 9.0
# ... a long poll within its last claim (`Settings.max_poll_seconds`, 28 s) and this many seconds more.
LONG_POLL_EXTRA_SECONDS = 4.0

_deadline: ContextVar[float | None] = ContextVar("mns_deadline", default=None)


def request_seconds(long_poll: bool, max_poll_seconds: float) -> float:
    """The budget of a request: a long poll's covers its wait."""
    return max_poll_seconds + LONG_POLL_EXTRA_SECONDS if long_poll else REQUEST_SECONDS


@contextmanager
def within(seconds: float, since: float | None = None) -> Iterator[None]:
    """The block's deadline: `seconds` after `since` (the epoch time the request arrived; now when None)."""
    elapsed = 0.0 if since is None else max(0.0, time.time() - since)
    token = _deadline.set(time.monotonic() + seconds - elapsed)
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the current request's deadline (negative once past it); None outside a request."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()
