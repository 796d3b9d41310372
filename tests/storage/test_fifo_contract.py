"""The storage contract for FIFO messages (FIFO queues): every engine keeps each group's order.

A group is held while any of its messages is in flight; otherwise its run (its Active messages from its head
on) may be claimed, whole or its first part, in one atomic step (`mnsd.model.ports` says it in full). The rules are
`mnsd.model.fifo`'s: each is pinned here on every engine, the two on which the engines once disagreed (a run with
a candidate not Active, a new group's first position) included.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading
from collections import defaultdict
from dataclasses import dataclass, field

import pytest

from mnsd.model import fifo
from mnsd.model.messages import Message
from mnsd.model.queues import QueueCounts
from mnsd.storage import Storage
from tests.storage.engines import ENGINES, claim_one
from tests.support.fifo_stored import NOW, RETENTION, VISIBLE, fifo_message, offer, runs, send, take


def scan(storage: Storage, now: int, wanted: int = 100) -> list[Message]:
    return offer(storage, now, wanted).messages


def test_sequence_numbers_rise_per_group(storage):
    first = storage.fifo_messages.sequence("q1", "g", 3, NOW)
    second = storage.fifo_messages.sequence("q1", "g", 1, NOW)
    other = storage.fifo_messages.sequence("q1", "h", 1, NOW)
    assert second >= first + 3
    assert other >= 0
    assert storage.fifo_messages.sequence("q2", "g", 1, NOW) >= 0  # another queue: its own numbers


def test_a_new_group_numbers_from_the_time_of_its_first_send(storage):
    """`fifo.first_position`: the send's time in ms (DynamoDB once gave that time + 1), then one per message."""
    assert fifo.first_position(NOW) == NOW
    assert storage.fifo_messages.sequence("q1", "g", 3, NOW) == NOW
    assert storage.fifo_messages.sequence("q1", "g", 1, NOW + 5) == NOW + 3  # the counter goes on, whatever the time
    assert storage.fifo_messages.sequence("q1", "h", 2, NOW + 7) == NOW + 7


def test_a_scan_offers_each_group_in_send_order(storage):
    send(storage, "a", "b", "a", "c", "b", "a")
    assert runs(storage, NOW + 10) == {"a": ["M00000", "M00002", "M00005"], "b": ["M00001", "M00004"], "c": ["M00003"]}
    offered = scan(storage, NOW + 10)
    groups = [m.message_group_id for m in offered]
    changes = sum(1 for before, after in itertools.pairwise(groups) if before != after)
    assert changes == len(set(groups)) - 1  # each group's run together


def test_a_group_in_flight_is_held_and_others_are_not(storage):
    send(storage, "a", "a", "b")
    offered = offer(storage, NOW + 10)
    a_head = next(m for m in offered.messages if m.message_group_id == "a")
    assert offered.claim([a_head], 1, NOW + 10, VISIBLE) != []
    assert runs(storage, NOW + 20) == {"b": ["M00002"]}
    assert storage.fifo_messages.held_groups("q1", NOW + 20, 10) == ["a"]


def test_a_claim_must_start_at_the_group_head(storage):
    send(storage, "a", "a", "a")
    offered = offer(storage, NOW + 10)
    first, second, third = offered.messages
    assert offered.claim([second, third], 2, NOW + 10, VISIBLE) == []
    assert offered.claim([third], 1, NOW + 10, VISIBLE) == []
    claimed = offered.claim([first, second, third], 2, NOW + 10, VISIBLE)
    assert [m.message_id for m in claimed] == ["M00000", "M00001"]
    # The run is in flight: its last one cannot be taken on its own, nor can the run again.
    assert offered.claim([third], 1, NOW + 10, VISIBLE) == []
    assert offered.claim([first, second, third], 3, NOW + 10, VISIBLE) == []


def test_a_run_is_claimed_whole_or_not_at_all(storage):
    send(storage, "a", "a", "a")
    offered = offer(storage, NOW + 10)
    first, second, third = offered.messages
    # Another consumer took the head: a run built on the old head is refused, none of it claimed.
    assert claim_one(storage.fifo_messages, first, NOW + 10, VISIBLE) is not None
    assert offered.claim([first, second, third], 3, NOW + 10, VISIBLE) == []
    assert storage.fifo_messages.counts("q1", NOW + 10) == QueueCounts(2, 1, 0)


def test_a_run_with_a_candidate_not_active_is_refused_whole(storage):
    """`fifo.claimable` (SQLite once skipped such a candidate and claimed the others): a candidate given delayed
    refuses its run, unless the run is cut before it (`count`); nothing of a refused run is claimed."""
    send(storage, "a", "a", "a", "b")
    offered = offer(storage, NOW + 10)
    first, second, third, other = sorted(offered.messages, key=lambda m: m.message_id)
    delayed = dataclasses.replace(third, visible_at=NOW + 5000)
    claimed = offered.claim([first, second, delayed, other], 4, NOW + 10, VISIBLE)
    assert [m.message_id for m in claimed] == ["M00003"]
    assert runs(storage, NOW + 20) == {"a": ["M00000", "M00001", "M00002"]}
    claimed = offer(storage, NOW + 20).claim([first, second, delayed], 2, NOW + 20, VISIBLE)
    assert [m.message_id for m in claimed] == ["M00000", "M00001"]


def test_a_run_whose_candidate_expired_since_the_scan_is_refused_whole(storage):
    """An expired message holds nothing back, yet a run built while it was Active is stale: refused whole (SQLite
    once claimed around it); the next scan's run goes past it."""
    first, middle, last = (fifo_message(storage, "a", n) for n in range(3))
    first.expires_at += 100
    last.expires_at += 100
    storage.fifo_messages.put([first, middle, last])
    offered = offer(storage, NOW + 10)
    after = (NOW // 1000 + RETENTION) * 1000 + 10  # `middle` has expired
    assert offered.claim(offered.messages, 3, after, after + 60_000) == []
    assert runs(storage, after) == {"a": ["M00000", "M00002"]}
    claimed = take(storage, after, 3, after + 60_000)
    assert [m.message_id for m in claimed] == ["M00000", "M00002"]


def test_runs_are_claimed_in_the_candidates_order_until_count(storage):
    """`fifo.runs`: one run per group in the order of each group's first candidate, each cut to the room left; a
    refused run takes no room."""
    send(storage, "a", "b", "a", "c", "b")
    offered = offer(storage, NOW + 10)
    by_id = {m.message_id: m for m in offered.messages}
    a_run, b_run, c_run = ([by_id[i] for i in ids] for ids in (["M00000", "M00002"], ["M00001", "M00004"], ["M00003"]))
    stale_b = [b_run[1]]  # not at its group's head: refused
    claimed = offered.claim([*stale_b, c_run[0], a_run[0], a_run[1]], 2, NOW + 10, VISIBLE)
    assert [m.message_id for m in claimed] == ["M00003", "M00000"]
    assert runs(storage, NOW + 20) == {"b": ["M00001", "M00004"]}


def test_a_lapsed_head_comes_back_before_anything_after_it(storage):
    send(storage, "a", "a", "b")
    offered = offer(storage, NOW + 10)
    run = [m for m in offered.messages if m.message_group_id == "a"]
    claimed = offered.claim(run, 1, NOW + 10, NOW + 1000)
    assert [m.message_id for m in claimed] == ["M00000"]
    assert runs(storage, NOW + 999) == {"b": ["M00002"]}
    assert runs(storage, NOW + 1000)["a"] == ["M00000", "M00001"]  # lapsed: the head first again
    offered = offer(storage, NOW + 1000)
    again = [m for m in offered.messages if m.message_group_id == "a"]
    (head,) = offered.claim(again, 1, NOW + 1000, NOW + 2000)
    assert (head.message_id, head.dequeue_count) == ("M00000", 2)
    assert not storage.fifo_messages.delete_many([(claimed[0].ref, claimed[0].version)], NOW + 1500)[
        0
    ]  # the old handle is dead


def test_a_group_stays_held_while_any_of_its_run_is_in_flight(storage):
    send(storage, "a", "a", "a")
    one, two, _ = take(storage, NOW + 10, 3, NOW + 1000)
    # The head made visible again at once, the others still in flight: the group stays held.
    assert storage.fifo_messages.change_visibility(one.ref, one.version, NOW + 20, NOW + 20)
    assert runs(storage, NOW + 30) == {}
    assert storage.fifo_messages.delete_many([(two.ref, two.version)], NOW + 30)[0]
    assert runs(storage, NOW + 40) == {}
    assert runs(storage, NOW + 1000) == {"a": ["M00000", "M00002"]}


def test_deleting_the_run_frees_the_group_at_once(storage):
    send(storage, "a", "a", "a")
    offered = offer(storage, NOW + 10)
    first, second, _ = offered.messages
    run = offered.claim([first, second], 2, NOW + 10, VISIBLE)
    assert storage.fifo_messages.delete_many([(m.ref, m.version) for m in run], NOW + 20) == [True, True]
    assert runs(storage, NOW + 30) == {"a": ["M00002"]}
    assert storage.fifo_messages.held_groups("q1", NOW + 30, 10) == []


def test_a_delayed_head_holds_back_its_group_only(storage):
    head = fifo_message(storage, "a", 0, delay_ms=5000)
    later = fifo_message(storage, "a", 1)
    other = fifo_message(storage, "b", 2)
    storage.fifo_messages.put([head, later, other])
    found = storage.fifo_messages.scan_ready("q1", NOW + 10, 100)
    assert [m.message_id for m in found.messages] == ["M00002"]
    assert runs(storage, NOW + 5000) == {"a": ["M00000", "M00001"], "b": ["M00002"]}
    assert storage.fifo_messages.counts("q1", NOW + 10) == QueueCounts(2, 0, 1)


def test_a_dead_lettered_head_frees_its_group(storage):
    send(storage, "a", "a")
    head, _ = scan(storage, NOW + 10)
    target = fifo_message(storage, "a", 9, queue_id="dlq")
    assert storage.fifo_messages.move(head, NOW + 10, target)
    assert runs(storage, NOW + 20) == {"a": ["M00001"]}
    assert runs(storage, NOW + 20, queue_id="dlq") == {"a": ["M00009"]}


def test_expired_heads_hold_nothing_back(storage):
    send(storage, "a")
    late = fifo_message(storage, "a", 1)
    late.expires_at += 100
    storage.fifo_messages.put([late])
    after = (NOW // 1000 + RETENTION) * 1000 + 10
    assert runs(storage, after) == {"a": ["M00001"]}


def test_rewind_brings_kept_messages_back_in_their_order(storage):
    send(storage, "a", "a", "a")
    run = take(storage, NOW + 10, 2, VISIBLE)
    assert storage.fifo_messages.delete_keeping([(m.ref, m.version) for m in run], NOW + 20) == [True, True]
    assert runs(storage, NOW + 30) == {"a": ["M00002"]}
    assert storage.fifo_messages.rewind("q1", NOW, NOW + 40) == 2
    assert runs(storage, NOW + 50) == {"a": ["M00000", "M00001", "M00002"]}


def test_rewind_finds_a_group_whose_messages_were_all_deleted(storage):
    send(storage, "a", "a")
    run = take(storage, NOW + 10, 2, VISIBLE)
    assert storage.fifo_messages.delete_keeping([(m.ref, m.version) for m in run], NOW + 20) == [True, True]
    assert runs(storage, NOW + 30) == {}  # (an engine may tidy up what it keeps of an empty group here)
    assert storage.fifo_messages.rewind("q1", NOW, NOW + 40) == 2
    assert runs(storage, NOW + 50) == {"a": ["M00000", "M00001"]}


def test_turning_rewind_off_drops_what_a_fifo_queue_kept(storage):
    send(storage, "a", "a")
    run = take(storage, NOW + 10, 1, VISIBLE)
    assert storage.fifo_messages.delete_keeping([(m.ref, m.version) for m in run], NOW + 20) == [True]
    assert storage.fifo_messages.drop_kept("q1", NOW + 30) == 1
    assert storage.fifo_messages.rewind("q1", NOW, NOW + 40) == 0
    assert runs(storage, NOW + 50) == {"a": ["M00001"]}


def test_rewind_frees_a_group_in_flight(storage):
    send(storage, "a", "a")
    take(storage, NOW + 10, 1, VISIBLE)
    assert runs(storage, NOW + 20) == {}
    assert storage.fifo_messages.rewind("q1", NOW, NOW + 30) == 1
    assert runs(storage, NOW + 40) == {"a": ["M00000", "M00001"]}


def test_blocked_groups_never_hide_a_free_one(storage):
    groups = [f"g{n:02d}" for n in range(50)]
    send(storage, *[g for g in groups for _ in range(3)])
    offered = offer(storage, NOW + 10, wanted=1000)
    for message in storage.fifo_messages.peek_ready("q1", NOW + 10, 1000):  # (a receive's scan offers at most 64)
        if message.message_group_id != "g49":
            offered.claim([message], 1, NOW + 10, VISIBLE)
    for _ in range(5):
        assert {m.message_group_id for m in scan(storage, NOW + 20, wanted=1)} == {"g49"}


def test_one_batch_may_carry_several_groups_each_in_order(storage):
    send(storage, *["a", "b", "c"] * 4)
    claimed = take(storage, NOW + 10, 16, VISIBLE)
    by_group: dict[str, list[int]] = defaultdict(list)
    for message in claimed:
        by_group[message.message_group_id].append(int(message.message_id[1:]))
    assert by_group == {"a": [0, 3, 6, 9], "b": [1, 4, 7, 10], "c": [2, 5, 8, 11]}
    assert sorted(storage.fifo_messages.held_groups("q1", NOW + 20, 10)) == ["a", "b", "c"]


# --- many consumers ---------------------------------------------------------------------------------


@dataclass
class _Ledger:
    """What consumers did, each step numbered: a delete's number taken before it is tried, a claim's after it
    returned, so a delete that ended before a claim began always has the smaller number."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    ticket: int = 0
    claims: list[tuple[int, str, int]] = field(default_factory=list)  # (ticket, group, first position)
    deletes: list[tuple[int, str, int, str]] = field(default_factory=list)  # (ticket, group, position, id)

    def next(self) -> int:
        with self.lock:
            self.ticket += 1
            return self.ticket


def _consume(storage: Storage, ledger: _Ledger, seed: int, now: int, visibility: int) -> None:
    """One consumer at `now` until it finds nothing three times: claims runs, deletes them in order (tickets
    as `_Ledger` says), and lets one in twenty lapse."""
    local = random.Random(seed)
    idle = 0
    while idle < 3:
        offered = storage.fifo_messages.scan_ready("q1", now, 4)
        claimed = offered.claim(offered.messages, local.randint(1, 4), now, now + visibility)
        if not claimed:
            idle += 1
            continue
        idle = 0
        ticket = ledger.next()
        firsts: dict[str, int] = {}
        for message in claimed:
            firsts.setdefault(message.message_group_id, message.position)
        with ledger.lock:
            ledger.claims += [(ticket, group, position) for group, position in firsts.items()]
        if local.random() < 0.05:
            continue  # let the run lapse
        for message in claimed:
            ticket = ledger.next()
            if storage.fifo_messages.delete_many([(message.ref, message.version)], now)[0]:
                with ledger.lock:
                    ledger.deletes.append((ticket, message.message_group_id, message.position, message.message_id))


def _check_order(ledger: _Ledger, positions: dict[str, list[int]]) -> None:
    """Per group: processed in send order, and every claim began at the oldest message not yet processed."""
    events: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    for ticket, group, position, _ in ledger.deletes:
        events[group].append((ticket, "delete", position))
    for ticket, group, position in ledger.claims:
        events[group].append((ticket, "claim", position))
    for group, history in events.items():
        remaining = sorted(positions[group])
        processed = []
        for _, kind, position in sorted(history):
            if kind == "delete":
                processed.append(position)
                remaining.remove(position)
            else:
                assert position == remaining[0], f"{group}: a claim began at {position}, not {remaining[0]}"
        assert processed == sorted(positions[group]), f"{group} processed out of order"


# moto copies its whole table for every item of a TransactWriteItems (to roll back), so 10,000 messages' claims and
# deletes would take hours there: the DynamoDB engine runs this on the simulator (its transactions are held to
# moto's in tests/integration/test_simulated_dynamodb.py), with and without the ready index.
@pytest.mark.slow
@pytest.mark.parametrize("storage", [e for e in ENGINES if e != "dynamodb-moto"], indirect=True)
def test_sixteen_consumers_keep_every_group_in_order(storage):
    """10,000 messages in 100 groups, 16 consumers; some let their runs lapse. Each message is processed
    exactly once, each group in send order, and every claim starts at its group's oldest unprocessed message.
    Time stands still within a round of consumers (so every consumer sees the same lapses); between rounds it
    moves past the visibility timeout, and the runs let go lapse."""
    rng = random.Random(7)
    groups = [f"group-{n:03d}" for n in range(100)]
    sent = [rng.choice(groups) for _ in range(10_000)]
    positions: dict[str, list[int]] = defaultdict(list)
    for start in range(0, len(sent), 16):
        batch = [fifo_message(storage, group, start + i) for i, group in enumerate(sent[start : start + 16])]
        assert storage.fifo_messages.put(batch) == set()
        for message in batch:
            positions[message.message_group_id].append(message.position)
    ledger = _Ledger()
    visibility = 1000
    now = NOW + 10
    for round_ in range(200):
        threads = [
            threading.Thread(target=_consume, args=(storage, ledger, round_ * 100 + n, now, visibility))
            for n in range(16)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not any(thread.is_alive() for thread in threads)
        if len(ledger.deletes) == len(sent):
            break
        now += visibility
    deleted_ids = [entry[3] for entry in ledger.deletes]
    assert len(deleted_ids) == len(set(deleted_ids)) == len(sent)  # each exactly once
    _check_order(ledger, positions)
    assert storage.fifo_messages.counts("q1", now) == QueueCounts(0, 0, 0)
