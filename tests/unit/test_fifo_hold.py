"""A group's hold (`mnsd.model.fifo.Hold`): kept by its changes (as the DynamoDB engine keeps it on a group item)
it always says what the group's messages show (as the SQLite engine reads it from its rows)."""

from __future__ import annotations

import random

import pytest

from mnsd.model import fifo
from tests.support.fifo_groups import NOW, message


def test_a_hold_is_its_hidden_messages_and_lasts_until_the_latest():
    hold = fifo.Hold.claimed([message(0, visible_at=NOW + 30_000), message(1, visible_at=NOW + 30_000)])
    assert hold.held(NOW + 29_999) and not hold.held(NOW + 30_000)
    shortened = hold.retimed(NOW + 0, NOW + 1000)
    assert shortened.until(NOW) == NOW + 30_000  # the other still hides
    given_back = shortened.retimed(NOW + 1, NOW)
    assert (given_back.until(NOW), given_back.held(NOW + 1000), given_back.hidden(NOW)) == (NOW + 1000, False, 1)
    assert hold.released(NOW + 0).released(NOW + 1) == fifo.Hold()


def test_a_message_outside_the_hold_changes_nothing():
    hold = fifo.Hold.claimed([message(0, visible_at=NOW + 30_000)])
    assert hold.retimed(NOW + 5, NOW + 90_000) == hold  # a delayed message re-timed by its send's handle
    assert hold.released(NOW + 5) == hold


@pytest.mark.parametrize("seed", range(20))
def test_a_hold_kept_by_its_changes_is_the_hold_its_messages_show(seed):
    """Random claims (runs from the head), visibility changes (to now, shorter, longer) and deletes, time moving on:
    after each, `Hold` as changed agrees with `Hold.of` the messages."""
    rng = random.Random(seed)
    stored = {n: message(n) for n in range(12)}
    now = NOW + 1
    kept = fifo.Hold()
    for _ in range(200):
        in_flight = [m for m in stored.values() if m.visible_at > now and m.dequeue_count]
        step = rng.random()
        if step < 0.3 and not kept.held(now):
            run = fifo.head_run(sorted(stored.values(), key=lambda m: m.position), now, rng.randint(1, 4)).messages
            visible_at = now + rng.randint(1, 30) * 1000
            after = [m.received(now, visible_at) for m in run]
            stored.update({int(m.message_id[1:]): m for m in after})
            if after:
                kept = fifo.Hold.claimed(after)
        elif step < 0.55 and in_flight:
            chosen = rng.choice(in_flight)
            retimed = chosen.retimed(chosen.version, now, now + rng.choice([0, 1000, 5000, 60_000]))
            stored[int(chosen.message_id[1:])] = retimed
            kept = kept.retimed(retimed.position, retimed.visible_at)
        elif step < 0.7 and in_flight:
            chosen = rng.choice(in_flight)
            del stored[int(chosen.message_id[1:])]
            kept = kept.released(chosen.position)
        else:
            now += rng.randint(1, 10_000)
        shown = fifo.Hold.of(stored.values(), now)
        assert kept.held(now) == shown.held(now)
        assert kept.hidden(now) == shown.hidden(now)
        assert kept.until(now) == shown.until(now)


def test_an_emptied_group_is_forgettable_unless_it_holds_or_keeps():
    assert fifo.forgettable(0, 0, fifo.Hold(), NOW)
    assert not fifo.forgettable(1, 0, fifo.Hold(), NOW)
    assert not fifo.forgettable(0, 1, fifo.Hold(), NOW)
    assert not fifo.forgettable(0, 0, fifo.Hold({NOW: NOW + 1}), NOW)
    assert fifo.forgettable(0, 0, fifo.Hold({NOW: NOW}), NOW)  # (lapsed)
