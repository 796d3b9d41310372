"""The clock a test moves by hand, for every suite that injects one (services, key caches, stripe growth)."""

from __future__ import annotations


class ManualClock:
    """`now` stands still until the test moves it: `sleep` (what the code under test calls) or `advance`."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start
        self.slept = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.t += seconds
            self.slept += seconds

    def advance(self, seconds: float) -> None:
        self.t += seconds
