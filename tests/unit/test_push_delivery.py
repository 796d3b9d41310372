import base64
import ipaddress
import json
import re
import socket
import threading
import time
import xml.etree.ElementTree as ET

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from mnsd.entry.push import make_fanout_handler
from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.metrics import NoMetrics
from mnsd.model.egress import allowed_networks, is_public, permitted, refuse_internal_endpoint
from mnsd.model.topics import Subscription, SubscriptionAttributes, TopicMessage
from mnsd.push import delivery
from mnsd.push import http_request as push_http
from mnsd.push.delivery import Deliverer, content_md5, http_push, sms_text
from mnsd.push.dispatch import LocalDispatcher
from mnsd.push.records import PushCounters
from mnsd.push.signing import generate_signing_material, sign, string_to_sign
from mnsd.storage.dynamodb.tables.changes import published_messages
from mnsd.storage.dynamodb.tables.topic_messages import to_item
from mnsd.wire import codec as xmlcodec
from mnsd.wire.notifications import notification_body
from tests.support.loopback import LoopbackListener
from tests.support.stub_http import QuietHandler, serving

KEY, CERT = generate_signing_material()
MESSAGE = TopicMessage("1000000000000001", "t", "tid", "MSGID", "a & <b>", "tag", 1449556920975)


def subscription(endpoint: str = "http://h.example/", content_format: str = "XML") -> Subscription:
    attributes = SubscriptionAttributes(endpoint, notify_content_format=content_format)
    return Subscription("1000000000000001", "t", "s", attributes, 0, 0, "tid")


def test_string_to_sign_matches_the_spec_example():
    headers = {
        "Content-MD5": "ZDgxNjY5ZjFMDQ5MGM0YWMwMWE5ODImZDVIYmQxYjI=",
        "Content-Type": "text/xml;charset=utf-8",
        "Date": "Wed, 25 May 2016 10:46:14 GMT",
        "x-mns-version": "2015-06-06",
        "x-mns-request-id": "57458276F0E3D56D7C00054B",
        "x-mns-signing-cert-url": "aHR0cDovL21uc3Rlc3Qub3Nz",
        "Authorization": "ignored",
    }
    assert string_to_sign("POST", headers, "/notifications") == (
        "POST\nZDgxNjY5ZjFMDQ5MGM0YWMwMWE5ODImZDVIYmQxYjI=\ntext/xml;charset=utf-8\nWed, 25 May 2016 10:46:14 GMT\n"
        "x-mns-request-id:57458276F0E3D56D7C00054B\nx-mns-signing-cert-url:aHR0cDovL21uc3Rlc3Qub3Nz\n"
        "x-mns-version:2015-06-06\n/notifications"
    )


def test_signatures_verify_with_the_certificate_public_key():
    public_key = x509.load_pem_x509_certificate(CERT.encode()).public_key()
    signature = base64.b64decode(sign(KEY, "text to sign"))
    public_key.verify(signature, b"text to sign", padding.PKCS1v15(), hashes.SHA1())  # raises if invalid


def test_an_http_push_carries_the_spec_headers():
    settings = Settings(signing_key=KEY, signing_cert_url="http://cert.example/c.pem")
    url, headers, body = http_push(subscription("http://h.example"), MESSAGE, settings)
    assert url == "http://h.example/notifications"
    assert headers["Content-md5"] == content_md5(body)
    assert base64.b64decode(headers["x-mns-signing-cert-url"]) == b"http://cert.example/c.pem"
    expected = string_to_sign("POST", headers, "/notifications")
    public_key = x509.load_pem_x509_certificate(CERT.encode()).public_key()
    public_key.verify(base64.b64decode(headers["Authorization"]), expected.encode(), padding.PKCS1v15(), hashes.SHA1())


def test_notification_formats():
    root = ET.fromstring(notification_body(subscription(content_format="XML"), MESSAGE))
    ns = "{http://mns.aliyuncs.com/doc/v1}"
    assert [child.tag[len(ns) :] for child in root] == [
        "TopicOwner", "TopicName", "Subscriber", "SubscriptionName", "MessageId", "Message", "MessageMD5",
        "MessageTag", "PublishTime",
    ]  # fmt: skip
    assert root.find(ns + "Message").text == "a & <b>"
    as_json = json.loads(notification_body(subscription(content_format="JSON"), MESSAGE))
    assert as_json["PublishTime"] == "1449556920975" and as_json["MessageTag"] == "tag"
    assert notification_body(subscription(content_format="SIMPLIFIED"), MESSAGE) == "a & <b>"


def test_untagged_messages_carry_no_message_tag():
    untagged = TopicMessage("1", "t", "tid", "M", "b", "", 1)
    assert "MessageTag" not in notification_body(subscription(), untagged)
    assert xmlcodec.parse(notification_body(subscription(), untagged).encode()).value("MessageTag") is None


def test_sms_text_fills_parameters_after_the_signature():
    assert sms_text("code ${code}, ${n} left", {"code": "1234", "n": 2}, "Shop") == "【Shop】code 1234, 2 left"
    assert sms_text("plain", {}, "") == "plain"


# --- the HTTP attempt: names on the wire, one deadline, no internal address -------------------------


class RawEndpoint(LoopbackListener):
    """A TCP endpoint on 127.0.0.1 whose answer is written by `answer(connection)`, once it has the request."""

    def __init__(self, answer) -> None:
        self.requests: list[bytes] = []
        self.closed_at: list[float] = []
        self._answer = answer
        super().__init__()

    @property
    def connections(self) -> int:
        return len(self.accepted)

    def serve(self, connection: socket.socket, accepted_at: float) -> None:
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
            while len(body) < length:
                body += connection.recv(65536)
            self.requests.append(head + b"\r\n\r\n" + body)
            try:
                self._answer(connection)
            except OSError:
                pass
            self.closed_at.append(time.monotonic())

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def answer_204(connection: socket.socket) -> None:
    connection.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")


def deliverer(allowed: str = "127.0.0.0/8", header_names: str = "live") -> Deliverer:
    settings = Settings(
        signing_key=KEY,
        signing_cert_url="http://cert.example/c.pem",
        push_allowed_networks=allowed,
        push_header_names=header_names,
    )
    return Deliverer(settings, queues=None, clients=lambda name: None)


@pytest.fixture
def raw_endpoint():
    endpoints = []

    def make(answer=answer_204) -> RawEndpoint:
        endpoints.append(RawEndpoint(answer))
        return endpoints[-1]

    yield make
    for endpoint in endpoints:
        endpoint.close()


def header_names(request: bytes) -> list[str]:
    head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    return [line.split(":", 1)[0] for line in head.split("\r\n")[1:]]


@pytest.mark.parametrize("content_format", ["XML", "SIMPLIFIED"])
@pytest.mark.parametrize("setting", ["live", "with-lower-case-copies"])
def test_push_header_names_leave_exactly_as_mns_spells_them(raw_endpoint, content_format, setting):
    endpoint = raw_endpoint()
    outcome = deliverer(header_names=setting).deliver(subscription(endpoint.url(), content_format), MESSAGE)
    assert outcome.delivered and outcome.status == 204
    (request,) = endpoint.requests
    standard = ["Host", "Content-Length", "Date", "Content-Type", "Content-md5", "Authorization", "User-Agent"]
    if setting == "with-lower-case-copies":
        standard += ["date", "content-type", "content-md5"]
    mns = ["x-mns-request-id", "x-mns-signing-cert-url", "x-mns-version"]
    if content_format == "SIMPLIFIED":
        mns = ["x-mns-message-id", "x-mns-message-tag", *mns]
    assert header_names(request) == standard + mns
    assert request.startswith(b"POST /hook HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % endpoint.port)
    assert b"\r\nUser-Agent: Aliyun Notification Service Agent\r\n" in request


@pytest.mark.parametrize("content_format", ["XML", "SIMPLIFIED"])
@pytest.mark.parametrize(
    ("names", "header_names", "verifies"),
    [
        (("Content-md5", "Content-Type", "Date"), "live", True),  # the Java SDK's sample endpoint
        (("Content-md5", "Content-Type", "Date"), "with-lower-case-copies", True),
        (("content-md5", "content-type", "date"), "with-lower-case-copies", True),  # the Python SDK's
        (("content-md5", "content-type", "date"), "live", False),
    ],
)
def test_a_receiver_looking_up_exact_names_verifies_the_push(content_format, names, header_names, verifies):
    """As Alibaba's sample endpoints do: the Java SDK's (`HttpEndpointSubscription`) copies the names as sent into a
    map and reads `Content-md5`, `Content-Type`, `Date`; the Python SDK's (`sample/topic/server.py`) tests `key in
    self.headers.keys()`, case-sensitively on Python 3, for their lower-case names."""
    seen: dict[str, object] = {}

    class SampleEndpoint(QuietHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            signed = [self.headers[key] if key in self.headers.keys() else "" for key in names]
            mns = "\n".join(sorted(f"{k}:{v}" for k, v in self.headers.items() if k.startswith("x-mns-")))
            text = f"{self.command}\n" + "\n".join(signed) + f"\n{mns}\n{self.path}"
            public_key = x509.load_pem_x509_certificate(CERT.encode()).public_key()
            try:
                public_key.verify(
                    base64.b64decode(self.headers["Authorization"]), text.encode(), padding.PKCS1v15(), hashes.SHA1()
                )
                seen["valid"] = True
            except InvalidSignature:
                seen["valid"] = False
            seen["signed"] = signed
            self.send_response(201)
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serving(SampleEndpoint) as endpoint:
        outcome = deliverer(header_names=header_names).deliver(
            subscription(f"{endpoint}/notifications", content_format), MESSAGE
        )
    assert outcome.delivered and outcome.status == 201
    assert all(seen["signed"]) == verifies, seen["signed"]
    assert seen["valid"] == verifies


@pytest.mark.parametrize("status", [200, 204])
def test_an_answer_that_closes_the_connection_is_read_whole(raw_endpoint, status):
    """`php -S` answers `Connection: close` with no length, its body ending with the connection: http.client
    then closes the connection before reading the body, which must still be read, not failed and retried."""

    def close_delimited(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 %d OK\r\nConnection: close\r\nContent-type: text/html\r\n\r\n" % status)
        time.sleep(0.05)
        connection.sendall(b"<p>received</p>")

    endpoint = raw_endpoint(close_delimited)
    outcome = deliverer().deliver(subscription(endpoint.url()), MESSAGE)
    assert (outcome.delivered, outcome.status) == (True, status), outcome.detail


def test_the_push_limit_is_one_deadline_for_the_whole_attempt(raw_endpoint, monkeypatch):
    """An endpoint trickling one header line every 0.3 s never trips a per-read timeout of 1 s."""
    monkeypatch.setattr(delivery, "HTTP_TIMEOUT_SECONDS", 1.0)

    def trickle(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 204 No Content\r\n")
        for i in range(14):  # 4.2 s in all
            time.sleep(0.3)
            connection.sendall(b"X-Slow-%d: 1\r\n" % i)
        connection.sendall(b"Content-Length: 0\r\n\r\n")

    endpoint = raw_endpoint(trickle)
    started = time.monotonic()
    outcome = deliverer().deliver(subscription(endpoint.url()), MESSAGE)
    elapsed = time.monotonic() - started
    assert not outcome.delivered and not outcome.permanent
    assert 0.9 <= elapsed < 1.6, elapsed
    assert "DeadlineExceeded" in outcome.detail or "timed out" in outcome.detail


def test_a_trickled_body_also_counts_against_the_deadline(raw_endpoint, monkeypatch):
    monkeypatch.setattr(delivery, "HTTP_TIMEOUT_SECONDS", 1.0)

    def slow_body(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n")
        for _ in range(20):
            time.sleep(0.2)
            connection.sendall(b"x")

    endpoint = raw_endpoint(slow_body)
    started = time.monotonic()
    outcome = deliverer().deliver(subscription(endpoint.url()), MESSAGE)
    assert not outcome.delivered and time.monotonic() - started < 1.6


def test_pushes_to_internal_addresses_are_refused_without_connecting(raw_endpoint):
    endpoint = raw_endpoint()
    for host in ("127.0.0.1", "localhost", "2130706433", "0x7f.1"):
        outcome = deliverer(allowed="").deliver(subscription(endpoint.url(host=host)), MESSAGE)
        assert not outcome.delivered and outcome.permanent, (host, outcome)
    time.sleep(0.1)
    assert endpoint.connections == 0


def test_names_are_checked_after_resolution_and_connected_to_as_resolved(raw_endpoint, monkeypatch):
    """One resolution per attempt: the address checked is the address connected to, under the endpoint's Host."""
    endpoint = raw_endpoint()
    answers = {"internal.example": ["10.0.0.7"], "mixed.example": ["93.184.216.34", "169.254.169.254"]}
    answers["rebind.example"] = ["127.0.0.1"]
    resolved: list[str] = []

    def resolve(host: str, port: int):
        resolved.append(host)
        return [ipaddress.ip_address(a) for a in answers[host]]

    def no_connection(*args, **kwargs):
        raise AssertionError("connected to a refused address")

    monkeypatch.setattr(push_http, "resolve", resolve)
    with monkeypatch.context() as patched:
        patched.setattr(socket, "create_connection", no_connection)
        for host in ("internal.example", "mixed.example"):
            outcome = deliverer(allowed="").deliver(subscription(endpoint.url(host=host)), MESSAGE)
            assert outcome.permanent and not outcome.delivered and host in outcome.detail
    outcome = deliverer(allowed="127.0.0.0/8").deliver(subscription(endpoint.url(host="rebind.example")), MESSAGE)
    assert outcome.delivered
    assert resolved == ["internal.example", "mixed.example", "rebind.example"]
    assert b"\r\nHost: rebind.example:%d\r\n" % endpoint.port in endpoint.requests[0]


def test_a_redirect_is_an_answer_and_is_not_followed(raw_endpoint):
    target = raw_endpoint()

    def redirect(connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % (target.url().encode())
        )

    endpoint = raw_endpoint(redirect)
    outcome = deliverer().deliver(subscription(endpoint.url()), MESSAGE)
    assert not outcome.delivered and outcome.status == 307
    assert target.connections == 0


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "0.0.0.0", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1", "169.254.169.254",
        "100.100.100.200", "224.0.0.1", "240.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1",
        "fd00:ec2::254", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
        "2002:a00:1::1", "2001:0:4136:e378:8000:63bf:f5ff:fffe",
    ],
)  # fmt: skip
def test_internal_addresses_are_not_public(address):
    assert not is_public(ipaddress.ip_address(address))
    assert not permitted(ipaddress.ip_address(address), ())


def test_public_addresses_and_the_allow_list():
    for address in ("93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"):
        assert is_public(ipaddress.ip_address(address))
    loopback = allowed_networks("127.0.0.0/8, ::1/128")
    assert permitted(ipaddress.ip_address("127.0.0.2"), loopback)
    assert permitted(ipaddress.ip_address("::ffff:127.0.0.1"), loopback)
    assert not permitted(ipaddress.ip_address("169.254.169.254"), loopback)
    assert not permitted(ipaddress.ip_address("10.0.0.1"), loopback)


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:8080/x", "http://localhost/", "http://api.localhost./", "http://0.0.0.0/",
        "http://2130706433/", "http://0x7f.1/", "http://127.1/", "http://169.254.169.254/latest/meta-data",
        "https://[::1]:8443/", "http://[::ffff:10.0.0.1]/", "http://192.168.0.10/n", "http://3232235786/",
        "http://example.com:99999/", "http://example.com:x/",
    ],
)  # fmt: skip
def test_subscribe_refuses_internal_literal_endpoints_with_endpoint_invalid(endpoint):
    with pytest.raises(errors.EndpointInvalid):
        refuse_internal_endpoint(endpoint, "")


def test_subscribe_accepts_names_public_literals_and_allowed_networks():
    for endpoint in (
        "http://example.com/n",
        "https://93.184.216.34/",
        "acs:mns:cn-hangzhou:1:queues/q",
        "mail:directmail:a@b.cn",
    ):
        refuse_internal_endpoint(endpoint, "")
    refuse_internal_endpoint("http://127.0.0.1:8080/x", "127.0.0.0/8")
    refuse_internal_endpoint("http://localhost:8080/x", "127.0.0.0/8")
    with pytest.raises(errors.EndpointInvalid):
        refuse_internal_endpoint("http://169.254.169.254/", "127.0.0.0/8")


# --- fan-out: no topic or tenant waits behind another's slow endpoints ----------------------------------


def topic_message(account: str, topic: str, message_id: str) -> TopicMessage:
    return TopicMessage(account, topic, f"{topic}-id", message_id, "body", "", 1449556920975)


class RecordingFanout:
    """Fans out instantly, except topics "slow" (held until released), "sleepy" (0.4 s each) and "bad"
    (fails `failures` times). Each message has one subscription, whose first attempt is recorded."""

    def __init__(self, failures: int = 0) -> None:
        self.release = threading.Event()
        self.finished: dict[str, float] = {}
        self.calls: list[str] = []
        self.failures = failures
        self.first_attempt = self

    def subscriptions(self, message: TopicMessage) -> list[Subscription]:
        self.calls.append(message.message_id)
        if message.topic_name == "bad" and self.failures:
            self.failures -= 1
            raise RuntimeError("throttled")
        attributes = SubscriptionAttributes("http://h/")
        return [Subscription(message.account_id, message.topic_name, "s", attributes, 0, 0, message.topic_id)]

    def attempt(self, subscription: Subscription, message: TopicMessage) -> None:
        if message.topic_name == "slow":
            self.release.wait(5)
        self.finished[message.message_id] = time.monotonic()

    def fan_out(self, message: TopicMessage) -> None:
        for subscription in self.subscriptions(message):
            if message.topic_name == "sleepy":
                time.sleep(0.4)
            self.attempt(subscription, message)


def wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_a_topic_with_slow_endpoints_does_not_delay_another_tenants_fan_out():
    fanout = RecordingFanout()
    dispatcher = LocalDispatcher(lambda: fanout)
    for i in range(8):  # more than the threads the slow topic may hold
        dispatcher.submit(topic_message("1000000000000001", "slow", f"slow-{i}"))
    submitted = time.monotonic()
    dispatcher.submit(topic_message("2000000000000002", "fast", "fast"))
    dispatcher.submit(topic_message("1000000000000001", "other", "other"))
    assert wait_until(lambda: {"fast", "other"} <= fanout.finished.keys(), timeout=2)
    assert max(fanout.finished["fast"], fanout.finished["other"]) - submitted < 0.5
    assert not any(key.startswith("slow") for key in fanout.finished)
    fanout.release.set()
    assert dispatcher.drain(timeout=5) and len(fanout.finished) == 10


def test_a_fan_out_that_fails_is_tried_again_not_dropped():
    fanout = RecordingFanout(failures=2)
    dispatcher = LocalDispatcher(lambda: fanout, retry_seconds=(0, 0, 0))
    dispatcher.submit(topic_message("1000000000000001", "bad", "m"))
    assert dispatcher.drain(timeout=5)
    assert fanout.calls == ["m", "m", "m"] and "m" in fanout.finished


class LambdaContext:
    function_name = "mns-test"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-test"
    aws_request_id = "test"


def stream_record(message: TopicMessage, sequence: str, event_name: str = "INSERT") -> dict:
    return {"eventName": event_name, "dynamodb": {"NewImage": to_item(message), "SequenceNumber": sequence}}


def test_the_fan_out_function_handles_a_batchs_messages_concurrently_and_reports_failures(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    fanout = RecordingFanout(failures=1)
    push = type("Push", (), {"counters": PushCounters()})()
    services = type(
        "Services", (), {"fanout": lambda self: fanout, "push": lambda self: push, "metrics": NoMetrics()}
    )()
    handler = make_fanout_handler(published_messages, lambda: services)
    records = [stream_record(topic_message("1", "sleepy", f"s{i}"), f"10{i}") for i in range(4)]
    records += [
        stream_record(topic_message("1", "bad", "b"), "200"),
        stream_record(topic_message("1", "t", "x"), "300", "MODIFY"),
    ]
    started = time.monotonic()
    result = handler({"Records": records}, LambdaContext())
    assert time.monotonic() - started < 0.9  # one after the other: 1.6 s
    assert result == {"batchItemFailures": [{"itemIdentifier": "200"}]}
    assert sorted(fanout.calls) == ["b", "s0", "s1", "s2", "s3"]


def test_a_message_tag_beyond_latin_1_is_sent_as_utf_8(raw_endpoint):
    endpoint = raw_endpoint()
    tagged = TopicMessage("1000000000000001", "t", "tid", "MSGID", "body", "重要", 1449556920975)
    outcome = deliverer().deliver(subscription(endpoint.url(), "SIMPLIFIED"), tagged)
    assert outcome.delivered
    assert "\r\nx-mns-message-tag: 重要\r\n".encode() in endpoint.requests[0]


def test_an_endpoint_that_cannot_be_sent_to_is_dropped_not_retried():
    outcome = deliverer().deliver(subscription("http://127.0.0.1:99999/n"), MESSAGE)
    assert not outcome.delivered and outcome.permanent and "ValueError" in outcome.detail
