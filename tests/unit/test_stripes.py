"""Stripes: the id format that names a message's stripe, its partition key, and the growth rule (fake clock)."""

from __future__ import annotations

import pytest

from mnsd.model.messages import MessageRef
from mnsd.storage.dynamodb.items.layout import partition_of, queue_id_of, stripe_of, stripe_partition
from mnsd.storage.dynamodb.items.packs import pack_ids
from mnsd.storage.dynamodb.placement.stripes import (
    COOLDOWN_SECONDS,
    MIN_ATTEMPTS,
    STRIPE_BUDGET,
    WINDOW_SECONDS,
    Pressure,
    StripeGrowth,
    stripes_for,
)
from mnsd.storage.ids import new_message_id
from tests.support.clocks import ManualClock

START = 1000.0


def test_the_stripe_is_the_middle_field_of_the_message_id():
    assert stripe_of("0123456789ABCDEF-1-18BCFE56800-123456789") == 0
    assert stripe_of("0123456789ABCDEF-8-18BCFE56800-123456789") == 7
    assert stripe_of("0123456789ABCDEF-64-18BCFE56800-123456789") == 63
    for other in ("M00001", "a-b-c", "0123456789ABCDEF-0-18BCFE56800-123456789", "X-Y-Z-W", ""):
        assert stripe_of(other) == 0
    # a packed message's slot holds its entry above the stripes (`packs.pack_ids`): its stripe is the slot's remainder
    assert {stripe_of(i) for i in pack_ids(16, 5, 1_700_000_000_000)} == {5}
    assert [stripe_of(new_message_id(1_700_000_000_000, slot)) for slot in (1, 2, 128)] == [0, 1, 127]


def test_stripe_zero_keeps_the_queue_id_as_its_partition():
    ref = MessageRef("queueid", 8, 1, "0123456789ABCDEF-1-18BCFE56800-123456789")
    assert (stripe_of(ref.message_id), partition_of(ref)) == (0, "queueid")
    striped = MessageRef("queueid", 8, 1, "0123456789ABCDEF-5-18BCFE56800-123456789")
    assert (stripe_of(striped.message_id), partition_of(striped)) == (4, "queueid#4")
    assert queue_id_of(partition_of(striped)) == queue_id_of(stripe_partition("queueid", 0)) == "queueid"


def test_contention_doubles_the_stripes_up_to_the_limit():
    pressure, clock = Pressure(), ManualClock(START)
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
    pressure, clock = Pressure(), ManualClock(START)
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
    pressure, clock = Pressure(), ManualClock(START)
    growth = StripeGrowth(pressure, clock, max_stripes=64)
    pressure.throttled("q")
    assert growth.wanted("q", 1) == 2
    pressure.throttled("q")
    assert growth.wanted("q", 2) is None  # within the cooldown
    clock.sleep(COOLDOWN_SECONDS)
    pressure.throttled("q")
    assert growth.wanted("q", 2) == 4


def test_claims_lost_racing_for_a_thin_queue_do_not_grow_it():
    pressure, clock = Pressure(), ManualClock(START)
    growth = StripeGrowth(pressure, clock, max_stripes=64)
    pressure.claims("q", won=0, lost=MIN_ATTEMPTS * 2)
    assert growth.wanted("q", 1, scarce=True) is None
    pressure.claims("q", won=0, lost=MIN_ATTEMPTS)
    assert growth.wanted("q", 1) == 2


def send_steadily(growth: StripeGrowth, clock: ManualClock, rate: int, seconds: float, batch: int, stripes: int) -> int:
    """Send `rate` messages/s in batches of `batch` for `seconds`, applying what the rule asks; the stripes at the end."""
    interval = batch / rate
    for _ in range(round(seconds / interval)):
        wanted = growth.wanted("q", stripes, sent=batch)
        stripes = wanted or stripes
        clock.sleep(interval)
    return stripes


def test_stripes_for_a_rate_are_the_next_power_of_two_of_the_rate_over_the_budget():
    assert STRIPE_BUDGET == 120
    assert [stripes_for(r) for r in (0, 100, 120, 121, 240, 241, 1000, 10000)] == [1, 1, 1, 2, 2, 4, 16, 128]


def test_a_quiet_queue_keeps_one_stripe():
    for batch in (1, 5, 16):  # 100 messages/s one by one, 5 every 50 ms, 16 every 160 ms
        clock = ManualClock(START)
        growth = StripeGrowth(Pressure(), clock, max_stripes=128)
        assert send_steadily(growth, clock, rate=100, seconds=60, batch=batch, stripes=1) == 1


def test_a_steady_rate_asks_for_its_stripes_within_a_second():
    clock = ManualClock(START)
    growth = StripeGrowth(Pressure(), clock, max_stripes=128)
    # 400 messages/s one at a time (no burst): 4 stripes once the last second holds more than 1.25 x 120
    asked: list[tuple[float, int]] = []
    stripes = 1
    for _ in range(400):
        wanted = growth.wanted("q", stripes, sent=1)
        if wanted:
            asked.append((round(clock.now() - START, 3), wanted))
            stripes = wanted
        clock.sleep(1 / 400)
    assert [s for _, s in asked] == [2, 4]  # 151 in the last second: 2; 241: 4
    assert asked[-1][0] < 1.0
    assert send_steadily(growth, clock, rate=400, seconds=30, batch=1, stripes=stripes) == 4  # and no more


def test_a_burst_asks_for_the_stripes_of_its_rate_at_once():
    clock = ManualClock(START)
    growth = StripeGrowth(Pressure(), clock, max_stripes=128)
    stripes, batches = 1, 0
    while stripes == 1 and batches < 31:  # 10,000 messages/s: 500 every 50 ms, in batches of 16 at one instant
        stripes = growth.wanted("q", stripes, sent=16) or stripes
        batches += 1
    assert batches * 16 == 128 and stripes == 16  # 128 messages in 0.1 s: 1,280/s
    assert send_steadily(growth, clock, rate=10_000, seconds=1, batch=16, stripes=stripes) == 128


def test_growth_by_rate_stops_at_the_limit_and_never_shrinks():
    clock = ManualClock(START)
    growth = StripeGrowth(Pressure(), clock, max_stripes=64)
    assert send_steadily(growth, clock, rate=10_000, seconds=2, batch=16, stripes=1) == 64
    assert growth.wanted("q", 64, sent=16) is None
    clock.sleep(10)
    assert send_steadily(growth, clock, rate=50, seconds=5, batch=1, stripes=64) == 64  # quiet again: kept


def test_each_queue_has_its_own_rate():
    clock = ManualClock(START)
    growth = StripeGrowth(Pressure(), clock, max_stripes=128)
    for _ in range(40):
        assert growth.wanted("a", 1, sent=3) is None  # 120 messages/s on each of two queues
        assert growth.wanted("b", 1, sent=3) is None
        clock.sleep(0.025)


def test_the_count_estimate_between_two_pages_allows_for_leases_sharing_a_time():
    """Batches sent in one millisecond share `v`, and a page can end inside such a group: the estimate of what
    lies between a range's first and last page is exact on even groups and unbiased on uneven ones (one stripe's
    estimate still varies: counts sum the estimates of every stripe and range)."""
    import random
    import statistics

    from mnsd.storage.dynamodb.standard.stripe_counts import _between

    # 100 groups of 4 every 2 ms; each page ends one lease into a group.
    leases = [2 * group for group in range(100) for _ in range(4)]
    assert _between(leases[:25], leases[-25:]) == pytest.approx(350, abs=1)
    errors = []
    for seed in range(2000):
        rng = random.Random(seed)  # a stripe's share of batches of 16 over 4 stripes: 0 to 16 each
        leases = sorted(2 * batch for batch in range(100) for _ in range(sum(rng.random() < 0.25 for _ in range(16))))
        errors.append((50 + _between(leases[:25], leases[-25:])) / len(leases) - 1)
    assert abs(statistics.mean(errors)) < 0.02  # (counting every lease of the pages' spans: +7 %)
