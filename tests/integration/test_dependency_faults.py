"""The local server on `MNS_ENGINE=moto` with DynamoDB faults injected at its client's botocore layer (issue: survive
the dependencies): a fifth of the calls throttled, in conflict with a transaction, or their answer lost after they
were applied. Nothing acknowledged is lost, no request takes over 35 s, every error a client sees is the retryable
`ServiceUnavailable` (503); and a request that meets no throttling answers as fast while others' are throttled.
"""

from __future__ import annotations

import pytest

from bench.dependency_faults import REQUEST_LIMIT_SECONDS, run, sends_while_others_throttled, start_server
from tests.faults import THROTTLE, Faults


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as env:  # (the in-process server prints no EMF; other tests of this worker do)
        env.setenv("POWERTOOLS_METRICS_DISABLED", "true")
        started, account_of = start_server()
        yield started, account_of
        started.stop()


@pytest.mark.parametrize(("fifo", "producers", "each", "consumers"), [(False, 3, 30, 3), (True, 2, 10, 2)])
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
