"""The local runtime's minutes (`mnsd.metrics.ring`): counts land in the minute they happen in, gauges are the
minute's last reading, the window is the last hour with the current minute last, and memory stays bounded."""

from __future__ import annotations

import tracemalloc

from mnsd.metrics import (
    EMPTY_RECEIVES,
    MESSAGES_DELAYED,
    MESSAGES_DELETED,
    MESSAGES_INVISIBLE,
    MESSAGES_PUBLISHED,
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    MESSAGES_VISIBLE,
    OLDEST_MESSAGE_AGE,
    SENT_MESSAGE_SIZE,
    TeeMetrics,
    queue_labels,
    topic_labels,
)
from mnsd.metrics.minutes import MINUTE_SERIES, WINDOW_MINUTES, MinuteWindow, NoMinutes
from mnsd.metrics.process import ProcessMetrics
from mnsd.metrics.ring import MinuteRing, RecordedMinutes
from mnsd.model.queues import Backlog, Queue, QueueAttributes, QueueCounts
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
ORDERS = queue_labels(ACCOUNT, "orders")
START = 1_700_000_000.0  # 22:13:20 UTC: 20 s into a minute


def window(clock: ManualClock) -> MinuteWindow:
    return MinuteWindow.ending(clock.now())


def series(ring: MinuteRing, clock: ManualClock, metric, labels=ORDERS) -> list[float]:
    return [m.values[metric] for m in ring.minutes(labels, window(clock))]


def queue(name: str = "orders") -> Queue:
    return Queue(ACCOUNT, name, "qid", QueueAttributes(), 0, 0)


def test_the_window_is_the_last_sixty_minutes_the_current_one_last():
    w = MinuteWindow.ending(START)
    starts = w.starts()
    assert len(starts) == WINDOW_MINUTES == 60
    assert starts[-1] == 1_699_999_980_000  # the minute START is in
    assert starts[-1] - starts[0] == 59 * 60_000
    assert w.end_ms == starts[-1] + 60_000
    assert (w.index(starts[0]), w.index(w.now_ms), w.index(starts[0] - 1), w.index(w.end_ms)) == (0, 59, None, None)


def test_counts_land_in_the_minute_they_happen_in():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    ring.add(MESSAGES_SENT, ORDERS, 3)
    ring.add(MESSAGES_SENT, ORDERS, 2)
    clock.advance(60)  # the next minute
    ring.add(MESSAGES_SENT, ORDERS)
    ring.add(MESSAGES_DELETED, ORDERS, 4)

    sent = series(ring, clock, MESSAGES_SENT)
    assert sent[-2:] == [5, 1] and sum(sent) == 6
    assert series(ring, clock, MESSAGES_DELETED)[-1] == 4
    minutes = ring.minutes(ORDERS, window(clock))
    assert set(minutes[-1].values) == set(MINUTE_SERIES)
    assert minutes[-1].start_ms == window(clock).starts()[-1]


def test_an_hour_later_the_minutes_are_gone_and_a_reused_slot_starts_from_zero():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    ring.add(MESSAGES_RECEIVED, ORDERS, 7)
    clock.advance(59 * 60)
    assert series(ring, clock, MESSAGES_RECEIVED)[0] == 7  # still the oldest minute of the window
    clock.advance(60)
    assert sum(series(ring, clock, MESSAGES_RECEIVED)) == 0
    ring.add(MESSAGES_RECEIVED, ORDERS)  # the slot the old minute held
    assert series(ring, clock, MESSAGES_RECEIVED)[-1] == 1


def test_only_queue_series_are_kept():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    ring.add(SENT_MESSAGE_SIZE, ORDERS, 100)  # not a series of the chart
    ring.add(MESSAGES_PUBLISHED, topic_labels(ACCOUNT, "news"))  # a topic's
    assert ring.forget_idle(int(clock.now() * 1000)) == 0


def test_gauges_are_the_minutes_last_reading_and_a_queue_is_kept_apart_by_account():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    now_ms = int(clock.now() * 1000)
    ring.add(EMPTY_RECEIVES, ORDERS)
    ring.record_gauges(ORDERS, {MESSAGES_VISIBLE: 5, OLDEST_MESSAGE_AGE: 30}, now_ms)
    ring.record_gauges(ORDERS, {MESSAGES_VISIBLE: 4, OLDEST_MESSAGE_AGE: 31}, now_ms + 1000)
    last = ring.minutes(ORDERS, window(clock))[-1].values
    assert (last[MESSAGES_VISIBLE], last[OLDEST_MESSAGE_AGE], last[EMPTY_RECEIVES]) == (4, 31, 1)  # counts stay
    other = ring.minutes(queue_labels("2000000000000002", "orders"), window(clock))
    assert all(not any(m.values.values()) for m in other)


def test_a_queue_gets_a_ring_only_once_it_has_something_and_loses_it_after_an_idle_hour():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    now_ms = int(clock.now() * 1000)
    ring.record_gauges(ORDERS, {MESSAGES_VISIBLE: 0, MESSAGES_INVISIBLE: 0}, now_ms)  # an empty idle queue
    assert ring.forget_idle(now_ms) == 0
    ring.record_gauges(ORDERS, {MESSAGES_VISIBLE: 1}, now_ms)
    assert ring.forget_idle(now_ms + 59 * 60_000) == 1
    assert ring.forget_idle(now_ms + 60 * 60_000) == 0


def test_the_tee_counts_into_the_process_counters_and_the_minutes():
    clock = ManualClock(START)
    counters, ring = ProcessMetrics(), MinuteRing(clock)
    TeeMetrics(counters, ring).add(MESSAGES_SENT, ORDERS, 2)
    assert counters.counts() == {(MESSAGES_SENT, ORDERS): 2}
    assert series(ring, clock, MESSAGES_SENT)[-1] == 2


def test_recorded_minutes_read_the_queues_gauges_now_for_the_current_minute():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    enqueued = int(clock.now() * 1000) - 90_000
    backlogs = {"orders": Backlog(QueueCounts(active=2, inactive=1, delayed=3), enqueued)}
    history = RecordedMinutes(ring, lambda q: backlogs[q.name])
    ring.add(MESSAGES_SENT, ORDERS, 6)

    last = history.last_hour(queue(), window(clock))[-1].values
    assert last[MESSAGES_SENT] == 6
    assert (last[MESSAGES_VISIBLE], last[MESSAGES_INVISIBLE], last[MESSAGES_DELAYED]) == (2, 1, 3)
    assert last[OLDEST_MESSAGE_AGE] == 90.0


def test_no_minutes_are_zeros():
    w = MinuteWindow.ending(START)
    minutes = NoMinutes().last_hour(queue(), w)
    assert [m.start_ms for m in minutes] == w.starts()
    assert all(v == 0 for m in minutes for v in m.values.values())


def test_a_thousand_busy_queues_take_a_few_megabytes():
    clock = ManualClock(START)
    ring = MinuteRing(clock)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for minute in range(WINDOW_MINUTES):
        for i in range(1000):
            labels = queue_labels(ACCOUNT, f"q{i}")
            ring.add(MESSAGES_SENT, labels)
            ring.record_gauges(labels, {MESSAGES_VISIBLE: minute}, int(clock.now() * 1000))
        clock.advance(60)
    used = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    assert used < 7_000_000, used  # ~5.5 MB: two flat arrays per queue, whatever the traffic
