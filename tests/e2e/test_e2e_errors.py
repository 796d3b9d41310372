"""Every queue error code of the spec, on the wire: status, body shape, request id, and no side effects."""

from __future__ import annotations

from email.utils import formatdate

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import Message

from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


def queue_xml(**attrs) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in attrs.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><Queue {XMLNS}>{inner}</Queue>'


def message_xml(body: str, **extra) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in extra.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><Message {XMLNS}><MessageBody>{body}</MessageBody>{inner}</Message>'


def snapshot(q):
    a = q.get_attributes()
    return (
        a.visibility_timeout,
        a.maximum_message_size,
        a.message_retention_period,
        a.delay_seconds,
        a.polling_wait_seconds,
        a.active_messages,
        a.inactive_messages,
        a.delay_messages,
        a.last_modify_time,
    )


@pytest.fixture
def seeded(queue):
    """The queue holds one visible message; its state must survive every bad request."""
    queue.set_encoding(False)
    queue.send_message(Message("keep"))
    before = snapshot(queue)
    yield queue
    assert snapshot(queue) == before


RANGES = [
    ("DelaySeconds", -1, 604801),
    ("MaximumMessageSize", 1023, 65537),
    ("MessageRetentionPeriod", 59, 1296001),  # (CMQ's 15 days: past MNS's 604,800)
    ("VisibilityTimeout", 0, 43201),
    ("PollingWaitSeconds", -1, 31),
]


@pytest.mark.parametrize(("attr", "low", "high"), RANGES)
def test_queue_attribute_out_of_range(raw_a, seeded, qname, mns_error, attr, low, high):
    for value in (low, high):
        r = raw_a.request("PUT", f"/queues/{qname}?metaoverride=true", queue_xml(**{attr: value}))
        mns_error(r, 400, "InvalidArgument")
        r = raw_a.request("PUT", f"/queues/{qname}-new", queue_xml(**{attr: value}))
        mns_error(r, 400, "InvalidArgument")
        assert raw_a.request("GET", f"/queues/{qname}-new").status == 404


@pytest.mark.parametrize("value", ["abc", "1.5"])
def test_queue_attribute_not_a_number(raw_a, seeded, qname, mns_error, value):
    r = raw_a.request("PUT", f"/queues/{qname}?metaoverride=true", queue_xml(VisibilityTimeout=value))
    mns_error(r, 400, "InvalidArgument")


def test_queue_not_exist(raw_a, account_a, qname, mns_error):
    missing = qname + "-missing"
    for method, path, body in [
        ("GET", f"/queues/{missing}", ""),
        ("PUT", f"/queues/{missing}?metaoverride=true", queue_xml(VisibilityTimeout=30)),
        ("POST", f"/queues/{missing}/messages", message_xml("x")),
        ("GET", f"/queues/{missing}/messages", ""),
        ("GET", f"/queues/{missing}/messages?peekonly=true", ""),
        ("DELETE", f"/queues/{missing}/messages?ReceiptHandle=abc", ""),
    ]:
        mns_error(raw_a.request(method, path, body), 404, "QueueNotExist")
    with pytest.raises(MNSServerException) as exc:
        account_a.get_queue(missing).send_message(Message("x"))
    assert exc.value.type == "QueueNotExist"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("-starts-with-dash", "InvalidQueueName"),
        ("has_underscore", "InvalidQueueName"),
        ("has.dot", "InvalidQueueName"),
        ("a" * 257, "QueueNameLengthError"),
    ],
)
def test_bad_queue_names(raw_a, mns_error, name, code):
    r = raw_a.request("PUT", f"/queues/{name}", queue_xml())
    mns_error(r, 400, code)


def test_message_level_ranges(raw_a, seeded, qname, mns_error):
    path = f"/queues/{qname}/messages"
    for extra in ({"Priority": 0}, {"Priority": 17}, {"DelaySeconds": -1}, {"DelaySeconds": 604801}):
        mns_error(raw_a.request("POST", path, message_xml("x", **extra)), 400, "InvalidArgument")
    for query in ("waitseconds=31", "waitseconds=-1", "numOfMessages=0", "numOfMessages=17"):
        mns_error(raw_a.request("GET", f"{path}?{query}"), 400, "InvalidArgument")
    mns_error(raw_a.request("GET", f"{path}?peekonly=true&numOfMessages=17"), 400, "InvalidArgument")


def test_body_larger_than_maximum_message_size(raw_a, account_a, qname, mns_error):
    assert raw_a.request("PUT", f"/queues/{qname}", queue_xml(MaximumMessageSize=1024)).status == 201
    q = account_a.get_queue(qname)
    q.set_encoding(False)
    try:
        assert q.send_message(Message("a" * 1024)).message_id
        mns_error(raw_a.request("POST", f"/queues/{qname}/messages", message_xml("a" * 1025)), 400, "InvalidArgument")
        with pytest.raises(MNSServerException) as exc:
            q.send_message(Message("a" * 2000))
        assert exc.value.type == "InvalidArgument"
        assert q.get_attributes().active_messages == 1
    finally:
        q.delete()


def test_batch_limits(raw_a, seeded, qname, mns_error):
    def batch(bodies):
        inner = "".join(f"<Message><MessageBody>{b}</MessageBody></Message>" for b in bodies)
        return f'<?xml version="1.0" encoding="UTF-8"?><Messages {XMLNS}>{inner}</Messages>'

    path = f"/queues/{qname}/messages"
    mns_error(raw_a.request("POST", path, batch(["x"] * 17)), 400, "InvalidArgument")
    mns_error(raw_a.request("POST", path, batch(["y" * 60000, "z" * 10000])), 400, "InvalidArgument")
    with pytest.raises(MNSServerException) as exc:
        seeded.batch_send_message([Message(f"m{i}") for i in range(17)])
    assert exc.value.type == "InvalidArgument"


def test_message_not_exist_on_empty_queue(raw_a, queue, qname, mns_error):
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages"), 404, "MessageNotExist")
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?numOfMessages=5"), 404, "MessageNotExist")
    mns_error(raw_a.request("GET", f"/queues/{qname}/messages?peekonly=true"), 404, "MessageNotExist")


def test_receipt_handle_errors(raw_a, seeded, qname, mns_error):
    path = f"/queues/{qname}/messages"
    mns_error(raw_a.request("DELETE", f"{path}?ReceiptHandle=forged-handle"), 400, "ReceiptHandleError")
    mns_error(
        raw_a.request("PUT", f"{path}?ReceiptHandle=forged-handle&VisibilityTimeout=10"), 400, "ReceiptHandleError"
    )
    mns_error(raw_a.request("DELETE", f"{path}?ReceiptHandle="), 400, "MissingReceiptHandle")
    mns_error(raw_a.request("PUT", f"{path}?VisibilityTimeout=10"), 400, "MissingReceiptHandle")
    mns_error(raw_a.request("PUT", f"{path}?ReceiptHandle=forged-handle"), 400, "MissingVisibilityTimeout")


def test_mangled_real_receipt_handle(raw_a, queue, qname, mns_error):
    queue.set_encoding(False)
    queue.send_message(Message("m"))
    handle = queue.receive_message().receipt_handle
    mangled = handle[:-4] + ("AAAA" if not handle.endswith("AAAA") else "BBBB")
    r = raw_a.request("DELETE", f"/queues/{qname}/messages?ReceiptHandle={mangled}")
    assert r.status in (400, 404)
    mns_error(r, r.status, "ReceiptHandleError" if r.status == 400 else "MessageNotExist")
    assert queue.get_attributes().inactive_messages == 1
    queue.delete_message(handle)


@pytest.mark.parametrize(
    "body",
    [
        "<Queue><VisibilityTimeout>30</Visibility",
        "not xml at all",
        '<?xml version="1.0"?><!DOCTYPE q [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><Queue><VisibilityTimeout>&c;</VisibilityTimeout></Queue>',
        '<?xml version="1.0"?><!DOCTYPE q [<!ENTITY x SYSTEM "file:///etc/passwd">]><Queue><X>&x;</X></Queue>',
    ],
    ids=["truncated", "garbage", "entity-bomb", "external-entity"],
)
def test_malformed_xml(raw_a, seeded, qname, mns_error, body):
    mns_error(raw_a.request("PUT", f"/queues/{qname}?metaoverride=true", body), 400, "MalformedXML")
    mns_error(raw_a.request("POST", f"/queues/{qname}/messages", body), 400, "MalformedXML")
    mns_error(raw_a.request("PUT", f"/queues/{qname}-x", body), 400, "MalformedXML")


def test_oversized_request_body(raw_a, seeded, qname):
    body = message_xml("a" * (300 * 1024))
    r = raw_a.request("POST", f"/queues/{qname}/messages", body)
    assert r.status == 400, r.status
    assert r.headers.get("x-mns-request-id")
    assert r.error_code() in ("InvalidArgument", "MalformedXML")


def test_bad_signature(endpoint, seeded, qname, mns_error):
    wrong = RawClient(endpoint, ACCOUNT_A[1], "WRONG")
    mns_error(wrong.request("GET", f"/queues/{qname}"), 403, "SignatureDoesNotMatch")
    r = wrong.request("PUT", f"/queues/{qname}?metaoverride=true", queue_xml(VisibilityTimeout=99))
    mns_error(r, 403, "SignatureDoesNotMatch")


def test_unknown_key(endpoint, seeded, qname, mns_error):
    r = RawClient(endpoint, "NOSUCHKEY", ACCOUNT_A[2]).request("GET", f"/queues/{qname}")
    mns_error(r, 403, "InvalidAccessKeyId")
    assert r.xml().find("{http://mns.aliyuncs.com/doc/v1}Message").text == "The access Id you provided does not exist."


def test_missing_authorization(raw_a, seeded, qname, mns_error):
    mns_error(raw_a.request("GET", f"/queues/{qname}", sign_request=False), 400, "MissingAuthorizationHeader")
    r = raw_a.request("DELETE", f"/queues/{qname}", sign_request=False)
    mns_error(r, 400, "MissingAuthorizationHeader")


def test_stale_date(raw_a, seeded, qname, mns_error):
    import time

    old = formatdate(time.time() - 20 * 60, usegmt=True)
    mns_error(raw_a.request("GET", f"/queues/{qname}", date=old), 408, "TimeExpired")
    r = raw_a.request("DELETE", f"/queues/{qname}", date=old)
    mns_error(r, 408, "TimeExpired")


def test_wrong_content_md5(raw_a, seeded, qname, mns_error):
    wrong = "bm90LXRoZS1yaWdodC1tZDU="
    r = raw_a.request("PUT", f"/queues/{qname}?metaoverride=true", queue_xml(VisibilityTimeout=99), md5=wrong)
    mns_error(r, 400, "InvalidDigest")


def test_correct_content_md5_is_accepted(raw_a, seeded, qname):
    r = raw_a.request("POST", f"/queues/{qname}/messages", message_xml("hello"))
    assert r.status == 201, r.body
    # consume it again so the seeded fixture's snapshot (one visible message) still holds
    got = seeded.receive_message()
    seeded.delete_message(got.receipt_handle)


def test_other_account_cannot_see_queue(raw_a, account_b, queue, qname, endpoint, mns_error):
    qb = account_b.get_queue(qname)
    with pytest.raises(MNSServerException) as exc:
        qb.get_attributes()
    assert exc.value.type == "QueueNotExist"
    with pytest.raises(MNSServerException) as exc:
        qb.send_message(Message("x"))
    assert exc.value.type == "QueueNotExist"
    urls, _ = account_b.list_queue(prefix=qname)
    assert urls == []
    assert queue.get_attributes().active_messages == 0


def test_host_naming_other_account(raw_a, seeded, qname, mns_error):
    r = raw_a.request("GET", f"/queues/{qname}", host="2000000000000002.mns.cn-hangzhou.aliyuncs.com")
    mns_error(r, 403, "AccessDenied")
    ok = raw_a.request("GET", f"/queues/{qname}", host="1000000000000001.mns.cn-hangzhou.aliyuncs.com")
    assert ok.status == 200
