"""The local runtime's minutes: what the process counted and the gauges it read, per queue and minute, in memory.

`MinuteRing` is a metrics sink (beside `ProcessMetrics`): each count of a queue series goes into the current minute
of that queue's ring; gauge readings (`record_gauges`: the local runtime samples every queue once a minute, and
`RecordedMinutes` the queue asked about when it is asked) replace the minute's. A ring holds the last
`WINDOW_MINUTES` minutes in two flat arrays (~4.8 KB a queue: ~5 MB for 1,000 busy queues); a queue gets one only
once something is counted for it or its gauges read non-zero, and loses it after an hour of nothing (`forget_idle`):
the memory is bounded by the queues with messages or activity in the last hour.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Mapping

from mnsd.ground.clock import Clock, ms
from mnsd.metrics import Labels, Metric, queue_labels
from mnsd.metrics.minutes import (
    MINUTE_MS,
    MINUTE_SERIES,
    WINDOW_MINUTES,
    Minute,
    MinuteWindow,
    gauge_values,
    minutes_of,
    zeros,
)
from mnsd.model.queues import Backlog, Queue

_WIDTH = len(MINUTE_SERIES)
_COLUMN = {metric: i for i, metric in enumerate(MINUTE_SERIES)}


class _Ring:
    """One queue's minutes: slot `minute % WINDOW_MINUTES` holds the minute `stamps[slot]` (-1: none yet)."""

    __slots__ = ("stamps", "values")

    def __init__(self) -> None:
        self.stamps = array("q", [-1]) * WINDOW_MINUTES
        self.values = array("d", [0.0]) * (WINDOW_MINUTES * _WIDTH)

    def row(self, minute: int) -> int:
        """The offset of `minute`'s values, its slot emptied first if it held an older minute."""
        slot = minute % WINDOW_MINUTES
        offset = slot * _WIDTH
        if self.stamps[slot] != minute:
            self.stamps[slot] = minute
            self.values[offset : offset + _WIDTH] = array("d", [0.0]) * _WIDTH
        return offset

    def read(self, minute: int) -> dict[Metric, float] | None:
        slot = minute % WINDOW_MINUTES
        if self.stamps[slot] != minute:
            return None
        offset = slot * _WIDTH
        return dict(zip(MINUTE_SERIES, self.values[offset : offset + _WIDTH], strict=True))

    def newest(self) -> int:
        return max(self.stamps)


class MinuteRing:
    """Every queue's last hour by minute; any thread may count, record or read."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._rings: dict[Labels, _Ring] = {}

    def monitors(self, chosen: bool | None) -> bool:
        """Every queue, whatever it chose: the console charts any queue of `make run`."""
        return True

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        column = _COLUMN.get(metric)
        if column is None or not labels.queue:
            return
        minute = ms(self.clock.now()) // MINUTE_MS
        with self._lock:
            ring = self._rings.get(labels)
            if ring is None:
                ring = self._rings[labels] = _Ring()
            ring.values[ring.row(minute) + column] += value

    def flush(self) -> None:
        """The minutes stay: they are read, not published."""

    def record_gauges(self, labels: Labels, gauges: Mapping[Metric, float], at_ms: int) -> None:
        """The gauges read at `at_ms` become their minute's (a queue with no ring gets one only for a non-zero one)."""
        minute = at_ms // MINUTE_MS
        with self._lock:
            ring = self._rings.get(labels)
            if ring is None:
                if not any(gauges.values()):
                    return
                ring = self._rings[labels] = _Ring()
            offset = ring.row(minute)
            for metric, value in gauges.items():
                ring.values[offset + _COLUMN[metric]] = value

    def minutes(self, labels: Labels, window: MinuteWindow) -> list[Minute]:
        values = zeros(window)
        with self._lock:
            ring = self._rings.get(labels)
            if ring is not None:
                for i, start in enumerate(window.starts()):
                    found = ring.read(start // MINUTE_MS)
                    if found is not None:
                        values[i] = found
        return minutes_of(window, values)

    def forget_idle(self, now_ms: int) -> int:
        """Drops the rings with nothing in the last `WINDOW_MINUTES` minutes; answers how many are kept."""
        oldest = now_ms // MINUTE_MS - WINDOW_MINUTES
        with self._lock:
            for labels in [labels for labels, ring in self._rings.items() if ring.newest() <= oldest]:
                del self._rings[labels]
            return len(self._rings)


class RecordedMinutes:
    """A queue's minutes from the ring, its gauges read from the engine first (the current minute is up to date)."""

    def __init__(self, ring: MinuteRing, backlog: Callable[[Queue], Backlog]) -> None:
        self.ring = ring
        self.backlog = backlog

    def last_hour(self, queue: Queue, window: MinuteWindow) -> list[Minute]:
        labels = queue_labels(queue.account_id, queue.name)
        self.ring.record_gauges(labels, gauge_values(self.backlog(queue), window.now_ms), window.now_ms)
        return self.ring.minutes(labels, window)
