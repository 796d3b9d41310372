"""Counting requests per second in one process: exact for an engine served by one process (the embedded one)."""

from __future__ import annotations

import threading


class ProcessRateCounter:
    """Counts per key and second in memory; seconds before the newest seen are forgotten."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._second = 0
        self._counts: dict[str, int] = {}

    def take(self, key: str, second: int, limit: int) -> bool:
        with self._lock:
            if second > self._second:
                self._second, self._counts = second, {}
            elif second < self._second:  # a late caller of a second already past: count it in the current one
                second = self._second
            count = self._counts.get(key, 0)
            if count >= limit:
                return False
            self._counts[key] = count + 1
            return True
