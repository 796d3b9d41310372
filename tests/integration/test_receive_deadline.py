"""The long-poll deadline counts from when the request reached the API (`requestContext.timeEpoch`), so
that every answer leaves before API Gateway's 30 s, and no message is claimed too late to be answered."""

from __future__ import annotations

import pytest

from mnsd.ground import deadlines, errors
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import QueueCounts

ACCOUNT = "1000000000000001"


@pytest.fixture
def queue(service):
    service.create_queue(ACCOUNT, "q", None)
    return service


def test_a_poll_reaching_the_function_late_claims_nothing(queue, clock):
    queue.send(ACCOUNT, "q", [MessageInput("kept", None, 8)])
    # A cold start (init, secret reads) took 28.5 s of the request's 30: a claim now would outlive the
    # request, and its message would stay invisible behind API Gateway's 504.
    with pytest.raises(errors.MessageNotExist):
        queue.receive(ACCOUNT, "q", 1, 0, received_at=clock.now() - 28.5)
    assert queue.queue_counts(queue.get_queue(ACCOUNT, "q")) == QueueCounts(active=1)
    (got,) = queue.receive(ACCOUNT, "q", 1, 0, received_at=clock.now())
    assert got.message.body == "kept" and got.message.dequeue_count == 1


def test_the_wait_ends_at_the_last_claim_after_the_request_arrived(queue, clock):
    arrived = clock.now() - 10  # ten seconds of cold start before the service is called
    with pytest.raises(errors.MessageNotExist):
        queue.receive(ACCOUNT, "q", 1, 30, received_at=arrived)
    assert clock.now() - arrived == pytest.approx(deadlines.LAST_CLAIM_SECONDS)


def test_a_short_wait_counts_from_the_request_too(queue, clock):
    arrived = clock.now() - 3
    with pytest.raises(errors.MessageNotExist):
        queue.receive(ACCOUNT, "q", 1, 5, received_at=arrived)
    assert clock.now() - arrived == pytest.approx(5.0)


def test_a_message_arriving_before_the_deadline_is_received(queue, clock):
    queue.send(ACCOUNT, "q", [MessageInput("later", 2, 8)])
    arrived = clock.now() - 20
    (got,) = queue.receive(ACCOUNT, "q", 1, 30, received_at=arrived)
    assert got.message.body == "later"
    assert clock.now() - arrived <= deadlines.LAST_CLAIM_SECONDS


def test_a_request_time_ahead_of_the_clock_counts_as_now(queue, clock):
    start = clock.now()
    with pytest.raises(errors.MessageNotExist):
        queue.receive(ACCOUNT, "q", 1, 4, received_at=start + 60)  # clock skew: never a longer wait
    assert clock.now() - start == pytest.approx(4.0)


def test_without_a_request_time_the_wait_starts_at_the_call(queue, clock):
    start = clock.now()
    with pytest.raises(errors.MessageNotExist):
        queue.receive(ACCOUNT, "q", 1, 30)
    assert clock.now() - start == pytest.approx(deadlines.LAST_CLAIM_SECONDS)


def test_a_longer_configured_wait_still_claims_nothing_after_the_last_claim(make, clock):
    service = make(max_poll_seconds=28)  # (the default before the retries' time was counted in)
    service.create_queue(ACCOUNT, "q", None)
    arrived = clock.now()
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 30, received_at=arrived)
    assert clock.now() - arrived == pytest.approx(deadlines.LAST_CLAIM_SECONDS)
    assert deadlines.request_seconds(True, 28) + deadlines.ATTEMPT_SECONDS <= 30
