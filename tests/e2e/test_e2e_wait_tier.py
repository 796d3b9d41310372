"""The wait tier end to end: the local server behind the holder (`wait_tier/`, in a process of its own, as `make run
WAIT_TIER=holder` runs it), driven by the official SDK. A receive that finds nothing is held by the holder, not by
the server; each way a message becomes receivable wakes a held receive within a second; a forged signature is
refused; nothing is lost when the tier is killed or a wake is lost. The loads (a burst of first polls, 1,000 idle
consumers, a busy queue's wakes) are in `test_e2e_wait_tier_loads.py`."""

from __future__ import annotations

import statistics
import time
import uuid
from collections import Counter

import pytest
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Message
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from mnsd.waiting import contract
from tests.e2e.tier_run import TierRun, holds, receive_later, run_consumers, tier_server, until_held, wait_for
from tests.support.local_server import free_port
from tests.support.raw_http import NS, RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A, server_env
from wait_tier.tier import Tier

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'
BOUND = 1.0  # a held receive is woken within this of its message becoming receivable


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> TierRun:
    with tier_server(tmp_path_factory.mktemp("wait-tier"), server_env) as started:
        yield started


@pytest.fixture
def account(run):
    """A factory of SDK clients of the tier (one per thread: the SDK client is not thread-safe)."""
    return lambda: Account(run.url, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def raw(run) -> RawClient:
    return RawClient(run.url, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def make_queue(raw, account):
    def make(inner: str = "<VisibilityTimeout>30</VisibilityTimeout>"):
        name = "wt-" + uuid.uuid4().hex[:16]
        body = f'<?xml version="1.0" encoding="UTF-8"?><Queue {XMLNS}>{inner}</Queue>'
        assert raw.request("PUT", f"/queues/{name}", body).status == 201
        q = account().get_queue(name)
        q.set_encoding(False)
        return q

    return make


def held_receive(run: TierRun, account, queue: str, wait: int = 20, batch: int = 0):
    """A receive started in a thread, returned once the tier holds it."""
    before = holds(run)
    future = receive_later(account, queue, wait, batch)
    until_held(run, before + 1)
    return future


def woken(future, bodies: list[str], since: float) -> list:
    """The held receive's messages: `bodies`, answered within BOUND of `since` (when they became receivable)."""
    (messages, at) = got(future)
    assert [m.message_body for m in messages] == bodies
    assert at - since < BOUND
    return messages


def got(future, timeout: float = 25.0):
    result = future.result(timeout)
    assert not isinstance(result, Exception), result
    return result


# --- a receive is held by the tier, and answered MessageNotExist when its wait ends ---------------------------


def test_an_empty_queue_holds_the_receive_outside_the_server_and_answers_message_not_exist(run, make_queue):
    q = make_queue()
    calls = run.stats()["origin_calls"]
    started = time.time()
    with pytest.raises(MNSServerException) as exc:
        q.receive_message(3)
    waited = time.time() - started
    assert exc.value.type == "MessageNotExist"
    assert 3.0 <= waited <= 3.3, waited
    # The server answered once (the hold): it was not waiting those 3 s.
    assert run.stats()["origin_calls"] - calls == 1


def test_a_receive_of_a_message_already_there_is_answered_at_once(run, make_queue):
    q = make_queue()
    q.send_message(Message("ready"))
    started = time.time()
    assert q.receive_message(20).message_body == "ready"
    assert time.time() - started < 0.5


# --- every way a message becomes receivable wakes a held receive ---------------------------------------------


def test_a_send_wakes_a_held_receive_p50_within_100_ms(run, account, make_queue):
    q = make_queue()
    latencies = []
    for n in range(10):
        future = held_receive(run, account, q.queue_name)
        q.send_message(Message(f"m{n}"))
        sent = time.time()
        (messages, at) = got(future)
        assert [m.message_body for m in messages] == [f"m{n}"]
        latencies.append(at - sent)
        q.delete_message(messages[0].receipt_handle)
    assert max(latencies) < BOUND, latencies
    assert statistics.median(latencies) < 0.1, latencies


def test_a_batch_send_wakes_as_many_held_receives(run, account, make_queue):
    q = make_queue()
    before = holds(run)
    futures = [receive_later(account, q.queue_name, 20) for _ in range(4)]
    until_held(run, before + 4)
    q.batch_send_message([Message(f"b{n}") for n in range(4)])
    sent = time.time()
    results = [got(f) for f in futures]
    assert sorted(m.message_body for ms, _ in results for m in ms) == ["b0", "b1", "b2", "b3"]
    assert max(at for _, at in results) - sent < BOUND


def test_the_end_of_a_delay_wakes_a_held_receive(run, account, make_queue):
    q = make_queue()
    future = held_receive(run, account, q.queue_name)
    message = Message("later")
    message.set_delayseconds(2)
    q.send_message(message)
    due = time.time() + 2
    (messages, at) = got(future)
    assert [m.message_body for m in messages] == ["later"]
    assert -0.1 < at - due < BOUND


def test_a_visibility_timeout_running_out_wakes_a_held_receive(run, account, make_queue):
    q = make_queue("<VisibilityTimeout>2</VisibilityTimeout>")
    q.send_message(Message("dropped"))
    first = q.receive_message(1)  # not deleted: receivable again at NextVisibleTime
    future = held_receive(run, account, q.queue_name)
    (messages, at) = got(future)
    assert [m.message_id for m in messages] == [first.message_id]
    assert at - int(first.next_visible_time) / 1000 < BOUND


def test_change_message_visibility_wakes_a_held_receive(run, account, make_queue):
    q = make_queue()
    q.send_message(Message("again"))
    first = q.receive_message(1)
    future = held_receive(run, account, q.queue_name)
    changed = q.change_message_visibility(first.receipt_handle, 1)
    (messages, at) = got(future)
    assert [m.message_body for m in messages] == ["again"]
    assert at - int(changed.next_visible_time) / 1000 < BOUND


def test_a_batch_visibility_change_giving_messages_back_wakes_held_receives(run, account, raw, make_queue):
    q = make_queue()
    q.batch_send_message([Message("back-0"), Message("back-1")])
    first = q.batch_receive_message(16, 1)
    future = held_receive(run, account, q.queue_name, batch=16)
    handles = "".join(f"<ReceiptHandle>{m.receipt_handle}</ReceiptHandle>" for m in first)
    body = f"<ChangeVisibilities {XMLNS}><VisibilityTimeout>0</VisibilityTimeout>{handles}</ChangeVisibilities>"
    given_back = time.time()
    assert raw.request("PUT", f"/queues/{q.queue_name}/messages", body).status == 200
    (messages, at) = got(future)
    assert sorted(m.message_body for m in messages) == ["back-0", "back-1"]
    assert at - given_back < BOUND


def test_a_rewind_wakes_a_held_receive(run, account, raw, make_queue):
    q = make_queue("<RewindPeriod>600</RewindPeriod>")
    since = int(time.time())
    q.send_message(Message("replayed"))
    received = q.receive_message(1)
    q.delete_message(received.receipt_handle)
    future = held_receive(run, account, q.queue_name)
    assert raw.request("PUT", f"/queues/{q.queue_name}?rewindtime={since}").status == 204
    woken(future, ["replayed"], time.time())


def test_a_dead_letter_redrive_wakes_a_held_receive(run, account, raw, make_queue):
    dlq = make_queue()
    policy = (
        f"<DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>{dlq.queue_name}</DeadLetterTargetQueue>"
        "<MaxReceiveCount>1</MaxReceiveCount></DlqPolicy>"
    )
    source = make_queue(f"<VisibilityTimeout>1</VisibilityTimeout>{policy}")
    source.send_message(Message("dead"))
    source.receive_message(1)
    time.sleep(1.1)
    with pytest.raises(MNSServerException):
        source.receive_message(0)  # moved to the dead-letter queue on this receive
    assert dlq.get_attributes().active_messages == 1
    future = held_receive(run, account, source.queue_name)
    assert raw.request("PUT", f"/queues/{dlq.queue_name}?redrive=true").status == 200
    woken(future, ["dead"], time.time())


def test_a_push_to_a_queue_endpoint_wakes_a_held_receive(run, account, make_queue):
    q = make_queue()
    topic = account().get_topic("wt-t-" + uuid.uuid4().hex[:12])
    topic.create(TopicMeta())
    endpoint = f"acs:mns:cn-hangzhou:{ACCOUNT_A[0]}:queues/{q.queue_name}"
    topic.get_subscription("to-queue").subscribe(SubscriptionMeta(endpoint, notify_content_format="SIMPLIFIED"))
    future = held_receive(run, account, q.queue_name)
    topic.publish_message(TopicMessage("pushed"))
    woken(future, ["pushed"], time.time())
    topic.delete()


def test_a_receivers_copy_wakes_a_receive_held_on_the_receivers_address(run, account, raw, make_queue):
    q = make_queue()
    body = f'<?xml version="1.0" encoding="UTF-8"?><Receiver {XMLNS}></Receiver>'
    assert raw.request("PUT", f"/queues/{q.queue_name}/receivers/audit", body).status == 201
    future = held_receive(run, account, f"{q.queue_name}.audit")
    q.send_message(Message("copied"))
    woken(future, ["copied"], time.time())


# --- the origin trusts only the tier ---------------------------------------------------------------------------


def test_a_forged_signature_is_refused_and_the_tiers_own_is_held(run, make_queue):
    q = make_queue()
    direct = RawClient(run.origin, ACCOUNT_A[1], ACCOUNT_A[2])
    resource = f"/queues/{q.queue_name}/messages?waitseconds=20"
    sig = contract.SIG_HEADER
    forged = direct.request("GET", resource, headers={sig: contract.sign("not-the-key", time.time())})
    assert_mns_error(forged, 403, "AccessDenied")
    assert contract.HOLD_HEADER.lower() not in forged.headers
    expired = direct.request("GET", resource, headers={sig: contract.sign(run.key, time.time() - 7200)})
    assert_mns_error(expired, 403, "AccessDenied")
    genuine = direct.request("GET", resource, headers={sig: contract.sign(run.key, time.time())})
    assert genuine.status == 404 and int(genuine.headers[contract.HOLD_HEADER.lower()]) > time.time() * 1000 + 19_000
    assert genuine.xml().find(NS + "Code").text == "MessageNotExist"  # the answer the holder gives at the timeout
    # A client cannot pass for the tier through it: the contract's headers it sends are dropped.
    through = RawClient(run.url, ACCOUNT_A[1], ACCOUNT_A[2])
    forged_through = through.request(
        "GET", resource.replace("20", "1"), headers={sig: "forged", "Mns-Wait-Deadline": "1"}
    )
    assert_mns_error(forged_through, 404, "MessageNotExist")
    assert not any(h.startswith(contract.PREFIX) for h in forged_through.headers)
    # Without the tier's signature the server waits itself, as it does without the tier.
    started = time.time()
    assert_mns_error(direct.request("GET", f"/queues/{q.queue_name}/messages?waitseconds=1"), 404, "MessageNotExist")
    assert time.time() - started >= 0.9


# --- nothing lost ----------------------------------------------------------------------------------------------


def test_a_lost_wake_loses_no_message(run, account, make_queue):
    q = make_queue()
    wake_port = run.tier.wake_port
    run.restart(kill=False, wake_port=free_port())  # the server's wakes go to a port no one listens on: lost
    try:
        future = held_receive(run, account, q.queue_name, wait=3)
        # (sent to the server itself: a send through the tier tells it in its answer, and posts no wake to lose)
        direct = Account(run.origin, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(q.queue_name)
        direct.set_encoding(False)
        direct.send_message(Message("still there"))
        (messages, _) = got(future)
        assert messages == []  # the held receive was never woken: its wait ended
    finally:
        run.restart(kill=False, wake_port=wake_port)
    assert q.receive_message(1).message_body == "still there"  # the next poll has it


@pytest.mark.slow
def test_a_hundred_held_receives_and_a_thousand_messages_each_received_once_with_few_wasted_origin_calls(
    run, account, make_queue
):
    """100 single receives held on one queue, 1,000 messages sent in batches of 16: each received by one owner, none
    lost. Each message needs one origin call, its claim; a consumer that polls again after it needs one more, a
    hold, when the queue is empty then. Any other origin call is a held receive asking again and finding nothing
    (woken for a message another receive took, or a look again after a wake that came while the origin looked):
    those stay few."""
    q = make_queue("<VisibilityTimeout>120</VisibilityTimeout>")
    direct = Account(run.origin, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(q.queue_name)
    direct.set_encoding(False)
    owners: Counter = Counter()
    errors: list = []
    before = holds(run)
    origin = lambda: Account(run.origin, ACCOUNT_A[1], ACCOUNT_A[2])  # noqa: E731 (deletes take the direct route)
    stop, _ = run_consumers(account, q.queue_name, 100, owners, errors, deleter=origin)
    until_held(run, before + 100, timeout=60)
    first = run.stats()["calls"]
    for start in range(0, 1000, 16):
        direct.batch_send_message([Message(f"w{n}") for n in range(start, min(start + 16, 1000))])
    wait_for(owners, 1000, 60)
    time.sleep(1.0)  # (the consumers' last polls held)
    calls = {k: n - first.get(k, 0) for k, n in run.stats()["calls"].items()}
    stop.set()
    assert errors == []
    assert set(owners) == {f"w{n}" for n in range(1000)}  # 0 lost
    assert max(owners.values()) == 1  # one owner each
    claims = sum(n for k, n in calls.items() if k.endswith(".answered"))
    assert claims == 1000, calls
    wasted = sum(n for k, n in calls.items() if k.endswith(".held") and not k.startswith("first."))
    print(f"origin calls per message: {sum(calls.values()) / 1000:.2f}, wasted {wasted / 1000:.2f}: {calls}")
    # A guard against wake storms (a wake re-asking every held receive would waste ~100 calls a message): quiet runs
    # measure 0.18-0.40 (bench/results/wait_tier.md); with the other test worker loading both cores, up to 0.53.
    assert wasted / 1000 <= 1.0, calls


@pytest.mark.slow
def test_the_tier_killed_and_restarted_mid_run_loses_nothing(run, account, make_queue):
    q = make_queue("<VisibilityTimeout>5</VisibilityTimeout>")
    direct = Account(run.origin, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(q.queue_name)  # producers: the direct route
    direct.set_encoding(False)
    owners: Counter = Counter()
    errors: list = []
    stop, threads = run_consumers(account, q.queue_name, 20, owners, errors)
    for start in range(0, 300, 10):
        direct.batch_send_message([Message(f"k{n}") for n in range(start, start + 10)])
        if start == 150:
            run.restart(kill=True)  # SIGKILL: every held receive and unanswered wake dropped
        time.sleep(0.02)
    wait_for(owners, 300, 60)
    stop.set()
    for t in threads:
        t.join(15)
    assert set(owners) == {f"k{n}" for n in range(300)}  # 0 lost
    # A message is received again only if its delete was lost to the restart (then its visibility timed out).
    assert sum(owners.values()) - 300 <= len(errors), (sum(owners.values()), errors)


def test_an_origin_the_tier_cannot_reach_is_a_retryable_internal_error_in_mns_shape(tmp_path):
    tier = Tier(f"http://127.0.0.1:{free_port()}", free_port(), free_port(), "key").start()  # no origin listens
    try:
        q = Account(tier.url, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue("anything")
        with pytest.raises(MNSServerException) as exc:
            q.receive_message(1)
        assert exc.value.type == "InternalError"
        assert exc.value.req_id
    finally:
        tier.stop()
