"""Wake-ups for long polls.

In Lambda a waiting receive cannot be told that another function stored a message, so it sleeps
until its next poll (`PollingNotifier`). In one process (the local runtime) a send wakes the
receives waiting on that queue at once (`LocalNotifier`).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Protocol

from mnsd.clock import Clock


class Notifier(Protocol):
    def wait(self, queue_id: str, seconds: float) -> None:
        """Return after `seconds`, or earlier when a message was stored in the queue."""
        ...

    def notify(self, queue_id: str) -> None:
        """A message was stored in the queue: wake its waiting receives."""
        ...


class PollingNotifier:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def wait(self, queue_id: str, seconds: float) -> None:
        self.clock.sleep(seconds)

    def notify(self, queue_id: str) -> None:
        pass


class LocalNotifier:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = defaultdict(threading.Event)

    def wait(self, queue_id: str, seconds: float) -> None:
        with self._lock:
            event = self._events[queue_id]
        event.wait(seconds)

    def notify(self, queue_id: str) -> None:
        with self._lock:
            event = self._events.pop(queue_id, None)
        if event is not None:
            event.set()
