"""A background loop's errors, for a person to read: the first of a kind printed, its repeats counted and printed as
one summary line a minute (a full disk would otherwise print the same line ten times a second), and its end."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def _print(line: str) -> None:
    print(line, flush=True)


class ErrorReport:
    def __init__(
        self,
        source: str,
        every_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        out: Callable[[str], None] = _print,
    ) -> None:
        self.source = source
        self.every_seconds = every_seconds
        self.clock = clock
        self.out = out
        self._kind: str | None = None
        self._repeats = 0
        self._since = 0.0
        self._lock = threading.Lock()  # (a pool's threads report to one)

    def failed(self, error: BaseException) -> None:
        """One more failure: printed if of a new kind, else counted (and the count printed once a minute)."""
        with self._lock:
            self._failed(f"{type(error).__name__}: {error}", self.clock())

    def _failed(self, kind: str, now: float) -> None:
        if kind != self._kind:
            self._summarise(now)
            self._kind, self._since = kind, now
            self.out(f"{self.source}: {kind}")
            return
        self._repeats += 1
        if now - self._since >= self.every_seconds:
            self._summarise(now)
            self._since = now

    def succeeded(self) -> None:
        """A round without failure: the last kind's repeats summarised, and its end said."""
        with self._lock:
            if self._kind is None:
                return
            self._summarise(self.clock())
            self.out(f"{self.source}: working again")
            self._kind = None

    def _summarise(self, now: float) -> None:
        if self._repeats:
            self.out(f"{self.source}: {self._kind} (again {self._repeats} times in {now - self._since:.0f} s)")
        self._repeats = 0
