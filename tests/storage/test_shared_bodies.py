"""The DynamoDB engine's rules for a receiver's copy sharing its original's body items
(`mnsd.storage.dynamodb.items.shared_bodies`): only where the body item outlives the copy and where naming it costs less
than writing the copy's own; a batch's body item in its stripe's body partition (`layout.body_partition`); and
copies and batches written before (body items of their own, beside their packs), read as ever."""

from __future__ import annotations

import base64
import dataclasses
import os

import pytest

from mnsd.model.kinds import STANDARD
from mnsd.model.messages import Content, Message, Property, body_md5
from mnsd.storage import Storage
from mnsd.storage.capacity import item_size
from mnsd.storage.dynamodb.items.layout import BODY, SOURCE_ATTRIBUTE, STRIPE_SEPARATOR, message_items, queue_id_of
from mnsd.storage.dynamodb.items.packs import items_of
from tests.storage.engines import engine
from tests.support.stored import NOW, RETENTION


@pytest.fixture(params=["dynamodb-fake-packed", "dynamodb-moto-packed"])
def storage(request, tmp_path):
    yield from engine(request, tmp_path)


def text(size: int) -> str:
    return base64.b64encode(os.urandom(size)).decode()[:size]


def sent(storage: Storage, texts: list[str], properties: tuple[Property, ...] = ()) -> list[Message]:
    """A send of `texts` to q1 (a batch when several), not yet stored."""
    ids = storage.messages.new_ids("q1", len(texts), NOW)
    return [
        Message.enqueued("q1", id_, NOW, NOW, NOW // 1000 + RETENTION, Content(body_md5(t), t, 8, properties))
        for id_, t in zip(ids, texts, strict=True)
    ]


def copies(storage: Storage, originals: list[Message], queue_id: str = "r1") -> list[Message]:
    ids = storage.messages.new_ids(queue_id, len(originals), NOW)
    return [STANDARD.copied(m, queue_id, id_) for m, id_ in zip(originals, ids, strict=True)]


def items(storage: Storage) -> list[dict]:
    store = storage.messages
    return store.client.scan(TableName=store.table)["Items"]  # (a few items)


def body_partitions(storage: Storage) -> list[str]:
    return sorted(i["pk"]["S"] for i in items(storage) if i["sk"]["S"].startswith(BODY))


def body_queues(storage: Storage) -> list[str]:
    """The queues whose partitions hold body items."""
    return sorted({queue_id_of(partition) for partition in body_partitions(storage)})


def as_written_before(items: list[dict]) -> list[dict]:
    """Items as the engine wrote them before batch bodies moved to their stripe's body partition and before copies
    named their original's: every body item beside its lease, no `c`."""
    before = []
    for item in items:
        item = {name: value for name, value in item.items() if name != SOURCE_ATTRIBUTE}
        queue_id, _, rest = item["pk"]["S"].partition(STRIPE_SEPARATOR)
        if rest.startswith(BODY):  # {queue}#B{stripe}: the stripe's own partition ({queue} for stripe 0)
            stripe = int(rest[len(BODY) :])
            item["pk"] = {"S": queue_id if stripe == 0 else f"{queue_id}{STRIPE_SEPARATOR}{stripe}"}
        before.append(item)
    return before


def read_back(storage: Storage, queue_id: str) -> list[tuple[str | None, tuple[Property, ...]]]:
    scan = storage.messages.scan_ready(queue_id, NOW + 10, 16)
    claimed = scan.claim(scan.messages, 16, NOW + 10, NOW + 60_000)
    storage.messages.load_bodies(claimed)
    return sorted((m.body, m.user_properties) for m in claimed)


@pytest.mark.parametrize("count", [1, 16])
def test_a_copy_that_would_outlive_the_body_item_writes_its_own(storage, count):
    originals = sent(storage, [text(3000) for _ in range(count)])
    later = [dataclasses.replace(c, expires_at=c.expires_at + 1) for c in copies(storage, originals)]
    assert storage.messages.put(originals + later) == set()
    assert body_queues(storage) == ["q1", "r1"]
    # (a batch's body item in its stripe's body partition, a single message's beside its lease)
    assert body_partitions(storage) == (["q1", "r1"] if count == 1 else ["q1#B0", "r1#B0"])
    assert read_back(storage, "r1") == sorted((m.body, m.user_properties) for m in originals)


def _padding(length: int) -> tuple[Property, ...]:
    return (Property("pad", "p" * length, "STRING"),)


def _lease_size_crossing(storage: Storage) -> tuple[Property, ...]:
    """Properties that leave a copy's lease under 1 KB, and over it with the name of its original's body item."""
    for length in range(600, 1000):
        (original,) = sent(storage, [text(3000)], _padding(length))
        (copy,) = copies(storage, [original])
        lease = message_items(copy)[-1]
        named = {**lease, SOURCE_ATTRIBUTE: {"S": f"q1 {original.message_id}"}}
        if item_size(lease) <= 1024 < item_size(named):
            return _padding(length)
    raise AssertionError("no padding crosses 1 KB")


@pytest.mark.parametrize(("size", "shared"), [(1500, False), (20_000, True)])
def test_a_copy_names_the_body_item_only_where_that_costs_less(storage, size, shared):
    # the copy's lease grows by a unit, written about three times (`LEASE_WRITES`): more than a 1.5 KB body item
    # costs, less than a 20 KB one
    properties = _lease_size_crossing(storage)
    (original,) = sent(storage, [text(size)], properties)
    (copy,) = copies(storage, [original])
    assert storage.messages.put([original, copy]) == set()
    assert body_queues(storage) == (["q1"] if shared else ["q1", "r1"])
    assert read_back(storage, "r1") == [(original.body, properties)]


@pytest.mark.parametrize("size", [1024, 3000, 40_000])
def test_copies_written_before_with_their_own_body_items_read_as_ever(storage, size):
    originals = sent(storage, [text(size) for _ in range(16)])
    replicas = copies(storage, originals)
    store = storage.messages
    indexing = {"q1": False, "r1": False}
    before = as_written_before(items_of(originals + replicas, indexing))
    assert store.items.put(before, lambda queue_id: None) == set()
    assert all(SOURCE_ATTRIBUTE not in i for i in items(storage))
    assert body_queues(storage) == ["q1", "r1"] and not any(STRIPE_SEPARATOR in p for p in body_partitions(storage))
    expected = sorted((m.body, m.user_properties) for m in originals)
    assert read_back(storage, "r1") == read_back(storage, "q1") == expected
