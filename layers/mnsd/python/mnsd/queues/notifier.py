"""Wake-ups for long polls.

In Lambda a waiting receive cannot be told that another function stored a message, so it sleeps
until its next poll (`PollingNotifier`). In one process (the local runtime) a send wakes the
receives waiting on that queue at once (`LocalNotifier`). Behind the wait tier (`mnsd.waiting`), the tier holds
the waiting receives and is told of each message made receivable, now or at a known time (`TierWakes`).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Protocol

from mnsd.ground.clock import Clock


class Notifier(Protocol):
    def wait(self, queue_id: str, seconds: float) -> None:
        """Return after `seconds`, or earlier when a message was stored in the queue."""
        ...

    def notify(self, queue_id: str, count: int = 1) -> None:
        """`count` messages of the queue became receivable: wake its waiting receives."""
        ...

    def due(self, queue_id: str, at_ms: int) -> None:
        """A message of the queue becomes receivable at `at_ms` (delayed, or its visibility runs out)."""
        ...


def wake(notifier: Notifier, queue_id: str, visible_at: list[int], now_ms: int) -> None:
    """Tell `notifier` of messages of the queue that become receivable at these times: now, or later."""
    now = sum(1 for at in visible_at if at <= now_ms)
    if now:
        notifier.notify(queue_id, now)
    later = [at for at in visible_at if at > now_ms]
    if later:
        notifier.due(queue_id, min(later))


class PollingNotifier:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def wait(self, queue_id: str, seconds: float) -> None:
        self.clock.sleep(seconds)

    def notify(self, queue_id: str, count: int = 1) -> None:
        pass

    def due(self, queue_id: str, at_ms: int) -> None:
        pass  # (a waiting receive sleeps no longer than until the next visible time it saw)


class LocalNotifier:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = defaultdict(threading.Event)

    def wait(self, queue_id: str, seconds: float) -> None:
        with self._lock:
            event = self._events[queue_id]
        event.wait(seconds)

    def due(self, queue_id: str, at_ms: int) -> None:
        pass  # (as PollingNotifier's)

    def notify(self, queue_id: str, count: int = 1) -> None:
        with self._lock:
            event = self._events.pop(queue_id, None)
        if event is not None:
            event.set()
