"""Long polls in the local runtime, bounded: each waiting long poll holds a worker thread of the server
(`local_runtime.connections`), so only so many may wait at once, and workers are left for everything else."""

from __future__ import annotations

import threading

from mnsd.ground import errors
from mnsd.queues.notifier import Notifier

# Long polls waiting at once at most: past these, a receive that would wait is answered 503 (the SDKs retry it).
MAX_WAITING_POLLS = 64


class BoundedWaits:
    """A notifier whose waits are `limit` at once at most; the wait past it raises `ServiceUnavailable` (nothing was
    claimed: the receive that would wait found no message)."""

    def __init__(self, notifier: Notifier, limit: int = MAX_WAITING_POLLS) -> None:
        self._notifier = notifier
        self._limit = limit
        self._slots = threading.BoundedSemaphore(limit)

    def wait(self, queue_id: str, seconds: float) -> None:
        if not self._slots.acquire(blocking=False):
            raise errors.ServiceUnavailable(f"The server holds {self._limit} waiting long polls at most: try again.")
        try:
            self._notifier.wait(queue_id, seconds)
        finally:
            self._slots.release()

    def notify(self, queue_id: str, count: int = 1) -> None:
        self._notifier.notify(queue_id, count)

    def due(self, queue_id: str, at_ms: int) -> None:
        self._notifier.due(queue_id, at_ms)
