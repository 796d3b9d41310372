"""Push delivery end to end: the SDK publishes to `python -m local_runtime`, endpoints in this process receive.

Every HTTP push is checked as the SDK's sample endpoint checks it: the certificate is fetched from
the URL in `x-mns-signing-cert-url` and the RSA-SHA1 signature verified. Retry schedules are
observed on the server's clock, which the test moves (and once in real time): the state machine they come from
runs inside the server (moto), its waits on that clock.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import time
import uuid
import xml.etree.ElementTree as ET

import pytest
from mns.account import Account
from mns.mns_common import TopicHelper
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from tests.e2e.resources import text_queue
from tests.support.local_server import ServerClock
from tests.support.loopback import LoopbackListener
from tests.support.push_receiver import PushEndpoint, verify_push_signature
from tests.support.servers import local_server

NS = "{http://mns.aliyuncs.com/doc/v1}"
ACCOUNT = "1000000000000001"
ACCOUNT_KEY = ("KEYA", "SECRETA")
REGION = "cn-hangzhou"


def subscribe(topic, name: str, endpoint: str, strategy: str = "", content_format: str = "", tag: str = "") -> None:
    topic.get_subscription(name).subscribe(SubscriptionMeta(endpoint, strategy, content_format, tag))


@pytest.mark.parametrize("content_format", ["XML", "JSON", "SIMPLIFIED"])
def test_http_pushes_are_signed_and_verify_with_the_served_certificate(topic, push_endpoint, content_format):
    subscribe(topic, "s", push_endpoint.url("/hook?from=mns"), content_format=content_format)
    published = topic.publish_message(TopicMessage("héllo <world>", "news"))
    (hit,) = push_endpoint.wait_for(1, timeout=10)
    assert hit.signature_valid
    assert hit.path == "/hook?from=mns"
    assert hit.headers["Content-md5"] == base64.b64encode(hashlib.md5(hit.body).hexdigest().encode()).decode()
    assert hit.headers["x-mns-version"] == "2015-06-06" and hit.headers["x-mns-request-id"]
    if content_format == "SIMPLIFIED":
        assert hit.body.decode() == "héllo <world>"
        assert hit.headers["x-mns-message-id"] == published.message_id
        assert hit.headers["x-mns-message-tag"] == "news"
        return
    if content_format == "XML":
        root = ET.fromstring(hit.body)
        assert root.tag == NS + "Notification"
        fields = {child.tag[len(NS) :]: child.text for child in root}
    else:
        fields = json.loads(hit.body)
    assert fields["Message"] == "héllo <world>"
    assert fields["MessageId"] == published.message_id
    assert (
        fields["MessageMD5"] == published.message_body_md5 == hashlib.md5("héllo <world>".encode()).hexdigest().upper()
    )
    assert fields["MessageTag"] == "news"
    assert (fields["TopicOwner"], fields["Subscriber"], fields["TopicName"]) == (ACCOUNT, ACCOUNT, topic.topic_name)
    assert fields["SubscriptionName"] == "s"
    assert abs(int(fields["PublishTime"]) - time.time() * 1000) < 60_000
    assert "x-mns-message-id" not in hit.headers


def test_the_default_path_is_notifications_and_a_tampered_push_does_not_verify(topic, push_endpoint):
    subscribe(topic, "s", push_endpoint.url())
    topic.publish_message(TopicMessage("body"))
    (hit,) = push_endpoint.wait_for(1, timeout=10)
    assert hit.path == "/notifications" and hit.signature_valid
    # The check is a real one: the same request with one signed header changed fails it.
    tampered = {**hit.headers, "x-mns-request-id": "0" * 24}
    assert not verify_push_signature("POST", hit.path, tampered)
    assert not verify_push_signature("POST", "/other", hit.headers)


def test_signed_headers_are_named_as_the_live_service_names_them(topic, push_endpoint):
    """`Content-md5`, `Content-Type`, `Date` once each (the Java SDK's sample endpoint looks them up so), `x-mns-*`
    in lower case; the Python SDK's sample endpoint, which looks them up in lower case, does not find them."""
    subscribe(topic, "s", push_endpoint.url())
    topic.publish_message(TopicMessage("body"))
    (hit,) = push_endpoint.wait_for(1, timeout=10)
    names = [name for name in hit.headers if name.lower() in ("content-md5", "content-type", "date")]
    assert sorted(names) == ["Content-Type", "Content-md5", "Date"]
    assert all(name == name.lower() for name in hit.headers if name.lower().startswith("x-mns-"))
    assert hit.signature_valid and not hit.python_sample_valid


def test_lower_case_copies_verify_with_both_sample_endpoints(tmp_path_factory, engine, tname):
    """`MNS_PUSH_HEADER_NAMES=with-lower-case-copies`: the Java and the Python SDK's sample endpoints both verify."""
    endpoint = PushEndpoint()
    try:
        with local_server(tmp_path_factory, engine, "lower", MNS_PUSH_HEADER_NAMES="with-lower-case-copies") as url:
            account = Account(url, ACCOUNT_KEY[0], ACCOUNT_KEY[1])
            topic = account.get_topic(tname)
            topic.create(TopicMeta())
            subscribe(topic, "s", endpoint.url())
            topic.publish_message(TopicMessage("body"))
            (hit,) = endpoint.wait_for(1, timeout=10)
    finally:
        endpoint.close()
    assert hit.signature_valid and hit.python_sample_valid
    assert {name for name in hit.headers if name.lower() == "date"} == {"Date", "date"}


@pytest.fixture(scope="module")
def clocked(tmp_path_factory, engine):
    """A server of its own on a clock the test moves (`ServerClock`): the retry schedule's waits follow it, so a
    schedule of seconds is observed without waiting for it. (Its own: the shared server's clock moves a second
    or two at a time only.)"""
    clock = ServerClock(tmp_path_factory.mktemp(f"push-clock-{engine}") / "offset")
    with local_server(tmp_path_factory, engine, "push-clock", clock) as url:
        yield Account(url, ACCOUNT_KEY[0], ACCOUNT_KEY[1]), clock


@pytest.fixture
def clocked_topic(clocked, tname):
    account, _ = clocked
    topic = account.get_topic(tname)
    topic.create(TopicMeta())
    yield topic
    topic.delete()


def next_retry(endpoint: PushEndpoint, clock: ServerClock, after: float, earliest: float, latest: float) -> float:
    """The server's time of the endpoint's next hit, due between `earliest` and `latest` seconds after `after` (the
    server's time of the last hit). The test gives the server a second and a half to start the retry's wait, moves the
    clock to just short of `earliest`, runs it at twice real time up to `latest` and in real time after that; the
    caller checks the gaps between the hits' times, which say whether a retry came early or late."""
    count = len(endpoint.hits)
    time.sleep(1.5)  # the failed attempt answered, its execution waiting for the retry (a wait begun after the clock
    # moved below would end late: half a second was short for moto's workflow on a loaded machine, a gap of 28.7 s)
    clock.advance(max(0.0, after + earliest - 0.3 - clock.now()))
    clock.run_until(lambda: len(endpoint.hits) > count, until=after + latest)
    hits = endpoint.wait_for(count + 1, timeout=30)  # (a loaded machine's delivery)
    assert len(hits) == count + 1, f"no retry by {latest} s"
    return clock.at(hits[-1].at)


def test_exponential_decay_retry_hits_a_failing_endpoint_after_1_2_4_8_seconds(clocked, clocked_topic, push_endpoint):
    _, clock = clocked
    push_endpoint.status_for = lambda n: 500 if n <= 4 else 204
    subscribe(clocked_topic, "s", push_endpoint.url("/hook"), strategy="EXPONENTIAL_DECAY_RETRY")
    clocked_topic.publish_message(TopicMessage("retry me"))
    (first,) = push_endpoint.wait_for(1, timeout=10)
    at = [clock.at(first.at)]
    for expected in (1, 2, 4, 8):
        at.append(next_retry(push_endpoint, clock, at[-1], expected - 0.2, expected))
    assert [h.status for h in push_endpoint.hits] == [500, 500, 500, 500, 204]
    gaps = [later - earlier for earlier, later in zip(at, at[1:], strict=False)]
    for gap, expected in zip(gaps, [1, 2, 4, 8], strict=True):
        assert expected - 0.2 <= gap <= expected + 1.5, gaps
    clock.advance(20)  # past the next retry (16 s) had there been one: the success ended the execution
    time.sleep(1.0)  # (what a wrong attempt would take to arrive)
    assert len(push_endpoint.hits) == 5


@pytest.mark.slow
def test_exponential_decay_retry_keeps_its_first_waits_in_real_time(topic, push_endpoint):
    """The schedule above on the system's clock, once, to its third attempt (the shared server's clock does not
    move in this test)."""
    push_endpoint.status_for = lambda n: 500 if n <= 2 else 204
    subscribe(topic, "s", push_endpoint.url("/hook"), strategy="EXPONENTIAL_DECAY_RETRY")
    topic.publish_message(TopicMessage("retry me"))
    hits = push_endpoint.wait_for(3, timeout=30)
    assert [h.status for h in hits] == [500, 500, 204]
    gaps = [later.at - earlier.at for earlier, later in zip(hits, hits[1:], strict=False)]
    for gap, expected in zip(gaps, [1, 2], strict=True):
        assert expected - 0.2 <= gap <= expected + 1.5, gaps
    time.sleep(1.0)  # the success ends the execution: no further attempt
    assert len(push_endpoint.hits) == 3


def test_backoff_retry_tries_an_always_failing_endpoint_exactly_4_times_10_to_20_seconds_apart(
    clocked, clocked_topic, push_endpoint
):
    _, clock = clocked
    push_endpoint.status_for = lambda n: 500
    subscribe(clocked_topic, "s", push_endpoint.url("/hook"), strategy="BACKOFF_RETRY")
    clocked_topic.publish_message(TopicMessage("never delivered"))
    (first,) = push_endpoint.wait_for(1, timeout=10)
    at = [clock.at(first.at)]
    for _ in range(3):
        at.append(next_retry(push_endpoint, clock, at[-1], 9.8, 20))
    gaps = [later - earlier for earlier, later in zip(at, at[1:], strict=False)]
    assert all(9.8 <= gap <= 21.5 for gap in gaps), gaps
    clock.advance(21)  # a fifth attempt would come within 20 s
    time.sleep(1.0)  # (what a wrong attempt would take to arrive)
    assert len(push_endpoint.hits) == 4


def test_publishing_does_not_wait_for_deliveries(topic, push_endpoint):
    push_endpoint.delay_seconds = 3
    subscribe(topic, "s", push_endpoint.url("/slow"))
    started = time.monotonic()
    topic.publish_message(TopicMessage("slow endpoint"))
    assert time.monotonic() - started < 1.0
    (hit,) = push_endpoint.wait_for(1, timeout=10)
    assert hit.at >= started


def test_one_publish_fans_out_to_60_subscriptions_exactly_once(account_a, topic, push_endpoint):
    queues = []
    for i in range(30):
        queue = text_queue(account_a, f"fan-{uuid.uuid4().hex[:12]}")
        queues.append(queue)
        endpoint = TopicHelper.generate_queue_endpoint(REGION, ACCOUNT, queue.queue_name)
        subscribe(topic, f"q{i}", endpoint, content_format="SIMPLIFIED")
    for i in range(30):
        subscribe(topic, f"h{i}", push_endpoint.url(f"/h{i}"), content_format="SIMPLIFIED")
    published = topic.publish_message(TopicMessage("to everyone"))
    hits = push_endpoint.wait_for(30, timeout=20)
    time.sleep(1.0)  # a duplicate would arrive about now
    assert sorted(h.path for h in push_endpoint.hits) == sorted(f"/h{i}" for i in range(30))
    assert all(h.signature_valid and h.body == b"to everyone" for h in hits)
    for queue in queues:
        attributes = queue.get_attributes()
        assert (attributes.active_messages, attributes.inactive_messages, attributes.delay_messages) == (1, 0, 0)
        received = queue.receive_message(1)
        assert received.message_body == "to everyone"
        queue.delete_message(received.receipt_handle)
        queue.delete()
    assert published.message_id


# ---------------------------------------------------------------- internal addresses, slow endpoints


@pytest.mark.parametrize(
    "internal",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0:8080/",
        "http://3232235777/",  # 192.168.1.1
        "http://10.0.0.1/",
        "http://[::ffff:10.0.0.1]/",
        "http://[fe80::1]/",
    ],
)
def test_subscribe_refuses_internal_addresses_with_endpoint_invalid(topic, raw_a, mns_error, internal):
    """The server here allows loopback pushes only (the test endpoints): every other internal address is refused."""
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><Subscription xmlns="http://mns.aliyuncs.com/doc/v1">'
        f"<Endpoint>{internal}</Endpoint></Subscription>"
    )
    mns_error(raw_a.request("PUT", f"/topics/{topic.topic_name}/subscriptions/s", body), 400, "EndpointInvalid")


class TricklingEndpoint(LoopbackListener):
    """Answers every push with a status line, then one header line a second, for 30 s."""

    def __init__(self) -> None:
        self.held: list[float] = []  # seconds from accepting a push to the sender's giving up
        super().__init__()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slow"

    def serve(self, connection: socket.socket, opened: float) -> None:
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\n")
                for i in range(30):
                    if self._closed_within(connection, 1.0):
                        break  # the sender gave up: noticed at once, not at the next write
                    connection.sendall(b"X-Slow-%d: 1\r\n" % i)
            except OSError:  # the sender gave up
                pass
            self.held.append(time.monotonic() - opened)

    @staticmethod
    def _closed_within(connection: socket.socket, seconds: float) -> bool:
        """Whether the sender closes the connection within `seconds` (what else it sends is dropped)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            connection.settimeout(left)
            try:
                if not connection.recv(65536):
                    return True
            except TimeoutError:
                return False
        return False


def test_a_trickling_endpoint_holds_an_attempt_5_s_and_delays_no_other_tenant(topic, account_b, push_endpoint):
    slow = TricklingEndpoint()
    other = account_b.get_topic("push-" + uuid.uuid4().hex[:16])
    other.create(TopicMeta())
    try:
        subscribe(topic, "slow", slow.url())
        subscribe(other, "fast", push_endpoint.url("/fast"))
        for i in range(8):  # more than a shared pool of fan-out threads would hold
            topic.publish_message(TopicMessage(f"slow {i}"))
        deadline = time.monotonic() + 5
        while len(slow.accepted) < 4 and time.monotonic() < deadline:  # tenant A's attempts under way
            time.sleep(0.05)
        published = time.monotonic()
        other.publish_message(TopicMessage("fast"))
        (hit,) = push_endpoint.wait_for(1, timeout=10)
        assert hit.at - published < 2.0  # not behind tenant A's slow attempts
        deadline = time.monotonic() + 15
        while len(slow.held) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        held = slow.held[:8]
        assert len(held) == 8 and all(4.0 <= seconds < 6.5 for seconds in held), held  # not 30 s
    finally:
        slow.close()
        topic.get_subscription("slow").unsubscribe()
        other.delete()
