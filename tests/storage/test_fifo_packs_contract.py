"""The storage contract of a FIFO batch send's messages, on every engine and on the DynamoDB engine storing batches
packed (`mnsd.storage.dynamodb.fifo.group_packs`: a group's run of a batch in one lease item): each message keeps its own
owner, visibility, count and place in its group whatever happens to its siblings, and its group's rules hold (one run
in flight at a time, received in send order)."""

from __future__ import annotations

import threading

import pytest

from mnsd.model.queues import QueueCounts
from tests.storage.engines import ENGINES, PACKED_ENGINES, end_lifetimes, engine
from tests.support.faults import LOST, Faults
from tests.support.fifo_packs import batch, counts, delete, ids, offered, take
from tests.support.fifo_stored import NOW, RETENTION, VISIBLE


@pytest.fixture(params=ENGINES + PACKED_ENGINES)
def storage(request, tmp_path):
    yield from engine(request, tmp_path)


def test_a_groups_batch_is_read_in_send_order_each_message_with_its_own_body_and_properties(storage):
    sent = batch(storage, *"a" * 16)
    seen = storage.fifo_messages.peek_ready("q1", NOW + 10, 100)
    storage.fifo_messages.load_bodies(seen)
    assert [(m.message_id, m.body, m.body_md5, m.user_properties, m.message_group_id) for m in seen] == [
        (m.message_id, m.body, m.body_md5, m.user_properties, "a") for m in sent
    ]
    assert [m.position for m in seen] == [sent[0].position + n for n in range(16)]
    assert counts(storage, NOW + 10) == QueueCounts(16, 0, 0)


def test_batches_and_single_sends_of_a_group_keep_their_send_order(storage):
    sent = batch(storage, *"a" * 5) + batch(storage, "a") + batch(storage, *"a" * 4)
    assert offered(storage, NOW + 10) == ids(sent)
    first = take(storage, NOW + 10, 7)  # a run across a pack, a single lease and the head of another pack
    assert ids(first) == ids(sent[:7])
    assert offered(storage, NOW + 20) == []  # held while its run is in flight
    assert delete(storage, first, NOW + 30) == [True] * 7
    assert ids(take(storage, NOW + 40)) == ids(sent[7:])


def test_a_receive_takes_the_head_of_a_batch_and_the_group_waits_for_its_delete(storage):
    sent = batch(storage, *"a" * 16)
    head = take(storage, NOW + 10, 5)
    assert ids(head) == ids(sent[:5]) and all(m.dequeue_count == 1 and m.visible_at == VISIBLE for m in head)
    assert counts(storage, NOW + 20) == QueueCounts(11, 5, 0)
    assert take(storage, NOW + 20) == []  # one run in flight at a time
    assert delete(storage, head, NOW + 30) == [True] * 5
    rest = take(storage, NOW + 40)
    assert ids(rest) == ids(sent[5:]) and [m.body for m in rest] == [m.body for m in sent[5:]]
    assert delete(storage, rest, NOW + 50) == [True] * 11
    assert counts(storage, NOW + 60) == QueueCounts(0, 0, 0)
    assert offered(storage, VISIBLE + 10**6) == []


def test_a_batch_across_groups_keeps_each_groups_order_and_holds_each_group(storage):
    sent = batch(storage, *"abc" * 5)
    claimed = take(storage, NOW + 10, 16)
    for group in "abc":
        assert ids([m for m in claimed if m.message_group_id == group]) == ids(
            [m for m in sent if m.message_group_id == group]
        )
    assert sorted(storage.fifo_messages.held_groups("q1", NOW + 20, 10)) == ["a", "b", "c"]
    assert delete(storage, claimed, NOW + 30) == [True] * 15
    assert counts(storage, NOW + 30) == QueueCounts(0, 0, 0)


def test_consumers_racing_on_a_groups_batch_each_take_a_message_once_in_order(storage):
    sent = batch(storage, *"a" * 16)
    consumed: list[str] = []
    deleted: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def consume() -> None:
        start.wait()
        for step in range(200):
            if len(consumed) >= len(sent):
                return
            now = NOW + 100 + step
            scan = storage.fifo_messages.scan_ready("q1", now, 2)
            claimed = scan.claim(scan.messages, 2, now, VISIBLE)
            with lock:
                consumed.extend(ids(claimed))  # (the group is held until these are deleted)
            deleted.extend(delete(storage, claimed, now))

    threads = [threading.Thread(target=consume) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert consumed == ids(sent) and deleted == [True] * 16


def test_a_message_given_back_kept_rewound_dead_lettered_and_deleted_while_its_siblings_are_in_flight(storage):
    sent = batch(storage, *"a" * 16)
    held = {m.message_id: m for m in take(storage, NOW + 10)}
    given, kept, deleted = (held[m.message_id] for m in (sent[0], sent[2], sent[3]))
    # Given back: receivable again, alone; its group stays held while its siblings are in flight.
    assert storage.fifo_messages.change_visibility(given.ref, given.version, NOW + 20, NOW + 20)
    assert counts(storage, NOW + 20) == QueueCounts(1, 15, 0)
    assert offered(storage, NOW + 21) == []
    # Deleted with rewind on (kept), deleted outright; a spent handle deletes nothing.
    assert storage.fifo_messages.delete_keeping([(kept.ref, kept.version)], NOW + 30) == [True]
    assert delete(storage, [deleted], NOW + 30) == [True]
    assert delete(storage, [deleted], NOW + 31) == [False]
    assert counts(storage, NOW + 40) == QueueCounts(1, 13, 0)
    # A rewind brings the kept one back and makes those in flight receivable, with new versions.
    assert storage.fifo_messages.rewind("q1", NOW, NOW + 50) == 14
    assert counts(storage, NOW + 50) == QueueCounts(15, 0, 0)
    assert delete(storage, [held[sent[5].message_id]], NOW + 51) == [False]
    back = [m for m in sent if m is not sent[3]]
    assert offered(storage, NOW + 60) == ids(back)
    # The head dead-lettered (a move of an Active message): the next one is its group's head.
    head = storage.fifo_messages.scan_ready("q1", NOW + 60, 1).messages[0]
    storage.fifo_messages.load_bodies([head])
    assert (head.message_id, head.dequeue_count) == (given.message_id, 1)
    target = head.moved("dlq", storage.messages.new_ids("dlq", 1, NOW + 60)[0], NOW + 60, (), False)
    assert storage.fifo_messages.move(head, NOW + 60, target)
    rest = take(storage, NOW + 70)
    assert ids(rest) == ids(back[1:]) and all(m.dequeue_count == 2 for m in rest)
    assert delete(storage, rest, NOW + 80) == [True] * 14
    assert counts(storage, NOW + 80) == QueueCounts(0, 0, 0)
    assert offered(storage, VISIBLE + 10**6) == []


def test_a_claim_whose_answer_was_lost_holds_its_group_until_its_visibility_ends(storage):
    """A receive that claimed the head of a batch and died before answering: what it claimed stays hidden (and
    its group held) until its visibility ends, then comes back first, counted."""
    sent = batch(storage, *"a" * 16)
    scan = storage.fifo_messages.scan_ready("q1", NOW + 10, 6)
    lost = scan.claim(scan.messages, 6, NOW + 10, NOW + 30_000)  # written; the answer never reaches the client
    assert ids(lost) == ids(sent[:6])
    assert counts(storage, NOW + 20) == QueueCounts(10, 6, 0)
    assert take(storage, NOW + 20) == []
    back = take(storage, NOW + 30_000)
    assert ids(back) == ids(sent)
    assert [m.dequeue_count for m in back] == [2] * 6 + [1] * 10


def test_a_batch_handle_deletes_only_its_message_while_the_lease_is_held(storage):
    batch(storage, *"a" * 4)
    held = take(storage, NOW + 10)
    assert len(held) == 4
    retimed = held[1]  # re-timed since: its old handle is spent, and it holds the group longer
    assert storage.fifo_messages.change_visibility(retimed.ref, retimed.version, NOW + 20, NOW + 90_000)
    assert delete(storage, held, NOW + 30) == [True, False, True, True]
    assert counts(storage, NOW + 30) == QueueCounts(0, 1, 0)
    assert offered(storage, NOW + 89_999) == []
    (back,) = take(storage, NOW + 90_000, visible_at=NOW + 200_000)
    assert (back.message_id, back.dequeue_count) == (retimed.message_id, 2)


def test_turning_rewind_off_drops_the_kept_messages_of_a_batch(storage):
    sent = batch(storage, *"a" * 3)
    run = take(storage, NOW + 10, 2)
    assert storage.fifo_messages.delete_keeping([(m.ref, m.version) for m in run], NOW + 20) == [True, True]
    assert offered(storage, NOW + 30) == ids(sent[2:])
    assert storage.fifo_messages.drop_kept("q1", NOW + 30) == 2
    assert storage.fifo_messages.rewind("q1", NOW, NOW + 40) == 0
    assert offered(storage, NOW + 50) == ids(sent[2:])


def test_retention_ends_a_batch_whatever_its_messages_states(storage):
    batch(storage, *"a" * 16)
    end = (NOW // 1000 + RETENTION) * 1000
    take(storage, NOW + 10, 3, visible_at=end - 500)
    assert counts(storage, end - 1000) == QueueCounts(13, 3, 0)
    later = batch(storage, "a", at=NOW + 5000)  # a later send outlives the batch: expired ones hold nothing back
    assert offered(storage, end) == ids(later)
    assert counts(storage, end) == QueueCounts(1, 0, 0)
    end_lifetimes(storage, end)
    assert ids(take(storage, end + 1, visible_at=end + 10**6)) == ids(later)
    assert counts(storage, end + 1) == QueueCounts(0, 1, 0)


@pytest.mark.parametrize("storage", ["dynamodb-moto", "dynamodb-moto-packed"], indirect=True)
def test_a_claim_applied_whose_answer_never_came_back_holds_its_run_until_its_visibility_ends(storage):
    """The claim's transaction applied, then its answer lost (a read timeout: `tests.support.faults`) and tried again
    (`retries`): the retry finds the group claimed and the receive gets nothing (on DynamoDB its ClientRequestToken may
    answer it as done: the run). Either way the run stays hidden, its group gives nothing, and the run comes back,
    counted, once its visibility ends; nothing is claimed twice."""
    sent = batch(storage, *"a" * 16)
    faults = Faults(rate=1.0, kinds=(LOST,), operations=frozenset({"TransactWriteItems"}), most=1)
    faults.install(storage.fifo_messages.client)
    scan = storage.fifo_messages.scan_ready("q1", NOW + 10, 6)
    got = scan.claim(scan.messages, 6, NOW + 10, NOW + 30_000)
    assert faults.counts[LOST] == 1 and ids(got) in ([], ids(sent[:6]))
    assert counts(storage, NOW + 20) == QueueCounts(10, 6, 0)
    assert take(storage, NOW + 20) == []
    back = take(storage, NOW + 30_000)
    assert ids(back) == ids(sent) and [m.dequeue_count for m in back] == [2] * 6 + [1] * 10
