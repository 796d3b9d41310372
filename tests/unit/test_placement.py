"""The DynamoDB engine's placement of queues, kept in their catalog records (over an in-memory meta table)."""

from __future__ import annotations

import pytest

from mnsd.control.catalog import Catalog
from mnsd.model.queues import Queue, QueueAttributes
from mnsd.storage.dynamodb.placement.placement import WIDTH_HALVING_MS, WIDTH_LAG_MS, Placement
from mnsd.storage.dynamodb.placement.queue_records import Placements, QueueRecords
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock
from tests.support.wrappers import Wrapping

NOW = 1_700_000_000.0


class CountingTable(Wrapping):
    """A meta table that counts its reads."""

    def __init__(self, table) -> None:
        super().__init__(table)
        self.gets = 0

    def get(self, scope, name):
        self.gets += 1
        return self.inner.get(scope, name)


@pytest.fixture
def meta():
    storage = sqlite_storage(":memory:")
    yield CountingTable(storage.meta)
    storage.database.close()


def container(meta, clock, stripes: int = 1) -> tuple[Catalog, Placements]:
    records = QueueRecords(meta, clock, stripes)
    return Catalog(records, clock, 5.0), Placements(records, 5.0)


def queue(name: str = "q", queue_id: str = "id1") -> Queue:
    return Queue("acct", name, queue_id, QueueAttributes(), int(NOW), int(NOW))


def test_a_new_queue_record_holds_the_engines_placement_which_the_catalog_never_sees(meta):
    clock = ManualClock(NOW)
    catalog, placements = container(meta, clock, stripes=4)
    assert catalog.create_queue(queue()) is None
    stored = meta.inner.get("acct#queue", "q")
    assert (stored["stripes"], stored["index_since"], stored["plain_stripes"]) == (4, int(NOW * 1000), 0)
    assert "stripes" not in catalog.table.get("acct#queue", "q")
    assert catalog.get_queue("acct", "q") == queue()
    assert placements.of("id1") == Placement(4, int(NOW * 1000))


def test_placement_comes_from_the_record_the_catalog_read_without_a_second_read(meta):
    clock = ManualClock(NOW)
    container(meta, clock)[0].create_queue(queue())
    catalog, placements = container(meta, clock)  # another container
    catalog.get_queue("acct", "q")
    assert (placements.of("id1").stripes, meta.gets) == (1, 1)
    clock.t += 5  # past the bound: read again
    assert (placements.of("id1").stripes, meta.gets) == (1, 2)


def test_a_listing_places_the_queues_it_read_without_a_read_each_but_never_over_a_fresher_record(meta):
    clock = ManualClock(NOW)
    writer, _ = container(meta, clock, stripes=2)
    writer.create_queue(queue("a", "id-a"))
    writer.create_queue(queue("b", "id-b"))
    catalog, placements = container(meta, clock)  # the sampler's container
    catalog.list_queues("acct", "", 10, None)
    gets = meta.gets
    assert [placements.of(q).stripes for q in ("id-a", "id-b")] == [2, 2]
    assert meta.gets == gets  # no read per queue: the listing placed them
    clock.t += 60  # a minute later: remembered records have aged, a new listing places them again
    grown = placements.grow("id-a", placements.of("id-a"), 4, int(clock.t * 1000))  # (reads it: it aged)
    assert grown.stripes == 4
    stale = {**meta.inner.get("acct#queue", "a"), "stripes": 2}  # an eventually consistent listing a step behind
    real_list = meta.inner.list
    meta.inner.list = lambda *args: ([("a", stale)], False)  # type: ignore[method-assign]
    catalog.list_queues("acct", "", 10, None)
    meta.inner.list = real_list  # type: ignore[method-assign]
    assert placements.of("id-a").stripes == 4  # what this container just wrote stands


def test_a_queue_never_seen_is_found_by_its_id_and_one_without_a_record_is_placed_as_unrecorded(meta):
    clock = ManualClock(NOW)
    catalog, _ = container(meta, clock, stripes=2)
    catalog.create_queue(queue())
    placements = container(meta, clock)[1]
    assert placements.of("id1").stripes == 2
    assert placements.of("nothing") == Placement() and placements.grow("nothing", Placement(), 8, 0) == Placement()


def test_growth_applies_once_to_the_count_seen_and_is_seen_elsewhere_within_the_bound(meta):
    clock = ManualClock(NOW)
    catalog, one = container(meta, clock)
    catalog.create_queue(queue())
    two = container(meta, clock)[1]
    seen = two.of("id1")
    assert one.grow("id1", one.of("id1"), 4, 1000).stripes == 4
    assert two.grow("id1", seen, 2, 1000).stripes == 4  # (it saw 1: the record as it is now instead)
    grown = one.of("id1")
    assert (grown.widened_at, grown.index_since, grown.plain_stripes) == (1000, 1000, 1)
    assert one.advance_index("id1", grown, None).spread.reads_index(0)


def test_the_send_width_halves_after_the_queue_last_needed_its_stripes_and_receives_lag_behind():
    placement = Placement(8, 1, 0, "", widened_at=0).grown(16, 1_000)
    assert [placement.send_width(1_000 + k * WIDTH_HALVING_MS) for k in range(6)] == [16, 8, 4, 2, 1, 1]
    assert placement.read_spread(1_000 + WIDTH_HALVING_MS).width == 16
    assert placement.read_spread(1_000 + WIDTH_HALVING_MS + WIDTH_LAG_MS).width == 8
    assert Placement(8).send_width(10**12) == 8  # (never widened: always all)
