"""A request's time budget: the calls a request makes (and their retries) end by its deadline, counted from when the
request reached the API, so that no request outlives the time its client and its gateway wait for it.

`within` sets the deadline for a block (the request's handling); `remaining` is what is left of it, None outside a
request (a stream consumer's or a worker's call, which keeps its own bound).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# A request answers within this many seconds of its arrival (the shortest function timeout is 10 s).
REQUEST_SECONDS = 9.0
# A long poll's client, API Gateway and the long poll's function wait this long from the request's arrival ...
ANSWER_SECONDS = 30.0
# ... of which the last DynamoDB attempt, started just before the request's deadline, may take this much after it
# (its connect and read timeouts, 1 s + 2 s: `mnsd.services.CLIENT_TIMEOUTS`) ...
ATTEMPT_SECONDS = 3.0
# ... and the last claim's calls, their retries and backoffs this much after the claim starts:
LONG_POLL_RETRY_SECONDS = 3.0
# so no claim starts later than this after the request arrived (24 s), whatever `Settings.max_poll_seconds` says.
LAST_CLAIM_SECONDS = ANSWER_SECONDS - ATTEMPT_SECONDS - LONG_POLL_RETRY_SECONDS
# A receive the wait tier holds is answered by the tier when its wait ends, with no call to make: it is held this
# long at most (a margin for the tier's own answer), and asked again only before `LAST_CLAIM_SECONDS`
# (`mnsd.waiting.contract.LAST_ASK_MS`).
HOLD_SECONDS = ANSWER_SECONDS - 2.0

_deadline: ContextVar[float | None] = ContextVar("mns_deadline", default=None)


def last_claim_seconds(max_poll_seconds: float) -> float:
    """How long after its arrival a long poll may still start a claim: the setting, never past `LAST_CLAIM_SECONDS`."""
    return min(max_poll_seconds, LAST_CLAIM_SECONDS)


def request_seconds(long_poll: bool, max_poll_seconds: float) -> float:
    """The budget of a request: a long poll's covers its wait and its last claim's retries (with the last attempt's
    own bound, at most `ANSWER_SECONDS`)."""
    return last_claim_seconds(max_poll_seconds) + LONG_POLL_RETRY_SECONDS if long_poll else REQUEST_SECONDS


@contextmanager
def within(
    seconds: float,
    since: float | None = None,
    wall: Callable[[], float] = time.time,
    monotonic: Callable[[], float] = time.monotonic,
) -> Iterator[None]:
    """The block's deadline: `seconds` after `since` (the epoch time the request arrived, by `wall`; now when None),
    on the `monotonic` clock."""
    elapsed = 0.0 if since is None else max(0.0, wall() - since)
    token = _deadline.set(monotonic() + seconds - elapsed)
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining(monotonic: Callable[[], float] = time.monotonic) -> float | None:
    """Seconds left before the current request's deadline (negative once past it); None outside a request."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - monotonic()
