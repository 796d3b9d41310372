"""Who is acting, for the operation log: the access key id of the request being served (`acting`, set by the request
pipeline around an authenticated call), told to the storage engines while the call works on a queue that logs its
messages' events (`recording`, set by the queue services), so that they record which key sent, received or re-timed
a message (`mnsd.log.changes`) and write nothing more for a queue that does not log. Outside a call (the sweeper,
the stream reader, push workers) no key is acting."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_KEY: ContextVar[str | None] = ContextVar("acting_access_key_id", default=None)
_RECORDING: ContextVar[bool] = ContextVar("recording_queue_events", default=False)


def current() -> str | None:
    """The access key id of the call being served while it works on a logging queue; else None."""
    return _KEY.get() if _RECORDING.get() else None


@contextmanager
def acting(access_key_id: str | None) -> Iterator[None]:
    token = _KEY.set(access_key_id)
    try:
        yield
    finally:
        _KEY.reset(token)


@contextmanager
def recording(logging_enabled: bool) -> Iterator[None]:
    """Work on a queue whose LoggingEnabled is `logging_enabled`."""
    token = _RECORDING.set(logging_enabled)
    try:
        yield
    finally:
        _RECORDING.reset(token)


def is_recording() -> bool:
    """Whether the call works on a queue that logs its messages' events."""
    return _RECORDING.get()
