"""The local server's HTTP front end under hostile or unusual input, on raw sockets: every answer is an MNS
error (status, `<Error>` body, `x-mns-request-id`), never a hang, a dropped connection or a standard-library page."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import Message

from tests.support.raw_http import NS, RawClient, exchange, request
from tests.support.servers import ACCOUNT_A, ACCOUNT_B

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


@pytest.mark.parametrize("length", ["abc", "1" * 30, "-1", "1e3", "0x10", " "])
def test_invalid_content_length_is_an_mns_400(endpoint, mns_error, length):
    mns_error(
        exchange(endpoint, request("POST", "/queues/q/messages", {"Content-Length": length})), 400, "InvalidArgument"
    )


def test_huge_announced_body_is_refused_before_it_is_read(endpoint, mns_error):
    # 1 GB announced, nothing sent, unsigned: the answer comes at once (the server neither waits for nor reserves it).
    started = time.monotonic()
    r = exchange(endpoint, request("POST", "/queues/q/messages", {"Content-Length": str(10**9)}), timeout=5)
    mns_error(r, 400, "InvalidArgument")
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("target", "headers"),
    [("/", {"x-acs-action": "ListQueue"}), ("/?Action=ListQueue&Version=2022-01-19", {})],
    ids=["acs3-header", "v1-query"],
)
def test_an_openapi_call_over_the_cap_is_refused_in_its_json_envelope(endpoint, target, headers):
    announced = {**headers, "Content-Type": "application/x-www-form-urlencoded", "Content-Length": str(10**9)}
    r = exchange(endpoint, request("POST", target, announced), timeout=5)
    body = json.loads(r.body)
    assert (r.status, body["Code"], body["Success"]) == (400, "InvalidArgument", False)
    assert r.headers["x-mns-request-id"] == body["RequestId"]


def test_body_just_over_the_cap_is_refused_with_the_answer_readable(endpoint, mns_error):
    body = b"x" * (256 * 1024 + 1)
    mns_error(
        exchange(endpoint, request("POST", "/queues/q/messages", {"Content-Length": str(len(body))}, body)),
        400,
        "InvalidArgument",
    )


def test_a_10_mb_body_sent_whole_before_reading_gets_the_refusal(endpoint, mns_error):
    # As http.client (and so the SDK) does: the whole body is sent, then the answer is read. The server
    # answers at once, so the client must be able to finish sending and still read the refusal.
    body = b"x" * (10 * 1024 * 1024)
    mns_error(
        exchange(endpoint, request("POST", "/queues/q/messages", {"Content-Length": str(len(body))}, body)),
        400,
        "InvalidArgument",
    )


def test_the_sdk_sending_a_10_mb_message_gets_invalid_argument(queue):
    with pytest.raises(MNSServerException) as raised:
        queue.send_message(Message("x" * (10 * 1024 * 1024)))
    assert raised.value.type == "InvalidArgument"


def test_expect_continue_over_the_cap_is_refused_without_continue(endpoint, mns_error):
    headers = {"Content-Length": str(10**9), "Expect": "100-continue"}
    r = exchange(endpoint, request("PUT", "/queues/q", headers), timeout=5)
    mns_error(r, 400, "InvalidArgument")


@pytest.mark.parametrize("target", ["//queues", "//queues/q", "/queues/q//messages", "//?accountmeta=true", "/queues/"])
def test_an_empty_path_segment_is_an_invalid_url_before_authentication(raw_a, mns_error, target):
    mns_error(raw_a.request("GET", target), 400, "InvalidRequestURL")
    mns_error(raw_a.request("GET", target, sign_request=False), 400, "InvalidRequestURL")


@pytest.mark.parametrize("method", ["PATCH", "OPTIONS", "TRACE", "FROBNICATE"])
def test_methods_without_a_route_get_an_mns_error(endpoint, mns_error, method):
    r = exchange(endpoint, request(method, "/queues/q", {"Content-Length": "0"}))
    mns_error(r, 400, "InvalidRequestURL")
    assert r.headers["x-mns-version"] == "2015-06-06"


def test_head_gets_the_error_headers_without_a_body(endpoint):
    r = exchange(endpoint, request("HEAD", "/queues/q", {}))
    assert r.status == 400
    assert r.body == b""
    assert r.headers["x-mns-request-id"] and r.headers["x-mns-version"] == "2015-06-06"


@pytest.mark.parametrize(
    "data",
    [
        request("GET", "/queues", {"X-Big": "a" * 70_000}),
        request("GET", "/queues", {f"X-H{i}": "a" for i in range(150)}),
        b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /queues HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        b"NONSENSE\r\n\r\n",
    ],
    ids=["header-too-long", "too-many-headers", "uri-too-long", "bad-version", "bad-request-line"],
)
def test_requests_the_http_parser_refuses_get_an_mns_error(endpoint, mns_error, data):
    r = exchange(endpoint, data)
    assert r.status == 400, (r.status, r.body[:200])
    mns_error(r, 400, r.error_code())
    assert r.error_code() in ("InvalidArgument", "InvalidRequestURL")


def test_two_hundred_simultaneous_connections_all_answered(endpoint):
    clients = 200
    ready = threading.Barrier(clients, timeout=30)
    answers: list[int | str] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            ready.wait()
            status: int | str = exchange(endpoint, request("GET", "/queues", {}), timeout=20).status
        except Exception as exc:  # noqa: BLE001 (counted as unanswered)
            status = type(exc).__name__
        with lock:
            answers.append(status)

    threads = [threading.Thread(target=one) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == clients
    assert answers.count(400) == clients, sorted(map(str, answers))[:5]  # unsigned: MissingAuthorizationHeader


# ---------------------------------------------------------------- the local tools are the operator's


def test_export_tool_refuses_unsigned_and_tenant_requests(endpoint, mns_error):
    mns_error(
        exchange(endpoint, request("POST", "/-/exports", {"Content-Length": "0"})), 400, "MissingAuthorizationHeader"
    )
    tenant = RawClient(endpoint, ACCOUNT_B[1], ACCOUNT_B[2])
    mns_error(tenant.request("POST", "/-/exports"), 403, "AccessDenied")
    wrong = RawClient(endpoint, ACCOUNT_B[1], "WRONG")
    mns_error(wrong.request("POST", "/-/exports"), 403, "SignatureDoesNotMatch")


def test_export_tool_answers_the_operator(endpoint):
    operator = RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    r = operator.request("POST", "/-/exports")
    assert r.status == 200, r.body
    assert b'"exports"' in r.body


# ---------------------------------------------------------------- body roots and strict integers


@pytest.mark.parametrize("root", ["Queue", "Anything", "ReceiptHandles"])
def test_send_with_a_foreign_root_stores_nothing(raw_a, queue, qname, mns_error, root):
    body = f'<?xml version="1.0" encoding="UTF-8"?><{root} {XMLNS}><MessageBody>x</MessageBody></{root}>'
    mns_error(raw_a.request("POST", f"/queues/{qname}/messages", body), 400, "InvalidArgument")
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?peekonly=true"), 404, "MessageNotExist")


def test_batch_send_entries_must_be_messages(raw_a, queue, qname, mns_error):
    body = f"<Messages {XMLNS}><Queue><MessageBody>x</MessageBody></Queue></Messages>"
    mns_error(raw_a.request("POST", f"/queues/{qname}/messages", body), 400, "InvalidArgument")
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?peekonly=true"), 404, "MessageNotExist")


@pytest.mark.parametrize("root", ["Topic", "Messages"])
def test_publish_with_a_foreign_root_is_refused(raw_a, account_a, qname, mns_error, root):
    topic = account_a.get_topic(qname)
    from mns.topic import TopicMeta

    topic.create(TopicMeta())
    try:
        body = f"<{root} {XMLNS}><MessageBody>x</MessageBody></{root}>"
        mns_error(raw_a.request("POST", f"/topics/{qname}/messages", body), 400, "InvalidArgument")
    finally:
        topic.delete()


NOT_INTEGERS = ["1_0", "\u0665", "+5 ", "+5", " 5", "5 ", "0x5", "1e1", "５"]


@pytest.mark.parametrize("text", NOT_INTEGERS)
def test_query_integers_are_ascii_digits_only(raw_a, queue, qname, mns_error, text):
    value = urllib.parse.quote(text)
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?waitseconds={value}"), 400, "InvalidArgument")
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?numOfMessages={value}"), 400, "InvalidArgument")
    r = raw_a.request("PUT", f"/queues/{qname}/messages?ReceiptHandle=x&VisibilityTimeout={value}")
    mns_error(r, 400, "InvalidArgument")


@pytest.mark.parametrize("text", ["1_0", "\u0665", "+5", "0x5", "1e1", "-0x1"])
def test_list_header_integers_are_ascii_digits_only(raw_a, mns_error, text):
    for resource in ("/queues", "/topics"):
        headers = {"x-mns-ret-number": text.encode("utf-8").decode("latin-1")}
        mns_error(raw_a.request("GET", resource, headers=headers), 400, "InvalidArgument")


@pytest.mark.parametrize("text", NOT_INTEGERS)
def test_xml_integers_are_ascii_digits_only(raw_a, queue, qname, mns_error, text):
    body = f"<Message {XMLNS}><MessageBody>x</MessageBody><DelaySeconds>{text}</DelaySeconds></Message>"
    mns_error(raw_a.request("POST", f"/queues/{qname}/messages", body), 400, "InvalidArgument")
    queue_body = f"<Queue {XMLNS}><VisibilityTimeout>{text}</VisibilityTimeout></Queue>"
    mns_error(raw_a.request("PUT", f"/queues/{qname}?metaoverride=true", queue_body), 400, "InvalidArgument")
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?peekonly=true"), 404, "MessageNotExist")


# ---------------------------------------------------------------- what the live service lists


def test_list_queue_names_each_queue(raw_a, queue, qname, account_a):
    root = raw_a.request("GET", "/queues", headers={"x-mns-prefix": qname}).xml()
    (entry,) = root.findall(NS + "Queue")
    assert entry.findtext(NS + "QueueName") == qname
    assert entry.findtext(NS + "QueueURL").endswith(f"/queues/{qname}")
    with_meta = raw_a.request("GET", "/queues", headers={"x-mns-prefix": qname, "x-mns-with-meta": "true"}).xml()
    assert with_meta.find(NS + "Queue").findtext(NS + "QueueName") == qname
    # The SDK, which does not know the element, still lists the queue.
    queues, _ = account_a.list_queue(qname)
    assert [url.rsplit("/", 1)[-1] for url in queues] == [qname]
    queue.send_message(Message("still works"))


def test_list_topic_names_each_topic(raw_a, account_a, qname):
    from mns.topic import TopicMeta

    account_a.get_topic(qname).create(TopicMeta())
    try:
        root = raw_a.request("GET", "/topics", headers={"x-mns-prefix": qname}).xml()
        (entry,) = root.findall(NS + "Topic")
        assert entry.findtext(NS + "TopicName") == qname
        assert entry.findtext(NS + "TopicURL").endswith(f"/topics/{qname}")
        topics, _ = account_a.list_topic(qname)
        assert [url.rsplit("/", 1)[-1] for url in topics] == [qname]
    finally:
        account_a.get_topic(qname).delete()


def test_error_host_id_carries_the_scheme(raw_a, endpoint, qname):
    r = raw_a.request("GET", f"/queues/{qname}")
    assert r.status == 404
    assert r.xml().findtext(NS + "HostId") == endpoint
