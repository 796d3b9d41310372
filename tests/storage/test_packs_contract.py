"""The storage contract of a batch send's messages, on every engine and on the DynamoDB engine storing batches packed
(`mnsd.storage.dynamodb.items.packs`: one lease item for the batch): each message of a batch keeps its own visibility,
version, count and owner whatever happens to its siblings."""

from __future__ import annotations

import threading

import pytest

from mnsd.model.messages import Message
from mnsd.model.queues import QueueCounts
from tests.storage.engines import ENGINES, PACKED_ENGINES, end_lifetimes, engine, racing_owners
from tests.support.packs import VISIBLE, batch, counts, receive
from tests.support.stored import NOW, RETENTION


@pytest.fixture(params=ENGINES + PACKED_ENGINES)
def storage(request, tmp_path):
    yield from engine(request, tmp_path)


def test_a_batch_is_read_whole_each_message_with_its_own_body_and_properties(storage):
    sent = batch(storage)
    seen = storage.messages.peek_ready("q1", NOW + 10, 100)
    storage.messages.load_bodies(seen)
    assert sorted((m.message_id, m.body, m.body_md5, m.user_properties) for m in seen) == sorted(
        (m.message_id, m.body, m.body_md5, m.user_properties) for m in sent
    )
    assert counts(storage, NOW + 10) == QueueCounts(16, 0, 0)


def test_a_peek_of_batches_gives_at_most_what_it_asked_for(storage):
    batch(storage)
    batch(storage)
    assert len(storage.messages.peek_ready("q1", NOW + 10, 3)) == 3


def test_a_receive_takes_part_of_a_batch_and_the_rest_stays_receivable(storage):
    sent = batch(storage)
    first = receive(storage, NOW + 10, 5)
    assert len(first) == 5 and all(m.dequeue_count == 1 and m.visible_at == VISIBLE for m in first)
    assert {m.body for m in first} <= {m.body for m in sent}
    assert counts(storage, NOW + 20) == QueueCounts(11, 5, 0)
    rest = receive(storage, NOW + 20, 16)
    assert sorted(m.message_id for m in first + rest) == sorted(m.message_id for m in sent)
    assert counts(storage, NOW + 30) == QueueCounts(0, 16, 0)


def test_sixteen_consumers_on_one_batch_each_message_has_one_owner(storage):
    sent = batch(storage)
    owners = racing_owners(storage, "q1", 16, 1, NOW + 100, VISIBLE, one_per_scan=True)
    assert sorted(owners) == sorted(m.message_id for m in sent)
    assert all(len(workers) == 1 for workers in owners.values()), owners
    assert counts(storage, NOW + 100) == QueueCounts(0, 16, 0)


def test_racing_batch_receives_each_message_has_one_owner(storage):
    sent = batch(storage) + batch(storage) + batch(storage)
    owners: dict[str, int] = {}
    twice: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def consume(worker: int) -> None:
        start.wait()
        for _ in range(30):
            if len(owners) == len(sent):
                return
            for claimed in receive(storage, NOW + 100, 4):
                with lock:
                    if claimed.message_id in owners:
                        twice.append(claimed.message_id)
                    owners[claimed.message_id] = worker

    threads = [threading.Thread(target=consume, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not twice
    assert sorted(owners) == sorted(m.message_id for m in sent)


def test_a_message_given_back_dead_lettered_kept_rewound_and_deleted_while_its_siblings_are_in_flight(storage):
    sent = batch(storage)
    held = {m.message_id: m for m in receive(storage, NOW + 10)}
    assert len(held) == 16
    given, moved, kept, deleted = (held[m.message_id] for m in sent[:4])
    # Given back: receivable again at once, alone.
    assert storage.messages.change_visibility(given.ref, given.version, NOW + 20, NOW + 20)
    assert counts(storage, NOW + 20) == QueueCounts(1, 15, 0)
    (again,) = receive(storage, NOW + 20)
    assert (again.message_id, again.dequeue_count, again.body) == (given.message_id, 2, given.body)
    # Given back, then dead-lettered from the receive (a move of an Active message).
    assert storage.messages.change_visibility(moved.ref, moved.version, NOW + 30, NOW + 30)
    (seen,) = storage.messages.peek_ready("q1", NOW + 31, 10)
    storage.messages.load_bodies([seen])
    target = seen.moved("dlq", storage.messages.new_ids("dlq", 1, NOW + 31)[0], NOW + 31, (), False)
    assert storage.messages.move(seen, NOW + 31, target)
    assert [m.message_id for m in storage.messages.peek_ready("dlq", NOW + 32, 10)] == [target.message_id]
    # Deleted with rewind on (kept), deleted outright.
    assert storage.messages.delete_keeping([(kept.ref, kept.version)], NOW + 40) == [True]
    assert storage.messages.delete_many([(deleted.ref, deleted.version)], NOW + 40) == [True]
    assert storage.messages.delete_many([(deleted.ref, deleted.version)], NOW + 41) == [False]
    assert counts(storage, NOW + 50) == QueueCounts(0, 13, 0)  # 16 less the moved, kept and deleted ones
    # A rewind makes the kept one and those in flight receivable, with new versions (old handles spent).
    assert storage.messages.rewind("q1", NOW, NOW + 60) == 14
    assert counts(storage, NOW + 60) == QueueCounts(14, 0, 0)
    rest = held[sent[5].message_id]
    assert storage.messages.delete_many([(rest.ref, rest.version)], NOW + 61) == [False]
    back = receive(storage, NOW + 70)
    assert sorted(m.message_id for m in back) == sorted(
        m.message_id for m in sent if m.message_id not in (moved.message_id, deleted.message_id)
    )
    assert storage.messages.delete_many([(m.ref, m.version) for m in back], NOW + 80) == [True] * 14
    assert counts(storage, NOW + 80) == QueueCounts(0, 0, 0)
    assert storage.messages.peek_ready("q1", VISIBLE + 10**6, 100) == []


def test_a_batch_claim_whose_answer_was_lost_leaves_the_rest_receivable(storage):
    """A receive that claimed part of a batch and died before answering: what it claimed stays hidden until its
    visibility ends, then comes back counted; its siblings are receivable meanwhile."""
    sent = batch(storage)
    scan = storage.messages.scan_ready("q1", NOW + 10, 6)
    lost = scan.claim(scan.messages, 6, NOW + 10, NOW + 30_000)  # written; the answer never reaches the client
    assert len(lost) == 6
    assert counts(storage, NOW + 20) == QueueCounts(10, 6, 0)
    others = receive(storage, NOW + 20)
    assert {m.message_id for m in others} == {m.message_id for m in sent} - {m.message_id for m in lost}
    back = receive(storage, NOW + 30_000)
    assert sorted(m.message_id for m in back) == sorted(m.message_id for m in lost)
    assert all(m.dequeue_count == 2 for m in back)


def test_a_batch_handle_deletes_only_its_message_while_the_lease_is_held(storage):
    batch(storage, 4)
    held = receive(storage, NOW + 10)
    assert len(held) == 4
    # Deleting all four at once; one handle stale (its message re-timed since): the other three go.
    retimed = held[1]
    assert storage.messages.change_visibility(retimed.ref, retimed.version, NOW + 20, NOW + 90_000)
    outcomes = storage.messages.delete_many([(m.ref, m.version) for m in held], NOW + 30)
    assert outcomes == [True, False, True, True]
    assert counts(storage, NOW + 30) == QueueCounts(0, 1, 0)
    (back,) = receive(storage, NOW + 90_000, visible_at=NOW + 200_000)
    assert (back.message_id, back.dequeue_count) == (retimed.message_id, 2)
    assert counts(storage, NOW + 90_001) == QueueCounts(0, 1, 0)


def test_a_receivers_copy_reads_each_message_of_a_batch_once_bodies_loaded(storage):
    sent = batch(storage) + batch(storage, 3)
    receive(storage, NOW + 10, 5)
    found: list[Message] = []
    cursor = None
    for _ in range(50):
        page, cursor = storage.messages.enqueued_since("q1", NOW, NOW + 1, NOW + 20, cursor, 10)
        found += page
        if cursor is None:
            break
    assert sorted((m.message_id, m.body, m.user_properties) for m in found) == sorted(
        (m.message_id, m.body, m.user_properties) for m in sent
    )


def test_retention_ends_a_batch_whatever_its_messages_states(storage):
    batch(storage)
    end = (NOW // 1000 + RETENTION) * 1000
    receive(storage, NOW + 10, 3, visible_at=end + 10**6)
    assert counts(storage, end - 1000) == QueueCounts(13, 3, 0)
    assert storage.messages.peek_ready("q1", end, 100) == []
    assert counts(storage, end) == QueueCounts(0, 0, 0)
    end_lifetimes(storage, end)
    assert storage.messages.peek_ready("q1", end + 1, 100) == []
    assert counts(storage, end + 1) == QueueCounts(0, 0, 0)
