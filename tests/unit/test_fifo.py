"""The rules of a FIFO queue's groups (`mnsd.model.fifo`) as pure functions: no engine involved."""

from __future__ import annotations

import dataclasses

from mnsd.model import fifo
from mnsd.model.messages import Message
from tests.support.fifo_groups import NOW, message


def ids(messages: list[Message]) -> list[str]:
    return [m.message_id for m in messages]


def test_a_run_is_the_active_prefix_from_the_head_past_expired_ones():
    expired = message(0, expires_s=NOW // 1000)
    later = message(3, visible_at=NOW + 5)
    found = fifo.head_run([expired, message(1), message(2), later, message(4)], NOW, 10)
    assert (ids(found.messages), found.wakes_at, found.head) == (["M1", "M2"], None, NOW + 1)


def test_a_head_not_active_gives_no_run_and_says_when_it_wakes():
    found = fifo.head_run([message(0, visible_at=NOW + 7, dequeue_count=1), message(1)], NOW, 10)
    assert (found.messages, found.wakes_at, found.head) == ([], NOW + 7, NOW)
    assert fifo.head_run([], NOW, 10) == fifo.HeadRun([], None, None)


def test_a_run_reads_no_further_than_it_needs():
    taken = []

    def stored():
        for n in range(10):
            taken.append(n)
            yield message(n)

    assert ids(fifo.head_run(stored(), NOW, 2).messages) == ["M0", "M1"]
    assert taken == [0, 1]


def test_candidates_are_cut_into_runs_by_group_in_their_order():
    cut = fifo.runs([message(0, "b"), message(1, "a"), message(2, "b")])
    assert [ids(run) for run in cut] == [["M0", "M2"], ["M1"]]


def test_claim_runs_cuts_each_run_to_the_room_left_and_skips_unclaimable_ones():
    delayed = dataclasses.replace(message(1, "a"), visible_at=NOW + 1)
    handed: list[list[str]] = []

    def claim_run(run: list[Message]) -> list[Message]:
        handed.append(ids(run))
        return run

    candidates = [message(0, "a"), delayed, message(2, "b"), message(3, "b"), message(4, "c")]
    assert ids(fifo.claim_runs(candidates, 3, NOW, claim_run)) == ["M2", "M3", "M4"]
    assert handed == [["M2", "M3"], ["M4"]]


def test_a_spent_head_moves_and_its_group_waits_while_others_are_cut_before_their_first_spent():
    assert fifo.dead_letter_split([message(0, dequeue_count=3), message(1, dequeue_count=3), message(2)], 3) == (
        [message(0, dequeue_count=3), message(1, dequeue_count=3)],
        [],
    )
    moves, kept = fifo.dead_letter_split([message(0), message(1, dequeue_count=3), message(2)], 3)
    assert (moves, ids(kept)) == ([], ["M0"])


def test_positions_and_lifetime():
    assert fifo.first_position(NOW) == NOW
    assert fifo.group_expires_at(NOW) == NOW + fifo.GROUP_LIFETIME_MS
    assert fifo.GROUP_LIFETIME_MS == 16 * 86_400_000  # a day past the longest retention (15 days)
