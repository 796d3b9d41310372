"""How many stripes (partitions) a queue's messages spread over: grown with the load a container observes.

A queue starts with `Settings.queue_stripes` stripes. When the receives of this container lose too many
claims to other consumers (more than `LOST_PER_WON` failed conditional claims per claimed message over at
least `MIN_ATTEMPTS` claims within `WINDOW_SECONDS`, counting only receives that found a full page of
candidates: consumers racing for the last few messages of a thin queue are not helped by more partitions),
or when the database throttles a send or a claim, the
container asks for twice the stripes (at most `Settings.max_queue_stripes`, at most once per
`COOLDOWN_SECONDS` per queue). The catalog applies it only if the count is still the one this container saw,
so containers that notice the same load at once double it once. The count never shrinks: receivers read
every stripe below it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from mnsd.clock import Clock

MIN_ATTEMPTS = 32
LOST_PER_WON = 0.25
WINDOW_SECONDS = 10.0
COOLDOWN_SECONDS = 1.0


@dataclass
class Load:
    won: int = 0  # claims that took a message
    lost: int = 0  # conditional claims another consumer won first
    throttled: int = 0  # writes the database refused for capacity


class Pressure:
    """What the storage engine observed of each queue's load since the last `take` (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._load: dict[str, Load] = {}

    def claims(self, queue_id: str, won: int, lost: int) -> None:
        with self._lock:
            load = self._load.setdefault(queue_id, Load())
            load.won += won
            load.lost += lost

    def throttled(self, queue_id: str) -> None:
        with self._lock:
            self._load.setdefault(queue_id, Load()).throttled += 1

    def take(self, queue_id: str) -> Load:
        with self._lock:
            return self._load.pop(queue_id, Load())


@dataclass
class _Window:
    started: float
    won: int = 0
    lost: int = 0
    scarce: int = 0  # claims made from pages that had fewer candidates than looked for


class StripeGrowth:
    """The growth rule, per container: when to ask for more stripes (see the module's docstring)."""

    def __init__(self, pressure: Pressure, clock: Clock, max_stripes: int) -> None:
        self.pressure = pressure
        self.clock = clock
        self.max_stripes = max_stripes
        self._lock = threading.Lock()
        self._windows: dict[str, _Window] = {}
        self._grown_at: dict[str, float] = {}

    def contended(self, queue_id: str) -> bool:
        """Whether this container's receives of the queue lose many claims now (they then read a wider page)."""
        with self._lock:
            window = self._windows.get(queue_id)
            return window is not None and window.lost > LOST_PER_WON * max(1, window.won)

    def wanted(self, queue_id: str, stripes: int, scarce: bool = False) -> int | None:
        """The stripe count to ask for now, or None to keep `stripes` (`scarce`: the claims since the last
        call were for fewer messages than the receive looked for, so they do not count)."""
        load = self.pressure.take(queue_id)
        now = self.clock.now()
        with self._lock:
            window = self._windows.get(queue_id)
            if window is None or now - window.started > WINDOW_SECONDS:
                window = self._windows[queue_id] = _Window(now)
            window.won += load.won
            window.lost += load.lost
            if scarce:
                window.scarce += load.won + load.lost
            if stripes >= self.max_stripes:
                return None
            judged = window.won + window.lost - window.scarce  # claims over full pages
            contended = judged >= MIN_ATTEMPTS and window.lost > LOST_PER_WON * max(1, window.won)
            if not (contended or load.throttled):
                return None
            if now - self._grown_at.get(queue_id, float("-inf")) < COOLDOWN_SECONDS:
                return None
            self._grown_at[queue_id] = now
            self._windows[queue_id] = _Window(now)
            return min(stripes * 2, self.max_stripes)
