"""The wait tier bench's price of a message by the way it arrives (`bench.wait_tier.per_message_cost`): a send through
the tier carries its wake in its answer and is charged no wake post; one sent to its function directly is charged its
post (an HTTP API request) and the post's round trip in the sending function's billed time. And the wake posts the
bench counts are the holder's `posted` wakes between two readings of its counters (`bench.wait_tier.wake_posts`)."""

from __future__ import annotations

import pytest

from bench import wait_tier
from bench.wait_tier import per_message_cost, wake_posts

CALLS, UNITS, POST_SECONDS = 1.6, 0.5, 0.003


def test_a_message_sent_through_the_tier_is_charged_no_wake_post() -> None:
    through_tier = per_message_cost(0, CALLS, UNITS, POST_SECONDS)
    assert through_tier["wake posts (HTTP API)"] == 0
    assert through_tier["the send waiting for its post (Lambda duration)"] == 0
    assert sum(through_tier.values()) == pytest.approx(
        CALLS
        * (
            wait_tier.LAMBDA_REQUEST
            + wait_tier.ORIGIN_CALL_SECONDS * wait_tier.RECEIVE_GB * wait_tier.LAMBDA_GB_SECOND_ARM
        )
        + CALLS * UNITS * wait_tier.DYNAMODB_READ_UNIT
    )


def test_a_message_sent_directly_is_charged_its_post_and_the_posts_round_trip() -> None:
    through_tier = sum(per_message_cost(0, CALLS, UNITS, POST_SECONDS).values())
    directly = per_message_cost(1, CALLS, UNITS, POST_SECONDS)
    assert directly["wake posts (HTTP API)"] == pytest.approx(1.00 / 1e6)  # $1 per million HTTP API requests
    waited = POST_SECONDS * wait_tier.SEND_GB * wait_tier.LAMBDA_GB_SECOND_ARM
    assert directly["the send waiting for its post (Lambda duration)"] == pytest.approx(waited)
    assert sum(directly.values()) - through_tier == pytest.approx(wait_tier.HTTP_API_REQUEST + waited)


def test_the_price_follows_the_measured_posts_per_message() -> None:
    half = per_message_cost(0.5, CALLS, UNITS, POST_SECONDS)  # (half the messages arrived each way)
    one = per_message_cost(1, CALLS, UNITS, POST_SECONDS)
    assert half["wake posts (HTTP API)"] == pytest.approx(one["wake posts (HTTP API)"] / 2)


def test_the_wake_posts_are_the_holders_posted_wakes_between_two_readings() -> None:
    before = {"wakes": {"posted": 7, "answered": 3}}
    after = {"wakes": {"posted": 7, "answered": 53, "relayed": 2}}
    assert wake_posts(before, after) == {"answered": 50, "posted": 0, "relayed": 2}
    assert wake_posts({"wakes": {}}, {"wakes": {"posted": 4}}) == {"answered": 0, "posted": 4}
