"""subscription_hourly on a hand-built log export in moto's layout (one data file, no manifest).

Topic `news` of account A; latency_ms is publish -> end of the attempt. Times are ms after T0.
  s1 msgA: attempt 1 success (latency 100) at 100; attempt 2 success (latency 20,000) at 20,000
  s1 msgB: attempt 1 failure at 200; attempt 2 success (latency 15,000) at 15,000
  s1 msgC: attempt 1 failure at 300; attempt 2 failure at 20,300; drop at 40,000
  s1 msgD: attempt 1 success (latency 400) at 400, written twice (same pk/sk)
  s1 msgE: attempt 1 success at 1 h + 10 with no latency_ms, written first (a late record)
  s2 msgA: attempt 1 success (latency 50) at 50
  publish events carry no subscription and are not counted.
"""

from __future__ import annotations

import pytest

from glue_jobs.schemas import TOPIC_EVENT_SCHEMA
from glue_jobs.transforms import subscription_hourly
from tests.glue.helpers import DAY, HOUR, T0, export_of, rows_by

A = "1000000000000001"


def push(sub: str, mid: str, attempt: int, ok: bool, at: int, latency: int | None = None, n: int = 0):
    return {
        "pk": f"{A}#topic#news",
        "sk": f"{T0 + at:013d}#{sub}{mid}{attempt}{n}",
        "account": A,
        "kind": "topic",
        "resource": "news",
        "event": "push",
        "time": T0 + at,
        "message_id": mid,
        "subscription": sub,
        "endpoint_kind": "http",
        "attempt": attempt,
        "outcome": "success" if ok else "failure",
        "status": 200 if ok else 503,
        "latency_ms": latency,
        "publish_time": T0,
        "x": (T0 + 5 * HOUR) // 1000,
    }


RECORDS = [
    push("s1", "msgE", 1, True, HOUR + 10),
    push("s1", "msgA", 1, True, 100, 100),
    push("s1", "msgA", 2, True, 20_000, 20_000),
    push("s1", "msgB", 1, False, 200, 200),
    push("s1", "msgB", 2, True, 15_000, 15_000),
    push("s1", "msgC", 1, False, 300, 300),
    push("s1", "msgC", 2, False, 20_300, 20_300),
    {
        "pk": f"{A}#topic#news",
        "sk": f"{T0 + 40_000:013d}#drop",
        "event": "drop",
        "time": T0 + 40_000,
        "message_id": "msgC",
        "subscription": "s1",
        "publish_time": T0,
    },
    push("s1", "msgD", 1, True, 400, 400),
    push("s1", "msgD", 1, True, 400, 400),
    push("s2", "msgA", 1, True, 50, 50),
    {"pk": f"{A}#topic#news", "sk": f"{T0:013d}#pub", "event": "publish", "time": T0, "message_id": "msgA"},
]


@pytest.fixture(scope="module")
def hourly(spark, tmp_path_factory):
    items = export_of(spark, tmp_path_factory.mktemp("log"), RECORDS, TOPIC_EVENT_SCHEMA, layout="moto")
    return rows_by(subscription_hourly(items), "topic", "subscription", "date", "hour")


def counts(row):
    return {k: row[k] for k in ("deliveries", "first_try_successes", "retries", "drops")}


def test_rows(hourly):
    assert sorted(hourly) == [("news", "s1", DAY, 0), ("news", "s1", DAY, 1), ("news", "s2", DAY, 0)]
    assert {row["account"] for row in hourly.values()} == {A}


def test_s1_hour_0(hourly):
    row = hourly[("news", "s1", DAY, 0)]
    # deliveries: distinct successful messages A, B, D (A twice, D duplicated) = 3
    # first try: A#1, D#1 = 2; retries: A#2, B#2, C#2 = 3; drops: C = 1
    assert counts(row) == {"deliveries": 3, "first_try_successes": 2, "retries": 3, "drops": 1}
    # latency of successes [100, 400, 15000, 20000]: p50 at rank 1.5 = 400 + 0.5 * 14600 = 7700;
    # p95 at rank 2.85 = 15000 + 0.85 * 5000 = 19250; p99 at rank 2.97 = 15000 + 0.97 * 5000 = 19850
    assert row["delivery_latency_ms_p50"] == pytest.approx(7_700)
    assert row["delivery_latency_ms_p95"] == pytest.approx(19_250)
    assert row["delivery_latency_ms_p99"] == pytest.approx(19_850)


def test_s1_hour_1_success_without_latency(hourly):
    row = hourly[("news", "s1", DAY, 1)]
    assert counts(row) == {"deliveries": 1, "first_try_successes": 1, "retries": 0, "drops": 0}
    assert row["delivery_latency_ms_p50"] is None


def test_s2_hour_0(hourly):
    row = hourly[("news", "s2", DAY, 0)]
    assert counts(row) == {"deliveries": 1, "first_try_successes": 1, "retries": 0, "drops": 0}
    assert row["delivery_latency_ms_p99"] == pytest.approx(50)
