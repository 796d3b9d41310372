"""poison_messages: max dequeue_count >= N and no delete event, per (account, queue, message)."""

from __future__ import annotations

import pytest

from glue_jobs.schemas import QUEUE_EVENT_SCHEMA
from glue_jobs.transforms import poison_messages
from tests.glue.helpers import DAY, HOUR, T0, export_of

A = "1000000000000001"
B = "1000000000000002"
SNAPSHOT = T0 + 2 * HOUR


def queue_event(account: str, queue: str, event: str, mid: str, at: int, count: int | None):
    return {
        "pk": f"{account}#queue#{queue}",
        "sk": f"{T0 + at:013d}#{mid}{event}{count}",
        "account": account,
        "kind": "queue",
        "resource": queue,
        "event": event,
        "time": T0 + at,
        "message_id": mid,
        "enqueue_time": T0,
        "dequeue_count": count,
    }


def receives(account: str, queue: str, mid: str, times: int):
    return [queue_event(account, queue, "receive", mid, 30_000 * c, c) for c in range(1, times + 1)]


RECORDS = [
    *receives(A, "jobs", "p1", 3),  # 3 receives, never deleted
    *receives(A, "jobs", "p2", 4),
    queue_event(A, "jobs", "delete", "p2", 200_000, 4),  # deleted: never poison
    *receives(A, "jobs", "p3", 2),  # 2 receives
    *receives(A, "jobs", "p4", 3),
    queue_event(A, "jobs", "expire", "p4", 300_000, 3),  # 3 receives, then expired
    queue_event(B, "mail", "receive", "p5", 10_000, 5),  # earlier receives already gone: max count 5
    queue_event(A, "jobs", "send", "p6", 0, None),  # no dequeue_count at all
]


@pytest.fixture(scope="module")
def items(spark, tmp_path_factory):
    return export_of(spark, tmp_path_factory.mktemp("log"), RECORDS, QUEUE_EVENT_SCHEMA)


def test_threshold_3(items):
    rows = {r["message_id"]: r.asDict() for r in poison_messages(items, SNAPSHOT, threshold=3).collect()}
    # p1 (3) and p4 (3, expired) and p5 (5); p2 was deleted, p3 reached 2, p6 was never received
    assert sorted(rows) == ["p1", "p4", "p5"]
    assert rows["p1"] == {
        "account": A,
        "queue": "jobs",
        "message_id": "p1",
        "max_dequeue_count": 3,
        "enqueue_time": T0,
        "last_receive_time": T0 + 90_000,  # third receive at 3 * 30,000
        "expired": False,
        "snapshot_time": SNAPSHOT,
        "date": DAY,
    }
    assert rows["p4"]["expired"] is True
    assert (rows["p5"]["account"], rows["p5"]["queue"], rows["p5"]["max_dequeue_count"]) == (B, "mail", 5)


def test_default_threshold_is_5(items):
    assert [r["message_id"] for r in poison_messages(items, SNAPSHOT).collect()] == ["p5"]
