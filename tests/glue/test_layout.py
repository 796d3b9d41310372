"""The Glue side of the message-table layout agrees with `mnsd.storage.dynamodb.items.layout`: attribute types,
and the one Active / Inactive / Delayed / expired rule (`layout.state_of`), including leases that lack
`v`, `d` or `x`."""

from __future__ import annotations

import json

import pytest

from glue_jobs.schemas import MESSAGE_ATTRIBUTES, MESSAGE_SCHEMA, META_SCHEMA, PACK_ENTRIES, PACK_ENTRY_ATTRIBUTES
from glue_jobs.transforms import backlog_snapshot
from mnsd.model.messages import MessageState
from mnsd.storage.dynamodb.items import layout, packs
from tests.glue.helpers import HOUR, T0, export_of, rows_by
from tests.support.export_generator import ddb_item

T = T0 + HOUR + 456
LIVE = T // 1000 + 3600


def test_glue_message_attributes_are_lease_attributes_of_the_same_type():
    assert MESSAGE_ATTRIBUTES
    entry_names = {f"{name}{n}": name for n in range(PACK_ENTRIES) for name in PACK_ENTRY_ATTRIBUTES}
    assert set(PACK_ENTRY_ATTRIBUTES) <= set(packs.ENTRY_ATTRIBUTES) and PACK_ENTRIES == packs.MAX_PACK
    for name, kind in MESSAGE_ATTRIBUTES.items():
        if name == packs.SIZE:
            assert kind == "N"
            continue
        assert layout.LEASE_ATTRIBUTES[entry_names.get(name, name)][0] == kind, name


def lease(n: int, **fields: int | None) -> dict:
    record = {"pk": "q1", "sk": f"L08{T:013d}M{n}", "id": f"M{n}", "v": T, "r": 1, "d": 0, "e": T - 10_000, "x": LIVE}
    record.update(fields)
    return {k: v for k, v in record.items() if v is not None}


LEASES = [
    lease(1, v=T - 1),  # Active
    lease(2, v=T),  # Active (visible at T)
    lease(3, v=T + 1, d=1),  # Inactive
    lease(4, v=T + 1, d=0),  # Delayed
    lease(5, v=T + 1, d=None),  # Delayed (no dequeue count)
    lease(6, v=None),  # no visible time: receivable since its enqueue
    lease(7, v=None, d=3),
    lease(8, x=T // 1000),  # expired at T
    lease(9, x=None, v=T + 5, d=2),  # no TTL: kept, Inactive
    lease(10, v=None, d=1, k=True),  # deleted with rewind on: kept for a rewind, not counted
    # a packed batch's lease (`packs.batch_items`): each entry with its own state, the kept one not counted
    {
        "pk": "q1",
        "sk": f"L08{T:013d}0123456789ABCDEF-1-18BCFE56800-{packs.PACK_MARK}123456789",
        "v": T - 1,
        "e": T - 10_000,
        "x": LIVE,
        packs.SIZE: 4,
        **{"v0": T - 1, "r0": 1, "d0": 0},  # Active
        **{"v1": T + 1, "r1": 1, "d1": 1},  # Inactive
        **{"v2": T + 1, "r2": 1, "d2": 0},  # Delayed
        **{"r3": 2, "d3": 1, "k3": True},  # kept for a rewind
    },
    # a FIFO batch's run of group "a" (`group_packs`): in its group's partition, at its first position
    {
        "pk": "q1#Ga",
        "sk": f"L08{T:013d}0123456789ABCDEF-1-18BCFE56800-{packs.PACK_MARK}223456789~YQ==",
        "v": T - 1,
        "e": T - 10_000,
        "x": LIVE,
        "g": "a",
        packs.SIZE: 2,
        **{"v0": T + 1, "r0": 2, "d0": 1},  # Inactive (its run in flight)
        **{"v1": T - 1, "r1": 1, "d1": 0},  # Active
    },
]


def leases_of(record: dict) -> list[dict]:
    """The leases an item stands for, as the engine reads them (a pack: one per entry)."""
    item = json.loads(ddb_item(record))["Item"]
    return packs.entries(item) if packs.is_pack(item) else [item]


@pytest.fixture(scope="module")
def exports(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("layout")
    meta = [{"pk": "A#queue", "sk": "alpha", "queue_id": "q1", "create_time": 1}]
    return (
        export_of(spark, folder / "messages", LEASES, MESSAGE_SCHEMA, export_time_ms=T),
        export_of(spark, folder / "meta", meta, META_SCHEMA, export_time_ms=T, layout="moto"),
    )


def test_backlog_snapshot_counts_states_as_the_layout_rule_does(exports):
    states = [layout.state_of(item, T) for record in LEASES for item in leases_of(record)]
    expected = tuple(states.count(s) for s in (MessageState.ACTIVE, MessageState.INACTIVE, MessageState.DELAYED))
    assert expected == (6, 4, 3)
    (row,) = rows_by(backlog_snapshot(*exports, T), "queue").values()
    assert (row["active"], row["inactive"], row["delayed"]) == expected
