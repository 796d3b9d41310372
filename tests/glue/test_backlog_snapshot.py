"""backlog_snapshot: message-table export joined with the meta-table export, at snapshot time T; and the same table
from the daily snapshot of each queue's counts (the stack's default source).

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

from glue_jobs.runner import JobInputs, build
from glue_jobs.transforms import DAY_MS, backlog_snapshot
from mnsd.monitoring.snapshot import BacklogRow, BacklogSnapshot
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


INCARNATIONS = {("qa", T, DAY), ("qb", T, DAY), ("qg", T, DAY)}


def summary(frame) -> tuple[dict, set]:
    """(account, queue) -> (active, inactive, delayed, oldest age); and every (queue_id, snapshot_time, date)."""
    rows = rows_by(frame, "account", "queue")
    states = {key: (r["active"], r["inactive"], r["delayed"], r["oldest_message_age_ms"]) for key, r in rows.items()}
    return states, {(r["queue_id"], r["snapshot_time"], r["date"]) for r in rows.values()}


def test_states_and_oldest_age(exports):
    states, incarnations = summary(backlog_snapshot(*exports, T))
    assert states == {
        (A, "alpha"): (2, 1, 1, 80_000),
        (A, "beta"): (0, 0, 0, None),
        (B, "gamma"): (1, 0, 1, 5_000),
    }
    assert incarnations == INCARNATIONS


def test_a_later_snapshot_sees_delayed_and_inactive_become_active(exports):
    # At T + 10,000: L2 (visible T + 10,000) and L3 (T + 5,000) are Active too; ages grow by 10,000.
    rows = rows_by(backlog_snapshot(*exports, T + 10_000), "queue")
    assert (rows[("alpha",)]["active"], rows[("alpha",)]["inactive"], rows[("alpha",)]["delayed"]) == (4, 0, 0)
    assert rows[("alpha",)]["oldest_message_age_ms"] == 90_000


def test_the_snapshot_of_each_queues_counts_gives_the_same_table_from_the_newest_snapshot(spark, tmp_path):
    # What the snapshot function writes (`mnsd.monitoring.snapshot`): an older snapshot beside, which is not read.
    def row(account, queue, queue_id, counts, oldest, read_at):
        return BacklogRow(account, queue, queue_id, *counts, oldest, read_at)

    older = BacklogSnapshot(T - DAY_MS, [row(A, "alpha", "qa", (9, 9, 9), T - DAY_MS - 1, T - DAY_MS)], 0)
    newer = BacklogSnapshot(
        T,
        [
            row(A, "alpha", "qa", (2, 1, 1), T - 80_000, T + 40),  # read 40 ms into the run
            row(A, "beta", "qb", (0, 0, 0), None, T + 41),
            row(B, "gamma", "qg", (1, 0, 1), T - 5_000, T + 42),
        ],
        0,
    )
    for snapshot in (older, newer):
        (tmp_path / snapshot.key("backlog")).parent.mkdir(exist_ok=True)
        (tmp_path / snapshot.key("backlog")).write_bytes(snapshot.body())
    frame = build(spark, "backlog_snapshot", JobInputs(backlog=str(tmp_path / "backlog")))
    states, incarnations = summary(frame)
    assert states == {
        (A, "alpha"): (2, 1, 1, 80_040),  # aged at its own read
        (A, "beta"): (0, 0, 0, None),
        (B, "gamma"): (1, 0, 1, 5_042),
    }
    assert incarnations == INCARNATIONS
    exported = backlog_snapshot(*table_exports(spark, tmp_path / "exports", MESSAGES, META, T), T)
    assert frame.schema == exported.schema  # one table in the catalog, whichever source fed it
