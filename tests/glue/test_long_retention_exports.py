"""backlog_snapshot past MNS's 7 days: a queue kept 15 days (CMQ's longest, `MAX_RETENTION_SECONDS`) has its leases
counted while their TTL runs, 14 days after their send, and none once it has passed.

Queue long (incarnation ql): L1 sent 14 days before T and received (visible T + 30 s, d 1), L2 sent 10 days before
T (Active); each expires 15 days after its send."""

from __future__ import annotations

import pytest

from glue_jobs.transforms import backlog_snapshot
from mnsd.model.queues import MAX_RETENTION_SECONDS
from tests.glue.helpers import HOUR, T0, rows_by, table_exports

A = "1000000000000001"
DAY_MS = 24 * HOUR
T = T0 + 2 * HOUR


def lease(name: str, visible: int, enqueued: int, dequeues: int) -> dict:
    expiry = enqueued // 1000 + MAX_RETENTION_SECONDS
    return {"pk": "ql", "sk": f"L08{visible:013d}{name}", "id": name, "v": visible, "r": 1, "d": dequeues} | {
        "e": enqueued,
        "x": expiry,
        "m": "0" * 32,
        "b": "body",
    }


MESSAGES = [lease("L1", T + 30_000, T - 14 * DAY_MS, 1), lease("L2", T - 10 * DAY_MS, T - 10 * DAY_MS, 0)]
META = [{"pk": f"{A}#queue", "sk": "long", "queue_id": "ql", "create_time": 1}]


@pytest.fixture(scope="module")
def exports(spark, tmp_path_factory):
    return table_exports(spark, tmp_path_factory.mktemp("long-exports"), MESSAGES, META, T)


def test_leases_kept_15_days_count_after_14_and_not_after_15(exports):
    def counts(at: int) -> tuple:
        r = rows_by(backlog_snapshot(*exports, at), "queue")[("long",)]
        return r["active"], r["inactive"], r["delayed"], r["oldest_message_age_ms"]

    assert counts(T) == (1, 1, 0, 14 * DAY_MS)
    assert counts(T + DAY_MS) == (1, 0, 0, 11 * DAY_MS)  # L1's 15 days are over; L2 has 4 left
    assert counts(T + 5 * DAY_MS) == (0, 0, 0, None)
