"""The storage contract of dead-letter moves and rewind, on every engine (DynamoDB on moto, SQLite)."""

from __future__ import annotations

import dataclasses
import threading

from mnsd.model.messages import Message, Property
from mnsd.model.queues import QueueCounts
from mnsd.storage import Storage
from tests.storage.engines import claim_one
from tests.support.stored import NOW, message, ready_ids


def dead_letter(source: Message, n: int, queue_id: str = "dlq") -> Message:
    """`source` as a new message of `queue_id` (what the service builds for a move)."""
    return dataclasses.replace(
        source,
        queue_id=queue_id,
        message_id=f"D{n:05d}",
        position=NOW + 100,
        visible_at=NOW + 100,
        version=0,
        dequeue_count=0,
        enqueue_time=NOW + 100,
        first_dequeue_time=NOW + 100,
        system_properties=(Property("DLQOriginMessageId", source.message_id, "STRING"),),
    )


def loaded(storage: Storage, queue_id: str, now: int, wanted: int = 10) -> list[Message]:
    """The ready messages whole (a scan may leave bodies and properties to `load_bodies`)."""
    found = storage.messages.peek_ready(queue_id, now, wanted)
    storage.messages.load_bodies(found)
    return found


def claimed(storage: Storage, now: int, visible_at: int) -> list[Message]:
    scan = storage.messages.scan_ready("q1", now, 100)
    return scan.claim(scan.messages, 100, now, visible_at)


# --- moves --------------------------------------------------------------------------------------


def test_a_move_removes_the_source_and_stores_the_target_with_body_and_properties(storage):
    big = "x" * 3000 + "".join(chr(0x4E00 + i) for i in range(500))  # stored out of line on DynamoDB
    original = message(1, body=big)
    original.user_properties = (Property("k", "v", "STRING"),)
    storage.messages.put([original, message(2)])
    seen = storage.messages.peek_ready("q1", NOW + 100, 10)
    storage.messages.load_bodies(seen)
    first = next(m for m in seen if m.message_id == "M00001")
    assert storage.messages.move(first, NOW + 100, dead_letter(first, 1))
    assert ready_ids(storage, NOW + 100) == ["M00002"]
    (moved,) = loaded(storage, "dlq", NOW + 100)
    assert (moved.message_id, moved.body, moved.body_md5) == ("D00001", big, original.body_md5)
    assert moved.user_properties == (Property("k", "v", "STRING"),)
    assert moved.system_properties == (Property("DLQOriginMessageId", "M00001", "STRING"),)
    assert moved.expires_at == original.expires_at  # retention not reset
    assert storage.messages.counts("q1", NOW + 100) == QueueCounts(1, 0, 0)
    assert storage.messages.counts("dlq", NOW + 100) == QueueCounts(1, 0, 0)


def test_a_move_of_a_lease_no_longer_as_observed_changes_nothing(storage):
    storage.messages.put([message(1)])
    (seen,) = loaded(storage, "q1", NOW + 10)
    assert claim_one(storage.messages, seen, NOW + 10, NOW + 1000) is not None
    # Stale version (another consumer received it), and an in-flight message: both refused.
    assert not storage.messages.move(seen, NOW + 2000, dead_letter(seen, 1))
    (held,) = loaded(storage, "q1", NOW + 2000)
    assert not storage.messages.move(held, NOW + 500, dead_letter(held, 2))  # hidden at NOW + 500
    assert storage.messages.peek_ready("dlq", NOW + 3000, 10) == []
    assert ready_ids(storage, NOW + 2000) == ["M00001"]


def test_concurrent_moves_of_one_message_store_exactly_one_dead_letter(storage):
    storage.messages.put([message(1)])
    (seen,) = loaded(storage, "q1", NOW + 10)
    start = threading.Barrier(8)
    outcomes: list[bool] = []
    lock = threading.Lock()

    def race(n: int) -> None:
        start.wait()
        moved = storage.messages.move(seen, NOW + 10, dead_letter(seen, n))
        with lock:
            outcomes.append(moved)

    threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == [False] * 7 + [True]
    assert len(storage.messages.peek_ready("dlq", NOW + 100, 100)) == 1
    assert ready_ids(storage, NOW + 100) == []


def test_a_move_racing_a_claim_leaves_the_message_in_exactly_one_place(storage):
    storage.messages.put([message(n) for n in range(1, 21)])
    scan = storage.messages.scan_ready("q1", NOW + 100, 100)
    seen = scan.messages
    storage.messages.load_bodies(seen)
    start = threading.Barrier(2)
    moved: list[str] = []
    taken: list[str] = []

    def mover() -> None:
        start.wait()
        moved.extend(m.message_id for n, m in enumerate(seen) if storage.messages.move(m, NOW + 100, dead_letter(m, n)))

    def claimer() -> None:
        start.wait()
        taken.extend(m.message_id for m in scan.claim(list(reversed(seen)), 20, NOW + 100, NOW + 9000))

    threads = [threading.Thread(target=mover), threading.Thread(target=claimer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(moved + taken) == sorted(m.message_id for m in seen)  # each exactly once
    origins = [m.system_properties[0].value for m in loaded(storage, "dlq", NOW + 100, 100)]
    assert sorted(origins) == sorted(moved)


# --- rewind -------------------------------------------------------------------------------------


def test_a_kept_message_is_neither_ready_nor_counted_and_its_handle_is_spent(storage):
    storage.messages.put([message(1), message(2)])
    one, two = claimed(storage, NOW + 10, NOW + 1000)
    assert storage.messages.delete_keeping([(one.ref, one.version), (two.ref, 0)], NOW + 20) == [True, False]
    assert storage.messages.counts("q1", NOW + 20) == QueueCounts(0, 1, 0)
    assert ready_ids(storage, NOW + 5000) == ["M00002"]  # the kept one never comes back by itself
    assert not storage.messages.delete_many([(one.ref, one.version)], NOW + 30)[0]
    assert storage.messages.delete_keeping([(one.ref, one.version)], NOW + 30) == [False]
    assert not storage.messages.change_visibility(one.ref, one.version, NOW + 30, NOW + 9000)


def test_rewind_makes_kept_and_in_flight_messages_since_t_receivable(storage):
    storage.messages.put([message(n) for n in range(1, 6)])  # enqueued at NOW + n
    leases = claimed(storage, NOW + 10, NOW + 60_000)
    by_id = {m.message_id: m for m in leases}
    kept = [by_id[i] for i in ("M00001", "M00002", "M00004")]
    assert storage.messages.delete_keeping([(m.ref, m.version) for m in kept], NOW + 20) == [True] * 3
    # M00003 and M00005 stay in flight. Rewind to NOW + 2: M00002, M00004 (kept), M00003, M00005 (in flight).
    assert storage.messages.rewind("q1", NOW + 2, NOW + 30) == 4
    assert sorted(ready_ids(storage, NOW + 30)) == ["M00002", "M00003", "M00004", "M00005"]
    assert storage.messages.counts("q1", NOW + 30) == QueueCounts(4, 0, 0)
    # Old receipt handles no longer work: the rewound leases have a new version.
    assert not storage.messages.delete_many([(by_id["M00003"].ref, by_id["M00003"].version)], NOW + 31)[0]
    again = claimed(storage, NOW + 40, NOW + 9000)
    assert sorted(m.message_id for m in again) == ["M00002", "M00003", "M00004", "M00005"]
    assert all(m.dequeue_count == 2 for m in again)
    storage.messages.load_bodies(again)
    assert {m.message_id: m.body for m in again}["M00004"] == "body-4"
    # M00001 (before T) stays kept: a rewind to its time still finds it.
    assert storage.messages.rewind("q1", NOW + 1, NOW + 50) == 5
    assert "M00001" in ready_ids(storage, NOW + 50)


def test_dropping_kept_messages_and_retention_end_them(storage):
    storage.messages.put([message(1), message(2)])
    leases = claimed(storage, NOW + 10, NOW + 1000)
    storage.messages.delete_keeping([(m.ref, m.version) for m in leases], NOW + 20)
    assert storage.messages.drop_kept("q1", NOW + 30) == 2
    assert storage.messages.rewind("q1", NOW, NOW + 40) == 0
    # Kept messages whose retention ended are not rewound.
    storage.messages.put([message(3)])
    (three,) = claimed(storage, NOW + 50, NOW + 1000)
    storage.messages.delete_keeping([(three.ref, three.version)], NOW + 60)
    assert storage.messages.rewind("q1", NOW, (three.expires_at + 1) * 1000) == 0
    assert storage.messages.rewind("q1", NOW, NOW + 70) == 1


def test_rewind_and_drop_stay_within_their_queue(storage):
    storage.messages.put([message(1), message(2, queue_id="q2")])
    for queue_id in ("q1", "q2"):
        scan = storage.messages.scan_ready(queue_id, NOW + 10, 10)
        (lease,) = scan.claim(scan.messages, 1, NOW + 10, NOW + 1000)
        storage.messages.delete_keeping([(lease.ref, lease.version)], NOW + 20)
    assert storage.messages.drop_kept("q2", NOW + 30) == 1
    assert storage.messages.rewind("q1", NOW, NOW + 40) == 1
    assert ready_ids(storage, NOW + 40, queue_id="q2") == []
