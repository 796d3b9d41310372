"""Counters in the process: the local runtime's sink, read by its `GET /metrics` (they start from zero with it)."""

from __future__ import annotations

import threading

from mnsd.metrics import Labels, Metric


class ProcessMetrics:
    """Every count since the process started, by metric and labels; any thread may add or read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[Metric, Labels], float] = {}

    def monitors(self, chosen: bool | None) -> bool:
        """Every queue and topic, whatever it chose: the local `GET /metrics` lists them all."""
        return True

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        key = (metric, labels)
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + value

    def flush(self) -> None:
        """The counts stay: they are read, not published."""

    def counts(self) -> dict[tuple[Metric, Labels], float]:
        """A copy of every count so far."""
        with self._lock:
            return dict(self._counts)
