"""The sampler's bounds: a run reads each monitored queue once, within its time budget, and the next run starts with
the queues the last one left unread. A fake store whose every read takes a second of an injected clock."""

from __future__ import annotations

from dataclasses import dataclass, field

from mnsd.metrics import (
    MESSAGE_GROUPS_IN_FLIGHT,
    MESSAGES_DELAYED,
    MESSAGES_INVISIBLE,
    MESSAGES_VISIBLE,
    OLDEST_MESSAGE_AGE,
    Labels,
    Metric,
    queue_labels,
)
from mnsd.metrics.process import ProcessMetrics
from mnsd.model.queues import Backlog, Queue, QueueAttributes, QueueCounts
from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"


def queue(name: str, fifo: bool = False, account: str = ACCOUNT) -> Queue:
    return Queue(account, name, f"id-{name}", QueueAttributes(queue_type="fifo" if fifo else "normal"), 1, 1)


@dataclass
class SlowStore:
    """Each backlog read takes `seconds` of the clock; `failing` queues raise."""

    clock: ManualClock
    seconds: float = 1.0
    failing: set[str] = field(default_factory=set)
    read: list[str] = field(default_factory=list)

    def backlog(self, queue: Queue) -> Backlog:
        self.clock.advance(self.seconds)
        self.read.append(queue.name)
        if queue.name in self.failing:
            raise RuntimeError("throttled")
        enqueued_ms = int((self.clock.now() - 90) * 1000)
        return Backlog(QueueCounts(len(queue.name), 2, 1), enqueued_ms)

    def held_groups(self, queue: Queue) -> int | None:
        return 7 if queue.attributes.queue_type == "fifo" else None  # (as `QueueControl` answers)


class FlushCounting(ProcessMetrics):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


def gauges(sink: ProcessMetrics, name: str) -> dict[Metric, float]:
    labels: Labels = queue_labels(ACCOUNT, name)
    return {metric: value for (metric, of), value in sink.counts().items() if of == labels}


def sampler(store: SlowStore, sink: ProcessMetrics, budget: float = 100.0, flush_every: int = 500) -> BacklogSampler:
    limits = SamplerLimits(workers=1, budget_seconds=budget, flush_every=flush_every)  # one reader: a known order
    return BacklogSampler(store, sink, store.clock, limits)


def test_each_queue_gets_its_gauges_and_a_fifo_queue_its_groups_in_flight():
    clock = ManualClock()
    sink = ProcessMetrics()
    run = sampler(SlowStore(clock), sink).run([queue("orders"), queue("jobs", fifo=True)])
    assert (run.monitored, run.sampled, run.late, run.failed) == (2, 2, 0, 0)
    assert gauges(sink, "orders") == {
        MESSAGES_VISIBLE: 6,
        MESSAGES_INVISIBLE: 2,
        MESSAGES_DELAYED: 1,
        OLDEST_MESSAGE_AGE: 90.0,  # read at the clock of its read
    }
    assert gauges(sink, "jobs")[MESSAGE_GROUPS_IN_FLIGHT] == 7


def test_a_run_stops_reading_when_its_budget_is_spent_and_the_next_starts_with_what_it_left():
    clock = ManualClock()
    store = SlowStore(clock)
    names = [f"q{i}" for i in range(10)]
    queues = [queue(name) for name in reversed(names)]  # (read in name order, whatever the order given)
    sink = ProcessMetrics()
    watcher = sampler(store, sink, budget=4.0)
    first = watcher.run(queues)
    assert (first.sampled, first.late) == (4, 6)
    assert store.read == names[:4]
    second = watcher.run(queues)
    assert (second.sampled, second.late) == (4, 6)
    assert store.read[4:] == names[4:8]
    watcher.run(queues)
    assert store.read[8:] == ["q8", "q9", "q0", "q1"]  # round the end, then from the start again
    assert all(gauges(sink, name) for name in names)  # every queue within three runs


def test_a_queue_gone_since_the_last_run_resumes_at_the_next_one():
    clock = ManualClock()
    store = SlowStore(clock)
    watcher = sampler(store, ProcessMetrics(), budget=2.0)
    watcher.run([queue(n) for n in ("a", "b", "c", "d")])  # reads a, b; c is next
    store.read.clear()
    watcher.run([queue(n) for n in ("a", "b", "d")])  # c deleted meanwhile
    assert store.read == ["d", "a"]


def test_a_failed_read_is_counted_and_the_others_are_sampled():
    clock = ManualClock()
    sink = ProcessMetrics()
    run = sampler(SlowStore(clock, failing={"b"}), sink).run([queue("a"), queue("b"), queue("c")])
    assert (run.sampled, run.failed, run.late) == (2, 1, 0)
    assert not gauges(sink, "b") and gauges(sink, "c")


def test_gauges_are_flushed_as_they_go_not_all_at_the_end():
    clock = ManualClock()
    sink = FlushCounting()
    sampler(SlowStore(clock, seconds=0.0), sink, flush_every=3).run([queue(f"q{i:02}") for i in range(10)])
    assert sink.flushes == 3 + 1  # after 3, 6 and 9 queues, and at the end


def test_many_readers_sample_every_queue_once():
    clock = ManualClock()
    store = SlowStore(clock, seconds=0.0)
    sink = ProcessMetrics()
    names = [f"q{i:04}" for i in range(2000)]
    run = BacklogSampler(store, sink, clock, SamplerLimits(workers=8)).run([queue(n) for n in names])
    assert run.sampled == 2000 and sorted(store.read) == names
