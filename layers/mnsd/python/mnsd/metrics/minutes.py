"""A queue's last hour, minute by minute: the console's chart (`GET /queues/{q}?metrics=minutely`).

Per minute, what the queue's calls counted (sent, received, empty receives, deleted, dead-lettered: the minute's
sums) and its gauges (visible, invisible, delayed, age of the oldest message: the last reading in the minute).
Where the minutes come from is a `MinuteHistory`'s affair:
- `mnsd.metrics.ring.RecordedMinutes`: what the local runtime's process counted and read, kept in memory;
- `mnsd.metrics.cloudwatch.CloudWatchMinutes`: the queue's CloudWatch series (GetMetricData), on AWS;
- `NoMinutes`: zeros (services built without a history: tests, tools).
A minute nothing was counted or read in is all zeros, as CloudWatch has no data point for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from mnsd.metrics import (
    EMPTY_RECEIVES,
    MESSAGES_DEAD_LETTERED,
    MESSAGES_DELAYED,
    MESSAGES_DELETED,
    MESSAGES_INVISIBLE,
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    MESSAGES_VISIBLE,
    OLDEST_MESSAGE_AGE,
    QUEUE_GAUGES,
    Metric,
)
from mnsd.model.queues import Backlog, Queue

MINUTE_MS = 60_000
WINDOW_MINUTES = 60
MINUTE_COUNTS = (MESSAGES_SENT, MESSAGES_RECEIVED, EMPTY_RECEIVES, MESSAGES_DELETED, MESSAGES_DEAD_LETTERED)
MINUTE_GAUGES = QUEUE_GAUGES
MINUTE_SERIES = (*MINUTE_COUNTS, *MINUTE_GAUGES)


def gauge_values(backlog: Backlog, now_ms: int) -> dict[Metric, float]:
    """The gauges of a queue's backlog read at `now_ms`."""
    return {
        MESSAGES_VISIBLE: backlog.counts.active,
        MESSAGES_INVISIBLE: backlog.counts.inactive,
        MESSAGES_DELAYED: backlog.counts.delayed,
        OLDEST_MESSAGE_AGE: backlog.oldest_age_seconds(now_ms),
    }


@dataclass(frozen=True)
class MinuteWindow:
    """The minutes of the last hour, the current one last: `WINDOW_MINUTES` whole minutes (the last one going on)."""

    first_ms: int  # the start of the oldest minute
    now_ms: int

    @classmethod
    def ending(cls, now_seconds: float) -> MinuteWindow:
        now_ms = int(now_seconds * 1000)
        return cls(now_ms // MINUTE_MS * MINUTE_MS - (WINDOW_MINUTES - 1) * MINUTE_MS, now_ms)

    @property
    def end_ms(self) -> int:
        """The end of the current minute."""
        return self.first_ms + WINDOW_MINUTES * MINUTE_MS

    def starts(self) -> list[int]:
        return [self.first_ms + i * MINUTE_MS for i in range(WINDOW_MINUTES)]

    def index(self, time_ms: int) -> int | None:
        """The position of the minute holding `time_ms`, None outside the window."""
        position = (time_ms - self.first_ms) // MINUTE_MS
        return position if 0 <= position < WINDOW_MINUTES else None


@dataclass(frozen=True)
class Minute:
    start_ms: int
    values: Mapping[Metric, float]  # every series of MINUTE_SERIES


def zeros(window: MinuteWindow) -> list[dict[Metric, float]]:
    """A value of zero for every series of every minute of `window`, to fill in."""
    return [dict.fromkeys(MINUTE_SERIES, 0.0) for _ in range(WINDOW_MINUTES)]


def minutes_of(window: MinuteWindow, values: list[dict[Metric, float]]) -> list[Minute]:
    return [Minute(start, row) for start, row in zip(window.starts(), values, strict=True)]


class MinuteHistory(Protocol):
    def last_hour(self, queue: Queue, window: MinuteWindow) -> list[Minute]:
        """The queue's (or receiver's, by its address) minutes of `window`, oldest first, one per minute."""
        ...


class NoMinutes:
    """Nothing recorded: every minute is zeros."""

    def last_hour(self, queue: Queue, window: MinuteWindow) -> list[Minute]:
        return minutes_of(window, zeros(window))
