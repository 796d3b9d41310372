"""The wakes the service posts to the wait tier (`mnsd.queues.tier_wakes`): now with a count, later with a time,
and a post that fails changes nothing for the operation that made the message receivable."""

import json

import pytest

from mnsd.queues.notifier import PollingNotifier, wake
from mnsd.queues.tier_wakes import TierWakes
from tests.clocks import ManualClock


class Posts:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[dict] = []
        self.fail = fail

    def __call__(self, body: bytes) -> None:
        if self.fail:
            raise ConnectionRefusedError("the tier is restarting")
        self.sent.append(json.loads(body))


def test_messages_receivable_now_and_later_are_posted_as_a_count_and_the_earliest_time() -> None:
    posts = Posts()
    wakes = TierWakes(PollingNotifier(ManualClock()), posts)
    wake(wakes, "q/1", [1000, 1000, 5000, 3000], now_ms=1000)
    assert posts.sent == [{"channel": "mns.q_1", "count": 2}, {"channel": "mns.q_1", "at": 3000}]


def test_a_wake_that_cannot_be_posted_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    wakes = TierWakes(PollingNotifier(ManualClock()), Posts(fail=True))
    wakes.notify("q", 3)
    wakes.due("q", 5000)
    assert "wait tier wake not delivered" in caplog.text
