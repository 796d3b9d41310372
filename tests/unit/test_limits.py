"""Limits answered as MNS answers them: a queue's TenantRateLimitPolicy (MaxReceivesPerSecond) and the
account request limit refuse with QpsLimitExceeded (400); a burst past the policy loses and doubles nothing."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from tests.unit.access_calls import OTHER_ROOT, ROOT, Answer, HandClock, World

LIMIT = 5
MESSAGES = 40
CONSUMERS = 16


def limited_queue(world: World, limit: int = LIMIT, messages: int = MESSAGES) -> None:
    policy = f"<TenantRateLimitPolicy><Enabled>true</Enabled><MaxReceivesPerSecond>{limit}</MaxReceivesPerSecond></TenantRateLimitPolicy>"
    assert world.call(ROOT, "PUT", "/queues/limited", f"<Queue>{policy}</Queue>").status == 201
    for i in range(messages):
        sent = world.call(
            ROOT, "POST", "/queues/limited/messages", f"<Message><MessageBody>m{i}</MessageBody></Message>"
        )
        assert sent.status == 201


def test_the_policy_is_kept_and_answered_as_the_openapi_names_it():
    world = World()
    limited_queue(world, limit=7, messages=0)
    policy = json.loads(world.call(ROOT, "GET", "/queues/limited").value("TenantRateLimitPolicy") or "")
    assert policy == {"Enabled": True, "MaxReceivesPerSecond": 7}
    off = '<Queue><TenantRateLimitPolicy>{"Enabled":false}</TenantRateLimitPolicy></Queue>'
    assert world.call(ROOT, "PUT", "/queues/limited?metaoverride=true", off).status == 204
    assert world.call(ROOT, "GET", "/queues/limited").value("TenantRateLimitPolicy") is None


@pytest.mark.parametrize("value", ["0", "100001", "x", ""])
def test_a_limit_out_of_range_is_invalid(value):
    world = World()
    body = f"<Queue><TenantRateLimitPolicy><MaxReceivesPerSecond>{value}</MaxReceivesPerSecond></TenantRateLimitPolicy></Queue>"
    answer = world.call(ROOT, "PUT", "/queues/bad", body)
    assert (answer.status, answer.code) == (400, "InvalidArgument")


def _burst(world: World, receipts: list[str], refusals: list[Answer]) -> None:
    """CONSUMERS concurrent batch receives within one second of the clock."""
    lock = threading.Lock()

    def consume() -> None:
        answer = world.call(ROOT, "GET", "/queues/limited/messages?numOfMessages=1&waitseconds=0")
        with lock:
            if answer.status == 200:
                receipts.append(answer.body.decode())
            else:
                refusals.append(answer)

    threads = [threading.Thread(target=consume) for _ in range(CONSUMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_a_receive_burst_past_the_policy_is_refused_and_no_message_is_lost_or_received_twice():
    clock = HandClock()
    world = World(clock)
    limited_queue(world)
    bodies: Counter[str] = Counter()
    seconds = 0
    while sum(bodies.values()) < MESSAGES:
        receipts: list[str] = []
        refusals: list[Answer] = []
        _burst(world, receipts, refusals)
        assert len(receipts) == LIMIT
        assert len(refusals) == CONSUMERS - LIMIT
        assert {(a.status, a.code, a.message) for a in refusals} == {
            (400, "QpsLimitExceeded", "The qps limit of the queue is exceeded.")
        }
        assert all(len(a.request_id) == 24 for a in refusals)
        for body in receipts:
            bodies.update(body.split("<MessageBody>")[1].split("</MessageBody>")[0] for _ in [0])
            handle = body.split("<ReceiptHandle>")[1].split("</ReceiptHandle>")[0]
            assert world.call(ROOT, "DELETE", f"/queues/limited/messages?ReceiptHandle={handle}").status == 204
        clock.sleep(1.0)
        seconds += 1
    assert bodies == Counter(f"m{i}" for i in range(MESSAGES))  # every message once
    assert seconds == MESSAGES // LIMIT
    assert world.call(ROOT, "GET", "/queues/limited/messages?waitseconds=0").code == "MessageNotExist"


def test_peeks_and_other_queues_are_not_counted():
    world = World()
    limited_queue(world, limit=1, messages=2)
    for _ in range(5):
        assert world.call(ROOT, "GET", "/queues/limited/messages?peekonly=true").status == 200
    assert world.call(ROOT, "GET", "/queues/limited/messages?waitseconds=0").status == 200
    assert world.call(ROOT, "GET", "/queues/limited/messages?waitseconds=0").code == "QpsLimitExceeded"
    assert world.call(ROOT, "GET", "/queues/q/messages?waitseconds=0").status == 200


def test_the_account_limit_refuses_an_accounts_requests_past_it_and_not_anothers():
    clock = HandClock()
    world = World(clock, account_requests_per_second=20)
    clock.sleep(1.0)  # past the second the world was set up in
    answers = [world.call(ROOT, "GET", "/queues/q") for _ in range(25)]
    assert [a.status for a in answers] == [200] * 20 + [400] * 5
    assert {(a.code, a.message) for a in answers[20:]} == {
        ("QpsLimitExceeded", "The qps limit of the account is exceeded.")
    }
    assert world.call(OTHER_ROOT, "GET", "/queues").status == 200  # another account counts apart
    clock.sleep(1.0)
    assert world.call(ROOT, "GET", "/queues/q").status == 200


def test_without_an_account_limit_nothing_is_counted():
    world = World()
    assert all(world.call(ROOT, "GET", "/queues/q").status == 200 for _ in range(200))
