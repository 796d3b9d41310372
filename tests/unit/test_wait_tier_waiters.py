"""The waker's memory (`wait_tier.waiters`): which held receives a wake asks the origin again for, and when."""

from wait_tier.waiters import CHECK_WITHIN_MS, CONFIRM_SECONDS, OWED_MS, REUSE_AFTER_MS, SETTLE_MS, Waiters


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
    assert not waiters.stale("mns.q", started, 1)
    clock.ms += 5
    waiters.wake("mns.q", 1)  # no waiter yet: the message is owed to the receives looking now
    assert not waiters.stale("mns.q", clock.ms + 1, 1)  # (one that looked after the wake saw it)
    assert waiters.stale("mns.q", started, 1)  # one that looked before it looks again...
    assert not waiters.stale("mns.q", started, 1)  # ...one only: one message was owed


def test_a_wake_counts_on_the_receives_asking_the_origin_now_and_owes_them_what_it_leaves() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    held = [waiters.hold("mns.q", clock.ms + 20_000, key=f"k{n}") for n in range(4)]
    started = clock.ms
    waiters.begin("mns.q", 1)  # two new receives of the queue ask the origin
    waiters.begin("mns.q", 1)
    clock.ms += 5
    assert waiters.wake("mns.q", 3) == held[:1]  # 3 messages: the two asking take two, one held waiter the third
    assert waiters.wake("mns.q", 1) == held[1:2]  # (what is owed to them is not counted on twice)
    waiters.end("mns.q", 1)
    waiters.claimed("mns.q", 1)  # one claimed
    waiters.end("mns.q", 1)
    assert waiters.stale("mns.q", started, 1)  # the other had looked before: it looks again
    assert not waiters.stale("mns.q", started, 1)  # nothing more owed
    clock.ms += OWED_MS + 1
    assert waiters.wake("mns.q", 1) == held[2:3]


def test_a_batch_receive_held_is_woken_for_as_many_messages_as_it_takes() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    batch = waiters.hold("mns.q", clock.ms + 20_000, key="batch", takes=16)
    single = waiters.hold("mns.q", clock.ms + 20_000, key="single")
    assert waiters.wake("mns.q", 16) == [batch]
    assert waiters.wake("mns.q", 17) == [single]


def test_alike_requests_held_are_told_apart_by_what_brings_one_back() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    first, second = (waiters.hold("mns.q", clock.ms + 20_000, key="same") for _ in range(2))
    clock.ms += CHECK_WITHIN_MS + 1  # past Pushpin's checks of the new channels
    assert waiters.answered("same") is None  # a third client's request alike: a new one, not a held one
    assert waiters.wake("mns.q", 1) == [first]
    assert waiters.answered("same") == first  # the woken one comes back
    assert waiters.answered("same") is None
    assert waiters.wake("mns.q", 1) == [second]  # the other one is still held


def test_pushpins_check_of_a_channel_it_newly_subscribed_is_expected_once() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    fresh = waiters.hold("mns.q", clock.ms + 20_000, key="a")
    assert waiters.answered("a") == fresh  # Pushpin's check of mns.q.w1, 1 s after it subscribed it
    again = waiters.hold("mns.q", clock.ms + 20_000, key="b")
    assert again.name == fresh.name  # still subscribed: no check comes for it
    clock.ms += CHECK_WITHIN_MS + 1
    assert waiters.answered("b") is None


def test_more_messages_seen_by_a_claim_wake_only_the_waiters_not_already_on_their_way() -> None:
    clock = Clock()
    waiters = Waiters(clock)
    for n in range(6):
        waiters.hold("mns.q", clock.ms + 20_000, key=f"k{n}")
    woken = waiters.wake("mns.q", 3)  # a send of 3
    asking = waiters.answered(woken[0].key)  # one of them is asking the origin; two are still hinted
    assert asking is not None
    waiters.begin("mns.q", 1)
    assert waiters.more("mns.q", 2) == []  # the claim saw 2 more: the other two woken take them
    more = waiters.more("mns.q", 4)
    assert len(more) == 1  # 4 more seen: 2 woken and 1 asking take three
    waiters.end("mns.q", 1)
