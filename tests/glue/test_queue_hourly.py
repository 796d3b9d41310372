"""queue_hourly on a hand-built log export. Times are ms after T0 (2026-11-25 00:00 UTC).

Queue `orders` of account A, export time T0 + 2 h:
  m1: send 0, receive 1,000 (count 1), delete 5,000                    -> first receive 1,000; in queue 5,000
  m2: send 10,000, receive 13,000 (1), receive 50,000 (2), delete 60,000 -> first receive 3,000; in queue 50,000
      (its second receive has no account/kind/resource attribute: they come from pk)
  m3: send 20,000, receive 30,000 (1), delete at 1 h                   -> first receive 10,000; in queue 3,580,000
  m4: send 1 h + 1,000 written twice (same pk/sk), receive 1 h + 2,000 (1) with no enqueue_time
  m5: expire at 1 h + 5,000
All hour-1 lines are written before the hour-0 ones (late records), m1's records are past their TTL
(x in the past, still in the export: kept), and one topic event must not count.
"""

from __future__ import annotations

import pytest

from glue_jobs.schemas import QUEUE_EVENT_SCHEMA
from glue_jobs.transforms import queue_hourly
from tests.glue.helpers import DAY, HOUR, T0, export_of, rows_by

A = "1000000000000001"
FUTURE_TTL = (T0 + 10 * HOUR) // 1000
PAST_TTL = T0 // 1000 + 60  # before the export time: DynamoDB has not removed it yet


def event(kind_event: str, at: int, mid: str, n: int, **extra):
    record = {
        "pk": f"{A}#queue#orders",
        "sk": f"{T0 + at:013d}#e{n}",
        "account": A,
        "kind": "queue",
        "resource": "orders",
        "event": kind_event,
        "time": T0 + at,
        "message_id": mid,
        "x": FUTURE_TTL,
    }
    return record | extra


def enq(ms: int) -> int:
    return T0 + ms


HOUR_1 = [
    event("send", HOUR + 1_000, "m4", 40, enqueue_time=enq(HOUR + 1_000), priority=8, delay=0, body_size=10),
    event("send", HOUR + 1_000, "m4", 40, enqueue_time=enq(HOUR + 1_000), priority=8, delay=0, body_size=10),
    event("receive", HOUR + 2_000, "m4", 41, dequeue_count=1, first_dequeue_time=enq(HOUR + 2_000)),
    event("expire", HOUR + 5_000, "m5", 50, enqueue_time=enq(-HOUR), dequeue_count=0),
    event("delete", HOUR, "m3", 33, enqueue_time=enq(20_000), dequeue_count=1, first_dequeue_time=enq(30_000)),
]
HOUR_0 = [
    event("send", 0, "m1", 10, enqueue_time=enq(0), x=PAST_TTL),
    event("receive", 1_000, "m1", 11, enqueue_time=enq(0), dequeue_count=1, x=PAST_TTL),
    event("delete", 5_000, "m1", 12, enqueue_time=enq(0), dequeue_count=1, x=PAST_TTL),
    event("send", 10_000, "m2", 20, enqueue_time=enq(10_000)),
    event("receive", 13_000, "m2", 21, enqueue_time=enq(10_000), dequeue_count=1),
    {
        "pk": f"{A}#queue#orders",
        "sk": f"{T0 + 50_000:013d}#e22",
        "event": "receive",
        "time": T0 + 50_000,
        "message_id": "m2",
        "enqueue_time": enq(10_000),
        "dequeue_count": 2,
    },
    event("delete", 60_000, "m2", 23, enqueue_time=enq(10_000), dequeue_count=2),
    event("send", 20_000, "m3", 30, enqueue_time=enq(20_000)),
    event("receive", 30_000, "m3", 31, enqueue_time=enq(20_000), dequeue_count=1),
    event("publish", 40_000, "t1", 90, kind="topic", pk=f"{A}#topic#orders", resource="orders"),
]


@pytest.fixture(scope="module")
def hourly(spark, tmp_path_factory):
    items = export_of(spark, tmp_path_factory.mktemp("log"), HOUR_1 + HOUR_0, QUEUE_EVENT_SCHEMA)
    return rows_by(queue_hourly(items), "account", "queue", "date", "hour")


def test_one_row_per_queue_and_hour(hourly):
    assert sorted(hourly) == [(A, "orders", DAY, 0), (A, "orders", DAY, 1)]


def test_hour_0_counts_include_late_and_ttl_expired_records(hourly):
    row = hourly[(A, "orders", DAY, 0)]
    counts = {k: row[k] for k in ("sends", "receives", "deletes", "redeliveries", "expired")}
    # sends m1 m2 m3; receives m1 m2 m2 m3; deletes m1 m2; redelivery: m2's second receive
    assert counts == {"sends": 3, "receives": 4, "deletes": 2, "redeliveries": 1, "expired": 0}


def test_hour_0_percentiles(hourly):
    row = hourly[(A, "orders", DAY, 0)]
    # first receive [1000, 3000, 10000]: p50 3000; p95 at rank 1.9: 3000 + 0.9 * 7000; p99 3000 + 0.98 * 7000
    assert row["time_to_first_receive_ms_p50"] == pytest.approx(3_000)
    assert row["time_to_first_receive_ms_p95"] == pytest.approx(9_300)
    assert row["time_to_first_receive_ms_p99"] == pytest.approx(9_860)
    # in queue [5000, 50000]: p50 27500; p95 5000 + 0.95 * 45000; p99 5000 + 0.99 * 45000
    assert row["time_in_queue_ms_p50"] == pytest.approx(27_500)
    assert row["time_in_queue_ms_p95"] == pytest.approx(47_750)
    assert row["time_in_queue_ms_p99"] == pytest.approx(49_550)


def test_hour_1_duplicate_once_and_missing_enqueue_time_left_out_of_percentiles(hourly):
    row = hourly[(A, "orders", DAY, 1)]
    counts = {k: row[k] for k in ("sends", "receives", "deletes", "redeliveries", "expired")}
    assert counts == {"sends": 1, "receives": 1, "deletes": 1, "redeliveries": 0, "expired": 1}
    # m4's only receive has no enqueue_time: no time-to-first-receive in hour 1
    assert row["time_to_first_receive_ms_p50"] is None
    # m3 deleted in hour 1 after 3,600,000 - 20,000 ms: one value, every percentile equals it
    assert row["time_in_queue_ms_p50"] == row["time_in_queue_ms_p99"] == pytest.approx(3_580_000)
