"""Stripes: the id format that names a message's stripe, its partition key, and the growth rule (fake clock)."""

from __future__ import annotations

from mnsd.queue_model import MessageRef, stripe_of
from mnsd.storage.dynamodb.layout import partition_of, queue_id_of, stripe_partition
from mnsd.stripes import COOLDOWN_SECONDS, MIN_ATTEMPTS, WINDOW_SECONDS, Pressure, StripeGrowth


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def test_the_stripe_is_the_middle_field_of_the_message_id():
    assert stripe_of("0123456789ABCDEF-1-18BCFE56800-123456789") == 0
    assert stripe_of("0123456789ABCDEF-8-18BCFE56800-123456789") == 7
    assert stripe_of("0123456789ABCDEF-64-18BCFE56800-123456789") == 63
    for other in ("M00001", "a-b-c", "0123456789ABCDEF-0-18BCFE56800-123456789", "X-99999-Y-Z", ""):
        assert stripe_of(other) == 0


def test_stripe_zero_keeps_the_queue_id_as_its_partition():
    ref = MessageRef("queueid", 8, 1, "0123456789ABCDEF-1-18BCFE56800-123456789")
    assert (ref.stripe, partition_of(ref)) == (0, "queueid")
    striped = MessageRef("queueid", 8, 1, "0123456789ABCDEF-5-18BCFE56800-123456789")
    assert (striped.stripe, partition_of(striped)) == (4, "queueid#4")
    assert queue_id_of(partition_of(striped)) == queue_id_of(stripe_partition("queueid", 0)) == "queueid"


def test_contention_doubles_the_stripes_up_to_the_limit():
    pressure, clock = Pressure(), Clock()
    growth = StripeGrowth(pressure, clock, max_stripes=4)
    pressure.claims("q", won=20, lost=4)
    assert growth.wanted("q", 1) is None  # too few claims to judge
    pressure.claims("q", won=10, lost=6)  # 40 claims, 10 lost: above a quarter lost per won
    assert growth.wanted("q", 1) == 2
    clock.sleep(COOLDOWN_SECONDS)
    pressure.claims("q", won=MIN_ATTEMPTS, lost=MIN_ATTEMPTS)
    assert growth.wanted("q", 2) == 4
    clock.sleep(COOLDOWN_SECONDS)
    pressure.claims("q", won=MIN_ATTEMPTS, lost=MIN_ATTEMPTS)
    assert growth.wanted("q", 4) is None  # at the limit


def test_few_lost_claims_or_old_ones_do_not_grow_it():
    pressure, clock = Pressure(), Clock()
    growth = StripeGrowth(pressure, clock, max_stripes=64)
    pressure.claims("q", won=100, lost=20)  # 0.2 lost per won
    assert growth.wanted("q", 1) is None
    clock.sleep(WINDOW_SECONDS + 1)  # a new window: what came before is forgotten
    pressure.claims("q", won=0, lost=MIN_ATTEMPTS - 1)
    assert growth.wanted("q", 1) is None
    pressure.claims("other", won=0, lost=MIN_ATTEMPTS)  # another queue's load is its own
    assert growth.wanted("q", 1) is None
    assert growth.wanted("other", 1) == 2


def test_a_throttle_grows_it_at_once_but_once_per_cooldown():
    pressure, clock = Pressure(), Clock()
    growth = StripeGrowth(pressure, clock, max_stripes=64)
    pressure.throttled("q")
    assert growth.wanted("q", 1) == 2
    pressure.throttled("q")
    assert growth.wanted("q", 2) is None  # within the cooldown
    clock.sleep(COOLDOWN_SECONDS)
    pressure.throttled("q")
    assert growth.wanted("q", 2) == 4


def test_claims_lost_racing_for_a_thin_queue_do_not_grow_it():
    pressure, clock = Pressure(), Clock()
    growth = StripeGrowth(pressure, clock, max_stripes=64)
    pressure.claims("q", won=0, lost=MIN_ATTEMPTS * 2)
    assert growth.wanted("q", 1, scarce=True) is None
    pressure.claims("q", won=0, lost=MIN_ATTEMPTS)
    assert growth.wanted("q", 1) == 2
