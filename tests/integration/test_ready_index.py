"""The ready index on moto: a quiet queue does not keep it; a queue whose receives read too many leases they
cannot take, or that grows, turns it on, builds it over its older leases and then reads only the index."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import QueueAttributeChanges, QueueCounts
from mnsd.services import build_services
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.items import packs as packs_module
from mnsd.storage.dynamodb.placement.stripes import INDEX_STEP, INDEX_WASTE
from mnsd.storage.dynamodb.standard import stripe_counts
from tests.integration.placements import grow, placement
from tests.integration.receiving import receive_all
from tests.support.by_name import QueuesByName

ACCOUNT = "1000000000000001"
SETTLE = 120.0  # Settings.index_settle_seconds


def leases(dynamodb, service) -> list[dict]:
    items = dynamodb.scan(TableName=service.messages.table)["Items"]
    return [i for i in items if i["sk"]["S"].startswith(layout.LEASE)]


def send(service, count, name="q", delay=None, clock=None):
    results = []
    for start in range(0, count, 16):
        batch = [MessageInput(f"m{start + i}", delay, 8) for i in range(min(16, count - start))]
        results += service.send(ACCOUNT, name, batch)
        if clock is not None:
            clock.advance(0.01)
    assert all(r.error is None for r in results)
    return results


def hold(service, count, name="q"):
    """Receive `count` messages and keep them in flight."""
    got = []
    while len(got) < count:
        got += service.receive(ACCOUNT, name, min(16, count - len(got)), 0)
    return got


def build_by_empty_receives(service, attempts=20):
    """Receives that find nothing to take build the index all the same, a step each, till it is read."""
    for _ in range(attempts):
        if not placement(service).spread.plain:
            break
        with pytest.raises(errors.MessageNotExist):
            service.receive(ACCOUNT, "q", 16, 0)
    assert placement(service).spread.reads_index(0)


@pytest.mark.parametrize("packed", [False, True], ids=["unpacked", "packed"])
def test_a_quiet_queue_writes_nothing_to_the_index(make, dynamodb, packed):
    service = make(max_queue_stripes=1, packed_batches=packed)
    service.create_queue(ACCOUNT, "q")
    send(service, 20)
    got = hold(service, 20)
    service.batch_delete(ACCOUNT, "q", [g.receipt_handle for g in got[:10]])
    assert not placement(service).index_since
    found = leases(dynamodb, service)
    # Unpacked, one lease per message left; packed, a pack per batch (of 16 and 4) that still holds a message: the
    # receives took the two batches' messages in either order, so the 10 deleted may have emptied the batch of 4.
    left = {packs_module.stored_id(g.message.message_id) for g in got[10:]}
    assert len(found) == (len(left) if packed else 10) and not any(layout.INDEX_KEY in item for item in found)
    index = dynamodb.scan(TableName=service.messages.table, IndexName=layout.READY_INDEX)
    assert index["Count"] == 0


def test_receives_that_read_leases_they_cannot_take_turn_the_index_on_and_build_it(make, dynamodb, clock):
    # One stripe: a queue that grows turns the index on at once. One lease per message: the leases read and built
    # are counted (packed batches share theirs).
    service = make(max_queue_stripes=1, packed_batches=False)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="3600"))
    send(service, INDEX_WASTE)
    held = hold(service, INDEX_WASTE)  # (the last receive read 96 of them in flight: not enough to turn it on)
    assert not placement(service).index_since
    (behind,) = send(service, 1)
    # From the table, a receive reads every lease in flight ahead of the one it can take, and says so.
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.message_id == behind.message.message_id
    assert placement(service).index_since == int(clock.now() * 1000)
    assert placement(service).spread.indexing and placement(service).spread.plain == 1  # written from now on, not read
    # From now on writes keep it: a new lease has `w` (= `v`).
    (new,) = send(service, 1)
    by_id = {layout.message_id_of(i): i for i in leases(dynamodb, service)}
    assert by_id[new.message.message_id][layout.INDEX_KEY] == by_id[new.message.message_id]["v"]
    assert layout.INDEX_KEY not in by_id[held[0].message.message_id]
    # Nothing is built before every container writes the index.
    (claimed,) = service.receive(ACCOUNT, "q", 1, 0)
    assert placement(service).index_cursor == ""
    clock.advance(SETTLE)
    send(service, 1)
    steps = 0
    while placement(service).spread.plain:
        steps += 1
        try:
            service.receive(ACCOUNT, "q", 1, 0)
        except errors.MessageNotExist:
            pass  # (the receive builds the index a step further all the same)
        assert steps <= 10
    assert steps == -(-(INDEX_WASTE + 3) // INDEX_STEP)  # INDEX_STEP leases a receive, then done
    live = [i for i in leases(dynamodb, service) if "v" in i]
    # Every live lease's entry tells its `v` (`w` itself, or no later, the claim's time in `r`).
    assert live and all(layout.INDEX_KEY in i and layout.index_due(i) == int(i["v"]["N"]) for i in live)
    assert all(int(i[layout.INDEX_KEY]["N"]) <= int(i["v"]["N"]) for i in live)
    # Now a receive reads only what it can claim: the leases in flight are not read.
    queue = service.get_queue(ACCOUNT, "q")
    assert placement(service).spread.reads_index(0)
    send(service, 1)
    found = service.messages.reads.scan(queue.queue_id, int(clock.now() * 1000), 2, placement(service).spread, 2)
    assert len(found.messages) == 1 and found.wasted == 0  # (the engine's own reads: what a receive's scan reads)
    assert service.queue_counts(queue) == QueueCounts(active=1, inactive=INDEX_WASTE + 3)
    # A held message still comes back when its visibility ends, found through the index.
    service.change_visibility(ACCOUNT, "q", claimed.receipt_handle, 1)
    clock.advance(2)
    assert claimed.message.message_id in {g.message.message_id for g in hold(service, 2)}


def test_a_lease_another_container_wrote_without_the_index_is_built_into_it(make, dynamodb, clock):
    """A container whose cached queue record is older than the index turning on writes without `w` until its cache
    ends; building the index after `index_settle_seconds` gives those leases `w` too, so none is lost to receives."""
    service = make(meta_cache_seconds=5, max_queue_stripes=1, packed_batches=False)  # (one lease per message)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="3600"))
    stale = QueuesByName(build_services(service.settings, dynamodb=dynamodb, clock=clock))
    stale.get_queue(ACCOUNT, "q")  # cached: the queue before its index
    send(service, INDEX_WASTE)
    held = hold(service, INDEX_WASTE)
    send(service, 1)
    service.receive(ACCOUNT, "q", 1, 0)
    assert placement(service).index_since and not placement(stale).index_since
    # The stale container re-times a held message and sends a delayed one: neither lease gets `w`.
    stale.change_visibility(ACCOUNT, "q", held[0].receipt_handle, 600)
    (unindexed,) = send(stale, 1, delay=600)
    by_id = {layout.message_id_of(i): i for i in leases(dynamodb, service)}
    assert layout.INDEX_KEY not in by_id[held[0].message.message_id]
    assert layout.INDEX_KEY not in by_id[unindexed.message.message_id]
    clock.advance(SETTLE)
    build_by_empty_receives(service)
    live = [i for i in leases(dynamodb, service) if "v" in i]
    assert len(live) == INDEX_WASTE + 2 and all(i.get(layout.INDEX_KEY) == i["v"] for i in live)
    # When their time comes, receives find both in the index.
    clock.advance(600)
    got = {g.message.message_id for g in hold(service, 2)}
    assert got == {held[0].message.message_id, unindexed.message.message_id}


def test_a_queue_that_grows_reads_its_new_stripes_from_the_index_at_once(make, dynamodb, clock):
    service = make(max_queue_stripes=4)
    service.create_queue(ACCOUNT, "q")
    send(service, 4)
    grown = grow(service, 4)
    assert grown.spread.indexing and grown.spread.plain == 1
    assert [grown.spread.reads_index(s) for s in range(4)] == [False, True, True, True]
    queue = service.get_queue(ACCOUNT, "q")
    send(service, 60)
    assert all(
        i.get(layout.INDEX_KEY) == i["v"] for i in leases(dynamodb, service) if not i["pk"]["S"] == queue.queue_id
    )
    got = receive_all(service)
    assert len({g.message.message_id for g in got}) == 64


def test_a_queue_created_striped_keeps_its_index_from_the_start(make, dynamodb):
    service = make(queue_stripes=4)
    service.create_queue(ACCOUNT, "q")
    assert placement(service).spread.indexing and placement(service).spread.plain == 0
    send(service, 16)
    assert all(i[layout.INDEX_KEY] == i["v"] for i in leases(dynamodb, service))


def test_an_index_that_cannot_be_read_yet_is_not_read(make, dynamodb, clock):
    """On a table whose index DynamoDB is still building (a stack upgraded in place), receives and counts read the
    table and building the index waits for it."""
    service = make(queue_stripes=2)
    dynamodb.update_table(
        TableName=service.messages.table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": layout.READY_INDEX}}]
    )
    service.create_queue(ACCOUNT, "q")
    sent = send(service, 20)
    assert service.queue_counts(service.get_queue(ACCOUNT, "q")) == QueueCounts(active=20)
    got = hold(service, 20)
    assert {g.message.message_id for g in got} == {r.message.message_id for r in sent}
    queue = service.get_queue(ACCOUNT, "q")
    spread = placement(service).spread
    assert service.messages.index.build(queue.queue_id, spread, "", int(clock.now() * 1000), 50) == "2|"


def test_a_quiet_queues_counts_are_bounded_and_estimated_beyond(make, monkeypatch):
    monkeypatch.setattr(stripe_counts, "PLAIN_COUNT_ITEMS", 40)
    service = make(max_queue_stripes=1)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="3600"))
    send(service, 400, clock=service.clock)
    hold(service, 100)
    counted = service.queue_counts(service.get_queue(ACCOUNT, "q"))
    # 80 leases read (the first 40, all in flight; the last 40, all Active), the 320 between estimated.
    assert counted.active + counted.inactive == pytest.approx(400, rel=0.1)
    assert counted.delayed == 0


def test_packs_written_before_the_index_are_built_into_it(make, dynamodb, clock):
    """Packed batches of a quiet queue (no `w`) and a pack a container wrote without the index after it turned on get
    `w` when the index is built, their place as the pack's `v`: receives then find every entry through the index, a
    held entry when its visibility ends and a delayed batch when its delay does."""
    service = make(meta_cache_seconds=5, max_queue_stripes=1, packed_batches=True)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="3600"))
    stale = QueuesByName(build_services(service.settings, dynamodb=dynamodb, clock=clock))
    stale.get_queue(ACCOUNT, "q")  # cached: the queue before its index
    send(service, 256)
    held = hold(service, 256)  # (receives reading entries in flight they cannot take turn the index on)
    assert placement(service).index_since and not placement(stale).index_since
    first = packs_module.pack_key(held[0].message.ref, packs_module.entry_of(held[0].message.message_id))
    stale.change_visibility(ACCOUNT, "q", held[0].receipt_handle, 600)
    delayed = send(stale, 16, delay=600)
    packs = {i["sk"]["S"]: i for i in leases(dynamodb, service) if packs_module.is_pack(i)}
    later = packs_module.pack_key(delayed[0].message.ref, packs_module.entry_of(delayed[0].message.message_id))
    assert len(packs) == 17 and layout.INDEX_KEY not in packs[later["sk"]["S"]]  # (16 held, 1 delayed)
    assert packs[first["sk"]["S"]].get(layout.INDEX_KEY) != packs[first["sk"]["S"]]["v"]  # (its `w`, if any, stale)
    clock.advance(SETTLE)
    build_by_empty_receives(service)
    built = [i for i in leases(dynamodb, service) if packs_module.is_pack(i)]
    assert len(built) == 17 and all(p.get(layout.INDEX_KEY) == p["v"] for p in built)
    clock.advance(600)
    got = {g.message.message_id for g in hold(service, 17)}
    assert got == {held[0].message.message_id, *(d.message.message_id for d in delayed)}
