"""A long poll's answer never passes 30 s from its arrival (`mnsd.ground.deadlines`): its last claim starts by
`LAST_CLAIM_SECONDS`, that claim's DynamoDB calls are retried within the request's budget, and the last attempt's own
bound fits in what is left. On a fake clock: DynamoDB throttles every call, each attempt taking from nothing to its
whole timeout."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from mnsd.ground import deadlines
from mnsd.ground.settings import Settings
from mnsd.storage.dynamodb.retries import RetryingClient, Unavailable

ARRIVED = 1_000_000.0  # the request's arrival, epoch seconds


class FakeClock:
    """Wall and monotonic time that move only when told (an attempt's duration, a pause)."""

    def __init__(self) -> None:
        self.now = ARRIVED

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.now += seconds


class Throttling:
    """A DynamoDB client each of whose attempts takes `attempt_seconds`, then is throttled."""

    def __init__(self, clock: FakeClock, attempt_seconds: float) -> None:
        self.clock, self.attempt_seconds, self.attempts = clock, attempt_seconds, 0

    def __getattr__(self, name: str) -> Any:
        def call(**_request: Any) -> Any:
            self.attempts += 1
            self.clock.sleep(self.attempt_seconds)
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, name)

        return call


@pytest.mark.parametrize("max_poll_seconds", [Settings().max_poll_seconds, 28.0, 30.0, 2.0])
def test_a_long_polls_budget_and_its_last_attempt_fit_in_thirty_seconds(max_poll_seconds):
    budget = deadlines.request_seconds(True, max_poll_seconds)
    assert budget + deadlines.ATTEMPT_SECONDS <= deadlines.ANSWER_SECONDS
    assert deadlines.last_claim_seconds(max_poll_seconds) + deadlines.LONG_POLL_RETRY_SECONDS == budget


# (a call, or three one after another as a claim makes them; an attempt's time: a throttle answered at once, up to
# an attempt hung until its read timeout. A call made once the budget is spent is still tried once: three calls
# each hung to its timeout after the deadline would not fit, and are left out.)
@pytest.mark.parametrize(
    ("claims", "attempt_seconds"),
    [(1, 0.0), (1, 0.01), (1, 0.4), (1, 1.7), (1, deadlines.ATTEMPT_SECONDS), (3, 0.0), (3, 0.01), (3, 0.4)],
)
def test_a_claim_started_at_the_last_moment_under_throttling_is_answered_within_thirty_seconds(claims, attempt_seconds):
    clock = FakeClock()
    dynamodb = RetryingClient(Throttling(clock, attempt_seconds), sleep=clock.sleep, monotonic=clock.time)
    budget = deadlines.request_seconds(True, 28.0)  # (a stack configured as before: the wait is cut all the same)
    with deadlines.within(budget, ARRIVED, wall=clock.time, monotonic=clock.time):
        clock.now = ARRIVED + deadlines.last_claim_seconds(28.0)  # the wait's end: the last claim starts
        for _ in range(claims):  # a claim's calls, one after another, each throttled to the end of the budget
            with pytest.raises(Unavailable):
                dynamodb.query(TableName="messages")
    assert clock.now - ARRIVED <= deadlines.ANSWER_SECONDS
    assert dynamodb._client.attempts >= claims  # (every call was tried at least once)
