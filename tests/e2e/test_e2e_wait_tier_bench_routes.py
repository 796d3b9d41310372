"""The wait tier bench's two routes of a sent message (`bench.wait_tier.wakes`), on each engine: messages sent through
the tier make the server post no wake (theirs come back in the answers), messages sent to the server directly post one
each; every message is received once either way."""

from __future__ import annotations

import pytest

from bench.wait_tier import ROUTES, TierRun, wakes

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MESSAGES = 8


@pytest.fixture(scope="module")
def run(tmp_path_factory, engine):
    started = TierRun(tmp_path_factory.mktemp(f"bench-routes-{engine}"), engine=engine)
    try:
        yield started
    finally:
        started.stop()


def test_messages_sent_through_the_tier_post_no_wake_and_are_woken_by_their_answers(run) -> None:
    measured = wakes(run, 2, MESSAGES, ROUTES[0])
    assert measured["posts_per_message"] == 0
    assert measured["answered_per_message"] >= 1  # (each send's answer carried its wake)
    assert (measured["lost"], measured["received_twice"]) == (0, 0)


def test_messages_sent_directly_post_one_wake_each(run) -> None:
    measured = wakes(run, 2, MESSAGES, ROUTES[1])
    assert measured["posts_per_message"] == 1
    assert measured["answered_per_message"] == 0
    assert (measured["lost"], measured["received_twice"]) == (0, 0)
