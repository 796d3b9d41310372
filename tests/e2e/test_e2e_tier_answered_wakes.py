"""A send through the wait tier posts no wake (`contract.WAKES_HEADER`: the holder learns of the message from the
origin's answer), and still wakes a receive held on the same holder and on another (two holders in front of one server,
as two tasks of the tier, each relaying to the other), on each engine, with Alibaba's Python SDK. A send that does not
come through the tier (the server's own port) still posts its wake."""

from __future__ import annotations

import time
import uuid

import pytest
from mns.account import Account
from mns.queue import Message

from tests.e2e.tier_run import TierRun, holds, receive_later, tier_pair, until_held
from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A, server_env

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'
WAIT = 20  # a held receive's wait: far longer than a wake takes (a missed wake leaves it held to the end)
BOUND = 5.0  # a woken receive's answer, at most this after the send (a loaded machine; a wake takes milliseconds)


@pytest.fixture(scope="module")
def pair(tmp_path_factory, engine) -> tuple[TierRun, TierRun]:
    with tier_pair(tmp_path_factory.mktemp(f"answered-wakes-{engine}"), server_env, engine=engine) as started:
        yield started


def account(run: TierRun):
    return lambda: Account(run.url, ACCOUNT_A[1], ACCOUNT_A[2])


def wakes(run: TierRun) -> dict[str, int]:
    """The wakes a holder took, by where from (`posted` to its wake route, `relayed`, `answered`)."""
    return {k: int(v) for k, v in run.stats()["wakes"].items()}


@pytest.fixture
def queue(pair) -> str:
    name = "aw-" + uuid.uuid4().hex[:16]
    body = f'<?xml version="1.0" encoding="UTF-8"?><Queue {XMLNS}><VisibilityTimeout>30</VisibilityTimeout></Queue>'
    assert RawClient(pair[0].url, ACCOUNT_A[1], ACCOUNT_A[2]).request("PUT", f"/queues/{name}", body).status == 201
    return name


def held_on(run: TierRun, queue: str):
    before = holds(run)
    future = receive_later(account(run), queue, WAIT)
    until_held(run, before + 1)
    return future


def send(url: str, queue: str, body: str) -> float:
    q = Account(url, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(queue)
    q.set_encoding(False)
    q.send_message(Message(body))
    return time.time()


def received(future, body: str, since: float) -> None:
    result = future.result(WAIT + 10)
    assert not isinstance(result, Exception), result
    messages, at = result
    assert [m.message_body for m in messages] == [body]
    assert at - since < BOUND, f"woken {at - since:.2f} s after the send"


def test_a_send_through_the_tier_posts_no_wake_and_wakes_a_receive_held_on_the_same_holder(pair, queue) -> None:
    first, _ = pair
    future = held_on(first, queue)
    before = wakes(first)
    since = send(first.url, queue, "same holder")
    received(future, "same holder", since)
    after = wakes(first)
    assert after.get("posted", 0) == before.get("posted", 0)  # no POST to the wake route
    assert after.get("answered", 0) > before.get("answered", 0)


def test_a_send_through_one_holder_wakes_a_receive_held_on_the_other(pair, queue) -> None:
    first, second = pair
    future = held_on(second, queue)
    before = (wakes(first), wakes(second))
    since = send(first.url, queue, "other holder")
    received(future, "other holder", since)
    after = (wakes(first), wakes(second))
    assert [w.get("posted", 0) for w in after] == [w.get("posted", 0) for w in before]  # neither took a posted wake
    assert after[0].get("answered", 0) > before[0].get("answered", 0)
    assert after[1].get("relayed", 0) > before[1].get("relayed", 0)  # the first passed it on


def test_a_send_not_through_the_tier_still_posts_its_wake(pair, queue) -> None:
    first, second = pair
    future = held_on(second, queue)
    before = wakes(first)
    since = send(first.origin, queue, "direct")  # the server's own port: no tier in between
    received(future, "direct", since)
    after = wakes(first)
    assert after.get("posted", 0) > before.get("posted", 0)
    assert after.get("answered", 0) == before.get("answered", 0)
