"""Calls tried again while the refusal is one worth waiting out (throttling, a busy or unreachable side), with a
growing pause, until a time budget is spent; then the last refusal is raised."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from mnsclient.errors import ServiceError

T = TypeVar("T")
FIRST_PAUSE, LONGEST_PAUSE = 0.2, 2.0


def retrying(
    call: Callable[[], T],
    budget_seconds: float,
    on_retry: Callable[[ServiceError], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    deadline = clock() + budget_seconds
    pause = FIRST_PAUSE
    while True:
        try:
            return call()
        except ServiceError as error:
            if not error.retryable or clock() + pause > deadline:
                raise
            if on_retry is not None:
                on_retry(error)
            sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)
