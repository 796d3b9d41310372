"""The DynamoDB engine's FIFO packs (`mnsd.storage.dynamodb.fifo.group_packs`): what a group's batch stores, the
invariants that keep it safe (an entry's position is its pack's plus its index; the group item's count and hold are
its messages'), the same answers as the SQLite engine over random operations, and tables written with packs off
read with them on and back."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.model.messages import Message, MessageRef, MessageState
from mnsd.model.queues import QueueCounts
from mnsd.storage import Storage
from mnsd.storage.dynamodb import dynamodb_storage
from mnsd.storage.dynamodb.fifo.directory import GroupState
from mnsd.storage.dynamodb.items.layout import Item, is_kept, message_of, state_of
from mnsd.storage.dynamodb.items.packs import entries, entry_of, is_pack
from mnsd.storage.sqlite import sqlite_storage
from tests.support.fifo_packs import batch, counts, delete, ids, offered, take
from tests.support.fifo_stored import NOW
from tests.support.packs import items
from tests.support.simulator.dynamodb import SimulatedDynamoDB


@pytest.fixture
def client():
    """The in-memory DynamoDB double (serialized, as moto's calls are), its tables made."""
    made = SerializedClient(SimulatedDynamoDB())
    create_tables(made, Settings())
    return made


def engine(client, packed: bool = True) -> Storage:
    return dynamodb_storage(client, Settings(packed_batches=packed))


def leases(client) -> list[Item]:
    """The lease items of queue q1's groups, packs as they are stored."""
    return [i for i in items(client) if "#G" in i["pk"]["S"] and i["sk"]["S"].startswith("L")]


def test_a_groups_batch_is_one_body_item_and_one_pack_at_its_first_position(client):
    sent = batch(engine(client), *"a" * 16)
    assert len({entry_of(m.message_id).pack for m in sent}) == 1  # type: ignore[union-attr]
    stored = [i for i in items(client) if "#G" in i["pk"]["S"]]
    assert sorted(i["sk"]["S"][0] for i in stored) == ["#", "B", "L"]  # its home, its body item, its pack
    (pack,) = leases(client)
    assert MessageRef.from_key("q1", pack["sk"]["S"]).position == sent[0].position
    assert [e["sk"]["S"] for e in entries(pack)] == [m.ref.key for m in sent]
    (group,) = [GroupState.of(i) for i in items(client) if i["sk"]["S"] == "Ga"]
    assert (group.stored, int(group.item["n"]["N"])) == (16, sent[-1].position)


def test_a_batch_across_groups_is_a_pack_for_each_groups_run(client):
    sent = batch(engine(client), *"abc" * 5, "d")
    assert len(leases(client)) == 4  # a pack each for a, b, c; d's single message its own lease
    assert entry_of([m for m in sent if m.message_group_id == "d"][0].message_id) is None


def test_single_sends_and_packs_off_keep_one_lease_per_message(client):
    batch(engine(client), "a")
    batch(engine(client, packed=False), *"a" * 16)
    assert len(leases(client)) == 17 and not any(is_pack(i) for i in leases(client))


def test_tables_read_the_same_whichever_way_batches_were_written(client):
    """Leases written with packs off are read with them on, and packs with them off (a rollback), in one group."""
    sent = batch(engine(client, packed=False), *"a" * 8) + batch(engine(client), *"a" * 8)
    for reader in (engine(client), engine(client, packed=False)):
        assert counts(reader, NOW + 10) == QueueCounts(16, 0, 0)
        assert offered(reader, NOW + 10) == ids(sent)
    first = take(engine(client, packed=False), NOW + 20, 12)
    assert ids(first) == ids(sent[:12]) and all(m.body for m in first)
    assert delete(engine(client), first, NOW + 30) == [True] * 12
    rest = take(engine(client), NOW + 40)
    assert ids(rest) == ids(sent[12:])
    assert delete(engine(client, packed=False), rest, NOW + 50) == [True] * 4
    # The pack emptied by two deletes holds nothing (a scan that meets it deletes it, else TTL does).
    assert [entries(i) for i in leases(client)] == [[]]


def _check_invariants(client, now: int) -> None:
    """Every entry of a pack at its pack's position plus its index; each group item's count the messages it stores
    (not kept, unexpired) and its hold the messages of its run in flight: a message in flight is in the hold at its
    time, and the group is held only by messages in flight."""
    stored: dict[str, list[Item]] = {}
    for item in leases(client):
        found = entries(item) if is_pack(item) else [item]
        if is_pack(item):
            first = MessageRef.from_key("q1", item["sk"]["S"]).position
            for lease in found:
                ref = MessageRef.from_key("q1", lease["sk"]["S"])
                entry = entry_of(ref.message_id)
                assert entry is not None and ref.position == first + entry.index
        stored.setdefault(item["pk"]["S"], []).extend(found)
    for group in (GroupState.of(i) for i in items(client) if i["pk"]["S"].startswith("q1#D")):
        messages = stored.get(group.partition, [])
        live = [m for m in messages if not is_kept(m) and state_of(m, now) is not MessageState.EXPIRED]
        assert group.stored == len(live), (group.name, group.stored, len(live))
        for lease in live:
            m = message_of(lease)
            if state_of(lease, now) is MessageState.INACTIVE and m.dequeue_count:
                assert group.hold.leases.get(m.position) == m.visible_at
        held = {p for p, t in group.hold.leases.items() if t > now}
        assert held <= {message_of(lease).position for lease in live}


class _Twin:
    """The same operations on the packed DynamoDB engine and on SQLite, each message known by its label (its place
    in the sends)."""

    def __init__(self, client, tmp_path) -> None:
        self.engines = [engine(client), sqlite_storage(tmp_path / "data")]
        self.labels: list[dict[str, int]] = [{}, {}]
        self.held: dict[int, list[Message]] = {}  # by label: each engine's message as its receive claimed it
        self.sent = 0

    def send(self, count: int, now: int) -> None:
        for n, storage in enumerate(self.engines):
            for k, m in enumerate(batch(storage, *"a" * count, at=now)):
                self.labels[n][m.message_id] = self.sent + k
        self.sent += count

    def named(self, n: int, messages: list[Message]) -> list[int]:
        return [self.labels[n][m.message_id] for m in messages]

    def take(self, now: int, count: int, visible_at: int) -> None:
        claimed = [take(storage, now, count, visible_at) for storage in self.engines]
        labels = self.same(lambda n, _: self.named(n, claimed[n]))
        for k, label in enumerate(labels):
            self.held[label] = [claimed[0][k], claimed[1][k]]

    def handles(self, n: int, labels: list[int]) -> list[tuple[MessageRef, int]]:
        return [(self.held[label][n].ref, self.held[label][n].version) for label in labels]

    def same(self, act: Callable[[int, Storage], Any]) -> Any:
        """What `act` gives on each engine (given its number and storage): the same, or the test fails."""
        found = [act(n, storage) for n, storage in enumerate(self.engines)]
        assert found[0] == found[1], found
        return found[0]


def _step(twin: _Twin, rng: random.Random, now: int) -> None:
    """One random operation on both engines, then what they offer and count compared."""
    action = rng.random()
    if action < 0.25:
        twin.send(rng.choice([1, rng.randint(2, 16), 16]), now)
    elif action < 0.5:
        twin.take(now, rng.randint(1, 20), now + rng.randint(1, 20_000))
    elif twin.held and action < 0.65:
        label = rng.choice(sorted(twin.held))
        later = now + rng.choice([0, 1, 500, 30_000])
        twin.same(lambda n, s: s.fifo_messages.change_visibility(*twin.handles(n, [label])[0], now, later))
        twin.held.pop(label)
    elif twin.held and action < 0.85:
        chosen = rng.sample(sorted(twin.held), rng.randint(1, len(twin.held)))
        twin.same(lambda n, s: s.fifo_messages.delete_many(twin.handles(n, chosen), now))
        for label in chosen:
            twin.held.pop(label)
    elif twin.held and action < 0.93:
        label = rng.choice(sorted(twin.held))
        twin.same(lambda n, s: s.fifo_messages.delete_keeping(twin.handles(n, [label]), now))
        twin.held.pop(label)
    else:
        twin.same(lambda n, s: s.fifo_messages.rewind("q1", NOW, now))
        twin.held.clear()
    twin.same(lambda n, s: twin.named(n, s.fifo_messages.peek_ready("q1", now, 100)))
    twin.same(lambda n, s: counts(s, now))


@pytest.mark.parametrize("seed", range(5))
def test_packed_fifo_answers_as_sqlite_over_random_operations(client, tmp_path, seed):
    """Random batch sends (packs of 2 to 16, single messages) of one group, receives (part of a run, or more than a
    pack), give-backs, visibility changes both ways, deletes, deletes kept and rewinds: after each, both engines
    give the same answers, offer and count the same, and the invariants of the packed layout hold."""
    rng = random.Random(seed)
    twin = _Twin(client, tmp_path)
    now = NOW
    for _ in range(70):
        now += rng.randint(1, 3000)
        _step(twin, rng, now)
        _check_invariants(client, now)
    assert any(is_pack(i) for i in leases(client))
