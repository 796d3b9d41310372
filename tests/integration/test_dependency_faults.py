"""The local server on `MNS_ENGINE=moto` with DynamoDB faults injected at its client's botocore layer (issue: survive
the dependencies): a fifth of the calls throttled, in conflict with a transaction, or their answer lost after they
were applied. Nothing acknowledged is lost, no request takes over 30 s (a long poll's whole wait included), every
error a client sees is the retryable `ServiceUnavailable` (503); and a request that meets no throttling answers as fast
while others' are throttled.
"""

from __future__ import annotations

import threading
import time

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import QueueMeta

from bench.dependency_faults import REQUEST_LIMIT_SECONDS, run, sends_while_others_throttled, start_server
from tests.support.faults import THROTTLE, Faults


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as env:  # (the in-process server prints no EMF; other tests of this worker do)
        env.setenv("POWERTOOLS_METRICS_DISABLED", "true")
        started, account_of = start_server()
        yield started, account_of
        started.stop()


@pytest.mark.parametrize(("fifo", "producers", "each", "consumers"), [(False, 3, 30, 3), (True, 2, 15, 2)])
def test_a_fifth_of_dynamodb_calls_failing_loses_nothing_acknowledged(server, fifo, producers, each, consumers):
    local, account_of = server
    faults = Faults(rate=0.2, seed=11).install(local.clients("dynamodb"))
    try:
        outcome = run(account_of, f"faults-{'fifo' if fifo else 'standard'}", producers, each, consumers, fifo)
    finally:
        faults.rate = 0.0
    assert min(faults.counts.values()) >= 5 and len(faults.counts) == 3, faults.counts  # every kind, many times
    assert len(outcome.acknowledged) == producers * each
    assert not outcome.lost
    assert outcome.deleted == outcome.acknowledged
    assert not outcome.unretryable, outcome.errors  # no 500
    assert not outcome.wrong_deletes  # no delete answered MessageNotExist while its receipt held
    assert outcome.slowest < REQUEST_LIMIT_SECONDS


def test_a_request_that_meets_no_throttling_answers_as_fast_while_others_are_throttled(server):
    local, account_of = server
    queries = Faults(rate=0.0, kinds=(THROTTLE,), operations=frozenset({"Query"})).install(local.clients("dynamodb"))
    before, during = sends_while_others_throttled(account_of, queries)
    assert queries.counts[THROTTLE] > 20  # the receivers' Queries, throttled and retried throughout
    assert sorted(during)[len(during) // 2] < sorted(before)[len(before) // 2] * 3 + 0.02
    assert max(during) < 1.0  # (a lock held across one receive's backoff would hold a send for seconds)


@pytest.mark.slow  # (each receive waits in real time to the end of its long poll: about 27 s)
def test_a_long_poll_under_dynamodb_faults_is_answered_within_thirty_seconds(server):
    """Receives asking the longest wait (30 s) of an empty queue while a fifth of DynamoDB's calls fail, and every call
    from 20 s on (the worst the faults can do: the last claims retried to the end of their budget): each is answered
    (no message, or a retryable 503) before its client's 30 s."""
    local, account_of = server
    name = f"long-poll-faults-{time.monotonic_ns()}"
    account_of().get_queue(name).create(QueueMeta())
    faults = Faults(rate=0.2, seed=38).install(local.clients("dynamodb"))
    answered: list[tuple[float, str]] = []

    def receive() -> None:
        queue = account_of().get_queue(name)
        started = time.monotonic()
        try:
            queue.receive_message(30)
            outcome = "message"
        except MNSServerException as error:
            outcome = error.type
        answered.append((time.monotonic() - started, outcome))

    threads = [threading.Thread(target=receive) for _ in range(4)]
    worst = threading.Timer(20.0, lambda: setattr(faults, "rate", 1.0))
    try:
        for thread in threads:
            thread.start()
        worst.start()
        for thread in threads:
            thread.join()
    finally:
        worst.cancel()
        faults.rate = 0.0
    assert sum(faults.counts.values()) >= 5, faults.counts  # the polls' claims met faults throughout
    assert all(outcome in ("MessageNotExist", "ServiceUnavailable") for _, outcome in answered), answered
    assert len(answered) == 4 and max(seconds for seconds, _ in answered) < 30.0, answered
