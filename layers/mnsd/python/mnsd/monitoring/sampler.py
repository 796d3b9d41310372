"""The gauges of the monitored queues and receivers, sampled once a run: ApproximateNumberOfMessagesVisible,
...NotVisible, ...Delayed, ApproximateAgeOfOldestMessage and, for a FIFO queue, its groups with a message in flight.

Each queue costs what GetQueueAttributes costs (`MessageStore.backlog`: its counts and the enqueue time of its oldest
message from the same reads; `held_groups` for a FIFO queue), read by `workers` threads at once. A run is bounded in
time (`budget_seconds`): a queue whose turn comes after the budget is spent is not read (counted `late`), and the next
run of the same container starts with it, so that an overloaded sampler shares its minutes among all queues rather
than starving the last ones. The gauges go to the sink (EMF on AWS), flushed every `flush_every` queues.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from aws_lambda_powertools import Logger

from mnsd.ground.clock import Clock, ms
from mnsd.metrics import (
    MESSAGE_GROUPS_IN_FLIGHT,
    MESSAGES_DELAYED,
    MESSAGES_INVISIBLE,
    MESSAGES_VISIBLE,
    OLDEST_MESSAGE_AGE,
    Metric,
    MetricsSink,
    queue_labels,
)
from mnsd.model.queues import Backlog, Queue

logger = Logger(service="mns")


class Backlogs(Protocol):
    """What the sampler reads of a queue (`QueueControl` gives both)."""

    def backlog(self, queue: Queue) -> Backlog: ...

    def held_groups(self, queue: Queue) -> int | None: ...  # None: a queue without groups


@dataclass(frozen=True)
class SamplerLimits:
    workers: int = 16  # reads at once (the DynamoDB client's connection pool holds as many)
    budget_seconds: float = 40.0  # of a run; the function's timeout leaves room for the alarms and the flush
    flush_every: int = 500  # queues whose gauges are printed at once


@dataclass(frozen=True)
class SampleRun:
    monitored: int  # queues and receivers monitored
    sampled: int
    late: int  # not read: the budget was spent before their turn (the next run starts with them)
    failed: int  # read, and the read failed (throttled, unavailable): logged


@dataclass(frozen=True)
class Gauges:
    """A queue's gauges at one read."""

    backlog: Backlog
    read_at_ms: int
    held_groups: int | None = None  # FIFO queues only

    def values(self) -> dict[Metric, float]:
        counts = self.backlog.counts
        values: dict[Metric, float] = {
            MESSAGES_VISIBLE: counts.active,
            MESSAGES_INVISIBLE: counts.inactive,
            MESSAGES_DELAYED: counts.delayed,
            OLDEST_MESSAGE_AGE: self.backlog.oldest_age_seconds(self.read_at_ms),
        }
        if self.held_groups is not None:
            values[MESSAGE_GROUPS_IN_FLIGHT] = self.held_groups
        return values


def _key(queue: Queue) -> tuple[str, str]:
    return queue.account_id, queue.name


class _Late(Exception):
    """The budget was spent before this queue's turn."""


class BacklogSampler:
    """Samples the queues it is given (the monitored ones: the caller chose them), starting where the previous run
    of this instance stopped. One instance per container: its resume point lives as long as the container."""

    def __init__(self, queues: Backlogs, sink: MetricsSink, clock: Clock, limits: SamplerLimits | None = None) -> None:
        self.queues = queues
        self.sink = sink
        self.clock = clock
        self.limits = limits or SamplerLimits()
        self._resume: tuple[str, str] | None = None  # the first queue the last run left unread

    def run(self, monitored: Sequence[Queue]) -> SampleRun:
        deadline = self.clock.now() + self.limits.budget_seconds
        ordered = self._in_turn(sorted(monitored, key=_key))

        def read(queue: Queue) -> Gauges | None:
            if self.clock.now() >= deadline:
                raise _Late()
            try:
                held = self.queues.held_groups(queue)
                return Gauges(self.queues.backlog(queue), ms(self.clock.now()), held)
            except Exception:
                logger.exception("gauges not read", extra={"account": queue.account_id, "queue": queue.name})
                return None

        sampled = failed = 0
        late: list[Queue] = []
        with ThreadPoolExecutor(max_workers=self.limits.workers) as pool:
            futures = [pool.submit(read, queue) for queue in ordered]
            for queue, future in zip(ordered, futures, strict=True):
                try:
                    gauges = future.result()
                except _Late:
                    late.append(queue)
                    continue
                if gauges is None:
                    failed += 1
                    continue
                self._emit(queue, gauges)
                sampled += 1
                if sampled % self.limits.flush_every == 0:
                    self.sink.flush()
        self.sink.flush()
        self._resume = _key(late[0]) if late else None
        return SampleRun(len(ordered), sampled, len(late), failed)

    def _in_turn(self, ordered: list[Queue]) -> list[Queue]:
        """The queues from where the last run stopped (the first it left unread, or the next one after it), then
        the others."""
        if self._resume is None:
            return ordered
        start = next((i for i, queue in enumerate(ordered) if _key(queue) >= self._resume), 0)
        return ordered[start:] + ordered[:start]

    def _emit(self, queue: Queue, gauges: Gauges) -> None:
        labels = queue_labels(queue.account_id, queue.name)
        for metric, value in gauges.values().items():
            self.sink.add(metric, labels, value)
