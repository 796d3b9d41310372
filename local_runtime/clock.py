"""The local runtime's clock: the system's, or, for tests, the system's moved forward by a test.

A server in a test's own process takes an `OffsetClock` (`LocalServer(clock=...)`), which the test moves forward;
`MNS_CLOCK_FILE=<path>` runs `python -m local_runtime` on `FileClock`: the wall clock plus the seconds the file
holds, which a test in another process raises. Either way time moves on without the test waiting: visibility
timeouts, delays and the push retry schedule all follow it. A file rather than an endpoint: nothing is served that
moves the time, and the server holds no state a test could not see. Unset (`make run`, AWS), the clock is
`SystemClock`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from mnsd.ground.clock import Clock, SystemClock

CLOCK_FILE = "MNS_CLOCK_FILE"
TICK_SECONDS = 0.02  # how often a sleep on the clock looks at it again (a test's move ends the sleep this soon)


class OffsetClock:
    """The wall clock plus an offset that only grows: a server in a test's own process runs on it, and the test
    `advance`s it instead of waiting."""

    def __init__(self) -> None:
        self.moved = 0.0

    def offset(self) -> float:
        return self.moved

    def advance(self, seconds: float) -> None:
        assert seconds >= 0, "the clock moves forward only"
        self.moved += seconds

    def now(self) -> float:
        return time.time() + self.offset()

    def sleep(self, seconds: float) -> None:
        until = self.now() + seconds
        while (left := until - self.now()) > 0:
            time.sleep(min(left, TICK_SECONDS))


class FileClock(OffsetClock):
    """`OffsetClock` moved by another process: the offset (seconds, a float) written in `path`, read again whenever
    the file is replaced (a test writes a new file and renames it over the old one)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self._read: tuple[tuple[int, int], float] = ((-1, -1), 0.0)  # (the file's inode and mtime, its offset)

    def offset(self) -> float:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return 0.0
        key = (stat.st_ino, stat.st_mtime_ns)
        seen, offset = self._read
        if key != seen:
            offset = float(self.path.read_text() or 0)
            self._read = (key, offset)
        return offset


def clock_from_env(env: Mapping[str, str]) -> Clock:
    """`FileClock` over the file `MNS_CLOCK_FILE` names, else the system's clock."""
    path = env.get(CLOCK_FILE, "").strip()
    return FileClock(path) if path else SystemClock()
