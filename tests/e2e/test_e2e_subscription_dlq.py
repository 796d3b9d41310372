"""Subscriptions' dead-letter queues end to end: the SDK drives `python -m local_runtime`, whose retry
schedule runs compressed (`MNS_PUSH_TIME_SCALE`: the same state machine, its waits 5,000 times shorter).

SDK 1.3.0's `SubscriptionMeta` cannot carry a DlqPolicy: Subscribe and SetSubscriptionAttributes with one
are raw signed requests; everything else (topics, queues, publishing, receiving the dead letters, reading
the subscription) goes through the SDK.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
import xml.etree.ElementTree as ET

import pytest
from mns.account import Account
from mns.mns_exception import MNSExceptionBase
from mns.queue import QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage

from tests.e2e.resources import fresh_topic, text_queue
from tests.support.local_server import ServerClock
from tests.support.raw_http import NS, RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A, ACCOUNT_B, local_server

ACCOUNT = ACCOUNT_A[0]
REGION = "cn-hangzhou"
TIME_SCALE = "0.0002"  # BACKOFF_RETRY waits 2-4 ms, EXPONENTIAL_DECAY_RETRY 17 s in all


@pytest.fixture(scope="module")
def dlq_clock(tmp_path_factory, engine) -> ServerClock:
    return ServerClock(tmp_path_factory.mktemp(f"dlq-clock-{engine}") / "offset")


@pytest.fixture(scope="module")
def fast_endpoint(tmp_path_factory, engine, dlq_clock):
    """A server of its own whose push retries wait TIME_SCALE of their seconds, on a clock a test may run faster."""
    with local_server(
        tmp_path_factory,
        engine,
        "dlq",
        dlq_clock,
        MNS_PUSH_TIME_SCALE=TIME_SCALE,
        # The push worker's info lines (a retry not attempted, a delivery dead-lettered) go to the server log.
        POWERTOOLS_LOG_LEVEL=os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO"),
    ) as url:
        yield url


@pytest.fixture
def account(fast_endpoint) -> Account:
    return Account(fast_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def raw(fast_endpoint) -> RawClient:
    return RawClient(fast_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def topic(account):
    yield from fresh_topic(account, "dlq-" + uuid.uuid4().hex[:16])


@pytest.fixture
def dlq(account):
    q = text_queue(account, "dlq-" + uuid.uuid4().hex[:16])
    yield q
    q.delete()


def subscription_body(endpoint: str | None = None, policy: str | None = None, **fields: str) -> str:
    inner = f"<Endpoint>{endpoint}</Endpoint>" if endpoint else ""
    inner += "".join(f"<{name}>{value}</{name}>" for name, value in fields.items())
    if policy is not None:
        inner += f"<DlqPolicy>{policy}</DlqPolicy>"
    return f'<?xml version="1.0" encoding="UTF-8"?><Subscription xmlns="http://mns.aliyuncs.com/doc/v1">{inner}</Subscription>'


def policy(queue: str, enabled: str = "True") -> str:
    return f"<Enabled>{enabled}</Enabled><DeadLetterTargetQueue>{queue}</DeadLetterTargetQueue>"


def subscribe(raw: RawClient, topic, name: str, endpoint: str, dlq_policy: str | None = None, **fields: str):
    return raw.request(
        "PUT", f"/topics/{topic.topic_name}/subscriptions/{name}", subscription_body(endpoint, dlq_policy, **fields)
    )


def set_policy(raw: RawClient, topic, name: str, dlq_policy: str):
    body = subscription_body(policy=dlq_policy)
    return raw.request("PUT", f"/topics/{topic.topic_name}/subscriptions/{name}?metaoverride=true", body)


def raw_policy(raw: RawClient, topic, name: str) -> dict[str, str] | None:
    resp = raw.request("GET", f"/topics/{topic.topic_name}/subscriptions/{name}")
    assert resp.status == 200, resp.body
    node = resp.xml().find(NS + "DlqPolicy")
    if node is None:
        return None
    policy = json.loads(node.text or "")
    return {
        "Enabled": "True" if policy["Enabled"] else "False",
        "DeadLetterTargetQueue": policy["DeadLetterTargetQueue"],
    }


def receive_dead_letter(queue, wait: int = 10):
    deadline = time.monotonic() + wait
    while True:
        try:
            return queue.receive_message(3)
        except MNSExceptionBase as error:
            if getattr(error, "type", "") != "MessageNotExist" or time.monotonic() > deadline:
                raise


def assert_no_message(queue) -> None:
    with pytest.raises(MNSExceptionBase) as raised:
        queue.receive_message(1)
    assert raised.value.type == "MessageNotExist"


def origin_of(received) -> dict[str, str]:
    return {name: value.string_value for name, value in received.get_system_properties().items()}


def test_an_always_failing_endpoint_dead_letters_after_its_last_retry(raw, topic, dlq, push_endpoint):
    push_endpoint.status_for = lambda n: 500
    resp = subscribe(
        raw, topic, "s", push_endpoint.url("/hook"), policy(dlq.queue_name), NotifyStrategy="BACKOFF_RETRY"
    )
    assert resp.status == 201, resp.body
    published = topic.publish_message(TopicMessage("never delivered", "news"))
    received = receive_dead_letter(dlq)
    hits = push_endpoint.hits
    assert len(hits) == 4 and all(h.status == 500 for h in hits)  # the first attempt and 3 retries, then the DLQ
    assert received.message_body.encode() == hits[-1].body  # the notification the endpoint was sent
    root = ET.fromstring(received.message_body)
    fields = {child.tag[len(NS) :]: child.text for child in root}
    assert root.tag == NS + "Notification"
    assert fields["Message"] == "never delivered" and fields["MessageId"] == published.message_id
    assert fields["MessageTag"] == "news" and fields["SubscriptionName"] == "s"
    assert origin_of(received) == {
        "DLQMessageType": "SUBSCRIPTION",
        "DLQSourceArn": f"acs:mns:{REGION}:{ACCOUNT}:topics/{topic.topic_name}/subscriptions/s",
        "DLQOriginMessageId": published.message_id,
    }
    dlq.delete_message(received.receipt_handle)
    time.sleep(0.5)
    assert len(push_endpoint.hits) == 4
    assert_no_message(dlq)  # dead-lettered once


@pytest.mark.parametrize("content_format", ["JSON", "SIMPLIFIED"])
def test_the_dead_letter_is_in_the_subscriptions_content_format(raw, topic, dlq, push_endpoint, content_format):
    push_endpoint.status_for = lambda n: 503
    resp = subscribe(
        raw, topic, "s", push_endpoint.url("/hook"), policy(dlq.queue_name), NotifyContentFormat=content_format
    )
    assert resp.status == 201, resp.body
    published = topic.publish_message(TopicMessage("payload"))
    received = receive_dead_letter(dlq)
    assert received.message_body.encode() == push_endpoint.hits[-1].body
    if content_format == "JSON":
        assert json.loads(received.message_body)["MessageId"] == published.message_id
    else:
        assert received.message_body == "payload"
    assert origin_of(received)["DLQOriginMessageId"] == published.message_id


def test_a_mail_push_that_fails_for_good_is_dead_lettered_without_retries(raw, topic, dlq):
    """No DirectMail attribute: no retry can deliver it, so it goes to the DLQ at once."""
    assert subscribe(raw, topic, "m", "mail:directmail:someone@example.com", policy(dlq.queue_name)).status == 201
    published = topic.publish_message(TopicMessage("mail body"))
    received = receive_dead_letter(dlq, wait=5)
    assert received.message_body == "mail body"
    assert origin_of(received)["DLQSourceArn"].endswith(f":topics/{topic.topic_name}/subscriptions/m")
    assert origin_of(received)["DLQOriginMessageId"] == published.message_id


def test_without_a_dlq_policy_an_exhausted_push_is_still_dropped(account, raw, topic, dlq, push_endpoint):
    push_endpoint.status_for = lambda n: 500
    topic.get_subscription("plain").subscribe(SubscriptionMeta(push_endpoint.url("/plain")))
    assert subscribe(raw, topic, "off", push_endpoint.url("/off"), policy(dlq.queue_name, "False")).status == 201
    topic.publish_message(TopicMessage("dropped"))
    hits = push_endpoint.wait_for(8, timeout=15)
    time.sleep(1.0)  # retries exhausted; a dead letter would be in by now
    assert sorted(h.path for h in hits) == ["/off"] * 4 + ["/plain"] * 4
    assert len(push_endpoint.hits) == 8
    assert_no_message(dlq)


def test_get_subscription_attributes_returns_the_policy_and_the_sdk_still_reads_it(raw, topic, dlq, push_endpoint):
    assert subscribe(raw, topic, "s", push_endpoint.url("/hook"), policy(dlq.queue_name)).status == 201
    assert raw_policy(raw, topic, "s") == {"Enabled": "True", "DeadLetterTargetQueue": dlq.queue_name}
    meta = topic.get_subscription("s").get_attributes()  # SDK 1.3.0 parses the answer
    assert meta.endpoint == push_endpoint.url("/hook") and meta.notify_strategy == "BACKOFF_RETRY"
    # Subscribe again: the same policy is the same subscription (204), another one a conflict (409).
    assert subscribe(raw, topic, "s", push_endpoint.url("/hook"), policy(dlq.queue_name)).status == 204
    assert_mns_error(subscribe(raw, topic, "s", push_endpoint.url("/hook")), 409, "SubscriptionAlreadyExist")
    # Turned off (the queue it names is kept), then on again.
    assert set_policy(raw, topic, "s", "<Enabled>False</Enabled>").status == 204
    assert raw_policy(raw, topic, "s") == {"Enabled": "False", "DeadLetterTargetQueue": dlq.queue_name}
    assert set_policy(raw, topic, "s", "<Enabled>True</Enabled>").status == 204  # the queue it kept
    assert raw_policy(raw, topic, "s") == {"Enabled": "True", "DeadLetterTargetQueue": dlq.queue_name}
    # The SDK's own SetSubscriptionAttributes (NotifyStrategy only) leaves the policy as it is.
    topic.get_subscription("s").set_attributes(SubscriptionMeta(notify_strategy="EXPONENTIAL_DECAY_RETRY"))
    assert raw_policy(raw, topic, "s") == {"Enabled": "True", "DeadLetterTargetQueue": dlq.queue_name}
    plain = topic.get_subscription("plain")
    plain.subscribe(SubscriptionMeta(push_endpoint.url("/plain")))
    assert raw_policy(raw, topic, "plain") is None


def test_a_policy_set_later_dead_letters_the_next_exhausted_push(raw, topic, dlq, push_endpoint):
    push_endpoint.status_for = lambda n: 500
    topic.get_subscription("s").subscribe(SubscriptionMeta(push_endpoint.url("/hook")))
    assert set_policy(raw, topic, "s", policy(dlq.queue_name)).status == 204
    published = topic.publish_message(TopicMessage("later"))
    assert origin_of(receive_dead_letter(dlq))["DLQOriginMessageId"] == published.message_id


def test_error_codes(raw, topic, dlq, push_endpoint):
    url = push_endpoint.url("/hook")
    missing = "absent-" + uuid.uuid4().hex[:8]
    assert_mns_error(subscribe(raw, topic, "s", url, policy(missing)), 404, "QueueNotExist")
    for bad in (
        "<Enabled>maybe</Enabled><DeadLetterTargetQueue>q</DeadLetterTargetQueue>",
        "<Enabled>True</Enabled>",
        "<Enabled>True</Enabled><DeadLetterTargetQueue></DeadLetterTargetQueue>",
        "<Enabled>True</Enabled><DeadLetterTargetQueue>bad_name</DeadLetterTargetQueue>",
        f"<Enabled>True</Enabled><DeadLetterTargetQueue>{'q' * 257}</DeadLetterTargetQueue>",
        "",
    ):
        assert_mns_error(subscribe(raw, topic, "s", url, bad), 400, "InvalidArgument")
    # A queue endpoint cannot dead-letter into its own queue.
    own = f"acs:mns:{REGION}:{ACCOUNT}:queues/{dlq.queue_name}"
    assert_mns_error(subscribe(raw, topic, "q", own, policy(dlq.queue_name)), 400, "InvalidArgument")
    # Nothing was created by the refused requests.
    assert_mns_error(raw.request("GET", f"/topics/{topic.topic_name}/subscriptions/s"), 404, "SubscriptionNotExist")
    # SetSubscriptionAttributes checks the same, and a missing subscription first.
    assert subscribe(raw, topic, "s", url).status == 201
    assert_mns_error(set_policy(raw, topic, "s", policy(missing)), 404, "QueueNotExist")
    assert_mns_error(set_policy(raw, topic, "s", "<Enabled>yes</Enabled>"), 400, "InvalidArgument")
    assert_mns_error(set_policy(raw, topic, "absent", policy(dlq.queue_name)), 404, "SubscriptionNotExist")
    assert raw_policy(raw, topic, "s") is None  # the refused changes left it as it was


def test_another_accounts_queue_is_not_a_target(fast_endpoint, topic, push_endpoint):
    other = Account(fast_endpoint, ACCOUNT_B[1], ACCOUNT_B[2]).get_queue("dlq-" + uuid.uuid4().hex[:16])
    other.create(QueueMeta())
    try:
        raw = RawClient(fast_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
        resp = subscribe(raw, topic, "s", push_endpoint.url("/hook"), policy(other.queue_name))
        assert_mns_error(resp, 404, "QueueNotExist")
    finally:
        other.delete()


@pytest.mark.slow
def test_exponential_decay_retry_dead_letters_after_its_176th_retry(raw, topic, dlq, push_endpoint, dlq_clock):
    """A day of waits compressed to 17 s of the server's clock, which the test runs at ten times real time, and 177
    attempts through the server's moto."""
    push_endpoint.status_for = lambda n: 500
    resp = subscribe(
        raw, topic, "s", push_endpoint.url("/hook"), policy(dlq.queue_name), NotifyStrategy="EXPONENTIAL_DECAY_RETRY"
    )
    assert resp.status == 201, resp.body
    published = topic.publish_message(TopicMessage("a day of failures"))
    run = dlq_clock.now() + 120  # the clock runs until the last attempt, 120 s of it at the most
    mover = threading.Thread(
        target=dlq_clock.run_until, args=(lambda: len(push_endpoint.hits) >= 177, run), kwargs={"step": 0.45}
    )
    mover.start()
    try:
        received = receive_dead_letter(dlq, wait=240)
    finally:
        mover.join()
    assert len(push_endpoint.hits) == 177, "a retry was not attempted: see the server log"
    assert origin_of(received)["DLQOriginMessageId"] == published.message_id
