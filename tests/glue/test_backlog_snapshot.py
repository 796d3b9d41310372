"""backlog_snapshot: message-table export joined with the meta-table export, at snapshot time T.

Account A: queue alpha (incarnation qa), queue beta (qb, empty); account B: queue gamma (qg).
qa leases (x in the future unless said):
  L1 visible T - 1,000, d 0, enqueued T - 50,000      -> Active
  L2 visible T + 10,000, d 1, enqueued T - 80,000     -> Inactive (the oldest live message)
  L3 visible T + 5,000, d 0, enqueued T - 1,000       -> Delayed
  L4 x = T/1000 - 10 (TTL passed, still exported), enqueued T - 900,000 -> skipped
  L5 x = T/1000 exactly (x * 1000 <= T), enqueued T - 950,000           -> skipped
  L6 visible T exactly, d 2, enqueued T - 20,000      -> Active (visible <= T), in stripe 3 (pk qa#3)
  plus an out-of-line body item B... (not a lease)
qg leases: L7 visible T - 1, no d, enqueued T - 5,000 -> Active; L8 visible T + 1, no d, enqueued T - 3,000 -> Delayed
qx: a lease of an incarnation absent from the meta table (deleted queue) -> not reported.
Expected: alpha 2/1/1 oldest 80,000 ms; beta 0/0/0 no age; gamma 1/0/1 oldest 5,000 ms.
"""

from __future__ import annotations

import pytest

from glue_jobs.transforms import backlog_snapshot
from tests.glue.helpers import DAY, HOUR, T0, rows_by, table_exports

A = "1000000000000001"
B = "1000000000000002"
T = T0 + 2 * HOUR + 123
LIVE = T // 1000 + 86_400


def lease(queue_id: str, name: str, visible: int, enqueued: int, dequeues: int | None, expiry: int = LIVE):
    return {"pk": queue_id, "sk": f"L08{visible:013d}{name}", "id": name, "v": visible, "r": 1, "d": dequeues} | {
        "e": enqueued,
        "x": expiry,
        "m": "0" * 32,
        "b": "body",
    }


MESSAGES = [
    lease("qa", "L1", T - 1_000, T - 50_000, 0),
    lease("qa", "L2", T + 10_000, T - 80_000, 1),
    lease("qa", "L3", T + 5_000, T - 1_000, 0),
    lease("qa", "L4", T - 1, T - 900_000, 0, expiry=T // 1000 - 10),
    lease("qa", "L5", T - 1, T - 950_000, 0, expiry=T // 1000),
    lease("qa#3", "L6", T, T - 20_000, 2),  # in stripe 3 of qa
    {"pk": "qa", "sk": "BL2", "x": LIVE, "z": b"x\x9c\x03\x00\x00\x00\x00\x01"},
    lease("qg", "L7", T - 1, T - 5_000, None),
    lease("qg", "L8", T + 1, T - 3_000, None),
    lease("qx", "L9", T - 1, T - 10_000_000, 0),
]
META = [
    {"pk": f"{A}#queue", "sk": "alpha", "queue_id": "qa", "create_time": 1},
    {"pk": f"{A}#queue", "sk": "beta", "queue_id": "qb", "create_time": 1},
    {"pk": f"{B}#queue", "sk": "gamma", "queue_id": "qg", "create_time": 1},
    {"pk": f"{A}#topic", "sk": "news", "topic_id": "tn"},
    {"pk": f"{A}#account", "sk": "settings"},
]


@pytest.fixture(scope="module")
def exports(spark, tmp_path_factory):
    return table_exports(spark, tmp_path_factory.mktemp("exports"), MESSAGES, META, T)


def test_states_and_oldest_age(exports):
    rows = rows_by(backlog_snapshot(*exports, T), "account", "queue")
    summary = {key: (r["active"], r["inactive"], r["delayed"], r["oldest_message_age_ms"]) for key, r in rows.items()}
    assert summary == {
        (A, "alpha"): (2, 1, 1, 80_000),
        (A, "beta"): (0, 0, 0, None),
        (B, "gamma"): (1, 0, 1, 5_000),
    }
    assert {(r["queue_id"], r["snapshot_time"], r["date"]) for r in rows.values()} == {
        ("qa", T, DAY),
        ("qb", T, DAY),
        ("qg", T, DAY),
    }


def test_a_later_snapshot_sees_delayed_and_inactive_become_active(exports):
    # At T + 10,000: L2 (visible T + 10,000) and L3 (T + 5,000) are Active too; ages grow by 10,000.
    rows = rows_by(backlog_snapshot(*exports, T + 10_000), "queue")
    assert (rows[("alpha",)]["active"], rows[("alpha",)]["inactive"], rows[("alpha",)]["delayed"]) == (4, 0, 0)
    assert rows[("alpha",)]["oldest_message_age_ms"] == 90_000
