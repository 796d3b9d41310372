"""The waker's memory (`wait_tier.waiters`): which held receives a wake asks the origin again for, and when."""

from wait_tier.waiters import CONFIRM_SECONDS, REUSE_AFTER_MS, SETTLE_MS, Waiters


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def test_a_wake_for_n_messages_wakes_n_waiters_oldest_first_and_each_once() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    held = [waiters.hold("mns.q", clock.ms + 20_000, key=f"k{n}") for n in range(5)]
    assert [w.name for w in waiters.wake("mns.q", 2)] == [held[0].name, held[1].name]
    assert [w.name for w in waiters.wake("mns.q", 10)] == [w.name for w in held[2:]]
    assert waiters.wake("mns.q", 1) == []
    assert waiters.wake("mns.other", 1) == []


def test_waiters_whose_wait_ended_are_not_woken() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    waiters.hold("mns.q", clock.ms + 1000, key="gone")
    live = waiters.hold("mns.q", clock.ms + 20_000, key="live")
    clock.ms += 2000
    assert waiters.wake("mns.q", 1) == [live]


def test_names_are_reused_lowest_free_first_once_their_wait_is_over_or_answered() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    first = waiters.hold("mns.q", clock.ms + 5000, key="a")
    second = waiters.hold("mns.q", clock.ms + 5000, key="b")
    assert (first.name, second.name) == ("mns.q.w1", "mns.q.w2")
    assert waiters.answered("a") == first  # Pushpin asks again for it: its name is free
    assert waiters.hold("mns.q", clock.ms + 5000, key="c").name == "mns.q.w1"
    clock.ms += 5000 + REUSE_AFTER_MS + 1
    waiters.forget_before(clock.ms)
    assert waiters.hold("mns.q", clock.ms + 5000, key="d").name == "mns.q.w1"
    assert waiters.answered("unknown") is None


def test_a_woken_waiter_that_does_not_come_back_is_hinted_again_then_replaced() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    lost = waiters.hold("mns.q", clock.ms + 20_000, key="lost")
    spare = waiters.hold("mns.q", clock.ms + 20_000, key="spare")
    clock.ms += SETTLE_MS + 1
    woken, young = waiters.ready(waiters.wake("mns.q", 1))
    assert (woken, young) == ([lost], [])
    clock.ms += int(CONFIRM_SECONDS * 1000) + 1
    again = waiters.next_wakes()
    assert again == [lost]  # once more: the first hint may have come before Pushpin subscribed it
    waiters.ready(again)
    clock.ms += int(CONFIRM_SECONDS * 1000) + 1
    assert waiters.next_wakes() == [spare]  # then the next waiter instead


def test_a_waiter_that_came_back_is_not_replaced() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    waiter = waiters.hold("mns.q", clock.ms + 20_000, key="k")
    waiters.hold("mns.q", clock.ms + 20_000, key="other")
    clock.ms += SETTLE_MS + 1
    waiters.ready(waiters.wake("mns.q", 1))
    assert waiters.answered("k") == waiter
    clock.ms += 10_000
    assert waiters.next_wakes() == []


def test_a_hint_to_a_hold_younger_than_pushpins_subscription_waits() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    waiter = waiters.hold("mns.q", clock.ms + 20_000, key="k")
    assert waiters.ready(waiters.wake("mns.q", 1)) == ([], [waiter])
    clock.ms += SETTLE_MS + 1
    assert waiters.ready([waiter]) == ([waiter], [])


def test_a_due_time_wakes_one_waiter_when_it_comes() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    first = waiters.hold("mns.q", clock.ms + 20_000, key="a")
    waiters.hold("mns.q", clock.ms + 20_000, key="b")
    waiters.due("mns.q", clock.ms + 3000)
    waiters.due("mns.q", clock.ms + 5000)  # (the earlier time is kept)
    clock.ms += 2999
    assert waiters.next_wakes() == []
    clock.ms += 1
    assert waiters.next_wakes() == [first]
    assert waiters.next_wakes() == []


def test_a_hold_is_known_to_be_stale_when_its_queue_was_woken_while_the_origin_looked() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    started = clock.ms
    assert not waiters.woken_since("mns.q", started)
    clock.ms += 5
    waiters.wake("mns.q", 1)  # no waiter yet: the wake is remembered
    assert waiters.woken_since("mns.q", started)
    assert not waiters.woken_since("mns.q", clock.ms + 1)


def test_more_messages_seen_by_a_claim_wake_only_the_waiters_not_already_on_their_way() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    for n in range(6):
        waiters.hold("mns.q", clock.ms + 20_000, key=f"k{n}")
    woken = waiters.wake("mns.q", 3)  # a send of 3
    asking = waiters.answered(woken[0].key)  # one of them is asking the origin; two are still hinted
    assert asking is not None
    assert waiters.more("mns.q", 2) == []  # the claim saw 2 more: the other two woken take them
    more = waiters.more("mns.q", 5)
    assert len(more) == 2  # 5 more seen, 3 on their way
    waiters.asked(asking)
