"""The holder's rules for one queue channel (`wait_tier.channels.Channel`), each on its own."""

from __future__ import annotations

from wait_tier.channels import Channel, Waiter


def held(channel: Channel, *takes: int, until: int = 30_000) -> list[Waiter]:
    waiters = [Waiter(t, until) for t in takes]
    for w in waiters:
        channel.hold(w)
    return waiters


def test_a_wake_wakes_held_receives_oldest_first_as_many_as_take_the_messages() -> None:
    channel = Channel("mns.q")
    a, b, c, d = held(channel, 1, 1, 1, 1)
    assert channel.wake(2, seq=1, now_ms=0) == [a, b]
    assert list(channel.held) == [c, d]


def test_a_batch_receive_counts_for_its_messages() -> None:
    channel = Channel("mns.q")
    batch, single = held(channel, 16, 1)
    assert channel.wake(10, seq=1, now_ms=0) == [batch]  # one receive of 16 takes the 10
    assert channel.wake(17, seq=2, now_ms=0) == [single]  # (no more held: the rest wakes nobody)
    assert not channel.held


def test_a_wake_leaves_to_the_free_receives_at_the_origin_what_they_may_take() -> None:
    channel = Channel("mns.q")
    a, b = held(channel, 1, 1)
    channel.begin(1, free=True)  # a client's receive is at the origin now
    assert channel.wake(2, seq=1, now_ms=0) == [a]  # one message is owed to it
    assert channel.owed == 1


def test_a_woken_receive_at_the_origin_is_not_counted_for_new_messages() -> None:
    channel = Channel("mns.q")
    (a,) = held(channel, 1)
    channel.begin(1, free=False)  # woken for a message of its own
    assert channel.wake(1, seq=1, now_ms=0) == [a]
    assert channel.owed == 0


def test_a_free_receive_that_claims_pays_off_what_is_owed() -> None:
    channel = Channel("mns.q")
    (a,) = held(channel, 1)
    channel.begin(1, free=True)
    channel.wake(1, seq=1, now_ms=0)
    channel.end(1, free=True, claimed=1)
    assert channel.owed == 0 and channel.settle(now_ms=0) == [] and list(channel.held) == [a]


def test_what_is_still_owed_when_the_free_receives_are_back_wakes_held_ones() -> None:
    channel = Channel("mns.q")
    (a,) = held(channel, 1)
    channel.begin(1, free=True)
    channel.begin(1, free=True)
    channel.wake(1, seq=1, now_ms=0)
    channel.end(1, free=True, claimed=0)
    assert channel.settle(now_ms=0) == []  # one free receive still at the origin may claim it
    channel.end(1, free=True, claimed=0)
    assert channel.settle(now_ms=0) == [a]
    assert channel.owed == 0


def test_a_free_receive_that_found_nothing_before_an_owing_wake_is_stale() -> None:
    channel = Channel("mns.q")
    channel.begin(1, free=True)
    begun = 4  # the holder had counted 4 wakes when it began
    assert not channel.stale(begun, counted=True)
    channel.wake(1, seq=5, now_ms=0)
    assert not channel.stale(5, counted=True)  # (one that began after the wake saw the message)
    assert channel.stale(begun, counted=True)
    assert not channel.stale(begun, counted=True)  # the one message owed: one receive asks again for it


def test_a_receive_of_an_unknown_channel_is_stale_after_any_wake_of_it() -> None:
    channel = Channel("mns.q")
    held(channel, 1)
    channel.wake(1, seq=3, now_ms=0)  # went to the held receive: nothing owed
    assert not channel.stale(2, counted=True)
    assert channel.stale(2, counted=False)  # it was not counted among the askers: it may have been for it
    assert not channel.stale(3, counted=False)


def test_a_claim_that_saw_more_wakes_held_receives_beyond_those_at_the_origin() -> None:
    channel = Channel("mns.q")
    a, b, c = held(channel, 1, 1, 1)
    channel.begin(1, free=False)
    assert channel.more(3, now_ms=0) == [a, b]  # one receive at the origin already takes one
    assert channel.more(0, now_ms=0) == []


def test_a_due_time_wakes_one_held_receive_when_it_passes_and_is_counted_once() -> None:
    channel = Channel("mns.q")
    a, b = held(channel, 1, 1)
    assert channel.due(1_000) and channel.due(2_000)
    assert not channel.due(1_000)  # (a timer is set once per time)
    assert channel.fire(999) == []
    assert channel.fire(1_000) == [a]
    assert channel.fire(5_000) == [b]
    assert channel.dues == []


def test_a_receive_that_leaves_is_woken_no_more_and_an_empty_channel_is_idle() -> None:
    channel = Channel("mns.q")
    (a,) = held(channel, 1)
    assert not channel.idle()
    channel.leave(a)
    channel.leave(a)  # (its wait ended after it was woken: nothing to remove)
    assert channel.wake(1, seq=1, now_ms=0) == []
    assert channel.idle()
    channel.begin(1, free=True)
    assert not channel.idle()


def test_a_held_receive_past_its_last_ask_is_woken_no_more_and_the_wake_goes_to_the_next() -> None:
    channel = Channel("mns.q")
    late = Waiter(1, until_ms=28_000, last_ask_ms=23_000)
    (fresh,) = held(channel, 1)
    channel.held.appendleft(late)  # (the older one)
    assert channel.wake(1, seq=1, now_ms=23_000) == [late]  # (still in time)
    channel.held.appendleft(late)
    assert channel.wake(1, seq=2, now_ms=23_001) == [fresh]
    assert list(channel.held) == [late]  # held on until its wait ends
    assert channel.due(24_000) and channel.fire(24_000) == []
