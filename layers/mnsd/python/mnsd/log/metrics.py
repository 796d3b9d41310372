"""Hourly activity of a queue or a subscription, read from the operation log (the console's charts).

The counts are those of the analytics jobs (`glue_jobs/transforms.py`: queue_hourly, subscription_hourly),
computed over a bounded read: a window of at most `MAX_HOURS` whole hours, at most `MAX_ITEMS` log items,
only the fields the counts need. `LogReader` is what the storage engines' log stores offer (`read`), each
turning its own rows into `LogEvent`s. The aggregation (`queue_hourly`, `subscription_hourly`) is pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Protocol

from mnsd.log.oplog import RETENTION_SECONDS, LogRecord

HOUR_MS = 3_600_000
MAX_HOURS = RETENTION_SECONDS // 3600  # the log keeps no more
DEFAULT_HOURS = 24
MAX_ITEMS = 20_000  # log items read per call at most (a DynamoDB query page reads at most 1 MB)

QUEUE_SERIES = ("Sends", "Receives", "Deletes", "Redeliveries", "Expired")
SUBSCRIPTION_SERIES = ("Deliveries", "FirstTrySuccesses", "Retries", "Failures", "Drops")


@dataclass(frozen=True)
class LogEvent:
    """The fields of one operation-log record that the hourly counts use."""

    time: int  # ms
    event: str
    message_id: str = ""
    dequeue_count: int | None = None
    subscription: str | None = None
    attempt: int | None = None
    outcome: str | None = None


@dataclass(frozen=True)
class LogRead:
    events: list[LogEvent]
    truncated: bool  # the item limit stopped the read before the window's end


class LogReader(Protocol):
    def read(
        self, account: str, kind: str, resource: str, start_ms: int, end_ms: int, limit: int, subscription: str = ""
    ) -> LogRead:
        """The records of `{account}#{kind}#{resource}` with start_ms <= time <= end_ms (of one subscription
        if given), oldest first, reading at most `limit` items."""
        ...


@dataclass(frozen=True)
class Window:
    first_hour_ms: int  # the start of the oldest hour
    end_ms: int  # now
    hours: int

    @classmethod
    def ending(cls, now_seconds: float, hours: int) -> Window:
        end = int(now_seconds * 1000)
        return cls(end // HOUR_MS * HOUR_MS - (hours - 1) * HOUR_MS, end, hours)

    def hour_starts(self) -> list[int]:
        return [self.first_hour_ms + i * HOUR_MS for i in range(self.hours)]


@dataclass(frozen=True)
class HourlyCounts:
    hour_ms: int
    counts: dict[str, int]


def _buckets(window: Window, series: Iterable[str]) -> dict[int, dict[str, int]]:
    return {start: dict.fromkeys(series, 0) for start in window.hour_starts()}


def _bucket_of(buckets: dict[int, dict[str, int]], time_ms: int) -> dict[str, int] | None:
    return buckets.get(time_ms // HOUR_MS * HOUR_MS)


def queue_hourly(events: Iterable[LogEvent], window: Window) -> list[HourlyCounts]:
    """Sends, receives, deletes, redeliveries (receives after the first) and expiries per hour."""
    buckets = _buckets(window, QUEUE_SERIES)
    names = {"send": "Sends", "receive": "Receives", "delete": "Deletes", "expire": "Expired"}
    for event in events:
        bucket = _bucket_of(buckets, event.time)
        if bucket is None or event.event not in names:
            continue
        bucket[names[event.event]] += 1
        if event.event == "receive" and (event.dequeue_count or 0) > 1:
            bucket["Redeliveries"] += 1
    return [HourlyCounts(start, counts) for start, counts in buckets.items()]


def subscription_hourly(events: Iterable[LogEvent], window: Window, subscription: str) -> list[HourlyCounts]:
    """Per hour: messages delivered, first-try successes, retries (attempts after the first), failed
    attempts and messages dropped, for one subscription."""
    buckets = _buckets(window, SUBSCRIPTION_SERIES)
    delivered: dict[int, set[str]] = {start: set() for start in buckets}
    for event in events:
        bucket = _bucket_of(buckets, event.time)
        if bucket is None or event.subscription != subscription:
            continue
        if event.event == "drop":
            bucket["Drops"] += 1
        if event.event != "push":
            continue
        attempt = event.attempt or 1
        if event.outcome == "success":
            delivered[event.time // HOUR_MS * HOUR_MS].add(event.message_id)
            bucket["FirstTrySuccesses"] += attempt == 1
        else:
            bucket["Failures"] += 1
        bucket["Retries"] += attempt > 1
    for start, messages in delivered.items():
        buckets[start]["Deliveries"] = len(messages)
    return [HourlyCounts(start, counts) for start, counts in buckets.items()]


def event_of(record: LogRecord) -> LogEvent:
    """The counted fields of a log record (each `LogEvent` field is the record's field of that name)."""
    return LogEvent(**{name: getattr(record, name) for name in _EVENT_FIELDS})


_EVENT_FIELDS = tuple(field.name for field in fields(LogEvent))
