"""The DynamoDB engine's packed batches (`mnsd.storage.dynamodb.items.packs`): what a batch stores, the invariant on a
pack's place in the ready index, and tables written with packs off read with them on and back."""

from __future__ import annotations

import random

import pytest

from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.model.queues import QueueCounts
from mnsd.storage import Storage
from mnsd.storage.dynamodb import dynamodb_storage
from mnsd.storage.dynamodb.items.layout import INDEX_KEY, READY_INDEX
from mnsd.storage.dynamodb.items.packs import entries, entry_of, indexes_of, is_pack
from tests.storage.engines import indexed_queues
from tests.support.packs import batch, counts, items, receive
from tests.support.simulator.dynamodb import SimulatedDynamoDB
from tests.support.stored import NOW


def engine(client, packed: bool = True) -> Storage:
    return indexed_queues(dynamodb_storage(client, Settings(packed_batches=packed)))


@pytest.fixture
def client():
    client = SerializedClient(SimulatedDynamoDB())
    create_tables(client, Settings())
    return client


def index_entries(client, partition: str = "q1") -> list[dict]:
    return client.query(
        TableName=Settings().message_table,
        IndexName=READY_INDEX,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": partition}},
    )["Items"]


def test_a_batch_is_one_body_item_and_one_pack_with_one_ready_index_entry(client):
    storage = engine(client)
    sent = batch(storage)
    assert len({entry_of(m.message_id).pack for m in sent}) == 1  # type: ignore[union-attr]
    stored = items(client)
    assert sorted(i["sk"]["S"][0] for i in stored) == ["B", "L"]
    (pack,) = [i for i in stored if is_pack(i)]
    assert indexes_of(pack) == list(range(16)) and "z" not in pack and "b" not in pack
    assert [e["sk"]["S"] for e in index_entries(client)] == [pack["sk"]["S"]]
    assert sorted(e["sk"]["S"][16:] for e in entries(pack)) == sorted(m.message_id for m in sent)


def test_single_sends_and_packs_off_keep_one_lease_per_message(client):
    assert entry_of(engine(client).messages.new_ids("q1", 1, NOW)[0]) is None
    batch(engine(client, packed=False))
    assert len([i for i in items(client) if i["sk"]["S"].startswith("L")]) == 16


def test_tables_read_the_same_whichever_way_batches_were_written(client):
    """Leases written with packs off are read with them on, and packs with them off (a rollback)."""
    single, packed = batch(engine(client, packed=False)), batch(engine(client))
    for reader in (engine(client), engine(client, packed=False)):
        assert counts(reader, NOW + 10) == QueueCounts(32, 0, 0)
    got = receive(engine(client, packed=False), NOW + 20, 16) + receive(engine(client), NOW + 20, 16)
    assert sorted(m.message_id for m in got) == sorted(m.message_id for m in single + packed)
    assert all(m.body for m in got)
    for writer, taken in ((engine(client), got[:16]), (engine(client, packed=False), got[16:])):
        assert writer.messages.delete_many([(m.ref, m.version) for m in taken], NOW + 30) == [True] * 16
    assert items(client) == [i for i in items(client) if i["sk"]["S"].startswith("B")]  # bodies left to TTL


def test_a_pack_deleted_since_it_was_read_is_not_made_anew_by_moving_its_place(client):
    storage = engine(client)
    batch(storage, 2)
    taken = receive(storage, NOW + 10)
    (stale,) = [i for i in items(client) if is_pack(i)]  # read with both in flight: a receive would move it on
    assert storage.messages.delete_many([(m.ref, m.version) for m in taken], NOW + 20) == [True, True]
    storage.messages.packs.settle(stale, NOW + 30, True)
    assert [i for i in items(client) if i["sk"]["S"].startswith("L")] == []


def _check_invariant(client, now: int) -> None:
    """Each pack's place (`v`, and `w` in the ready index) is no later than the earliest time one of its entries
    is receivable: `v <= max(now, earliest v{n})` (an entry receivable at any t >= now finds the pack at t)."""
    for pack in (i for i in items(client) if is_pack(i)):
        times = [int(pack[f"v{n}"]["N"]) for n in indexes_of(pack) if f"v{n}" in pack]
        place = int(pack["v"]["N"])
        assert int(pack[INDEX_KEY]["N"]) == place
        if times:
            assert place <= max(now, min(times)), (place, now, sorted(times))


@pytest.mark.parametrize("seed", range(6))
def test_a_packs_place_is_never_later_than_its_earliest_receivable_message(client, seed):
    """Random receives (part or whole), give-backs, visibility changes both ways, deletes, deletes kept and rewinds
    of the messages of a few packs: after each, the invariant holds and every message not deleted is found by
    receives once receivable (the index finds its pack)."""
    rng = random.Random(seed)
    storage = engine(client)
    store = storage.messages
    sent = {m.message_id for _ in range(3) for m in batch(storage, rng.randint(2, 16))}
    held: dict[str, object] = {}
    gone: set[str] = set()
    now = NOW + 10
    for _ in range(60):
        now += rng.randint(1, 4000)
        action = rng.random()
        if action < 0.35:
            for m in receive(storage, now, rng.randint(1, 16), visible_at=now + rng.randint(1, 20_000)):
                held[m.message_id] = m
        elif held and action < 0.6:
            m = held.pop(rng.choice(sorted(held)))
            store.change_visibility(m.ref, m.version, now, now + rng.choice([0, 1, 500, 30_000]))  # type: ignore[attr-defined]
        elif held and action < 0.8:
            chosen = [held.pop(i) for i in rng.sample(sorted(held), rng.randint(1, len(held)))]
            done = store.delete_many([(m.ref, m.version) for m in chosen], now)  # type: ignore[attr-defined]
            gone.update(m.message_id for m, ok in zip(chosen, done, strict=True) if ok)  # type: ignore[attr-defined]
        elif held and action < 0.9:
            m = held.pop(rng.choice(sorted(held)))
            store.delete_keeping([(m.ref, m.version)], now)  # type: ignore[attr-defined]
        else:
            store.rewind("q1", NOW, now)
            held.clear()
        _check_invariant(client, now)
    # Every message not deleted comes back: kept ones by a rewind, the others once receivable.
    store.rewind("q1", NOW, now + 1)
    _check_invariant(client, now + 1)
    found = {m.message_id for m in receive(storage, now + 10**6, 16)}
    for _ in range(10):
        found |= {m.message_id for m in receive(storage, now + 10**6, 16)}
    assert found == sent - gone
