"""Alibaba's SMQProxy SDK (PyPI `alibabacloud-smqproxy20260409` 1.0.5, over `alibabacloud-gateway-mns` 0.0.3): the
JSON data plane of 2026-04-09, V4 signed, through every operation the SDK has, its answers read by its own models,
its errors as JSON with the XML plane's codes, on each engine; and the XML and JSON planes on the same queue."""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import uuid

import pytest
from alibabacloud_smqproxy20260409 import models
from mns.queue import Message, QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMeta

from tests.e2e.resources import text_queue
from tests.e2e.tea_clients import smqproxy, smqproxy_call
from tests.support.fifo_queues import create_fifo
from tests.support.servers import ACCOUNT_A, ACCOUNT_B
from tests.support.tokens import issue, policy_body

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the classic SDK's counts, read beside


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest().upper()


@pytest.fixture(scope="module")
def smq(endpoint):
    return smqproxy(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def queue(account_a, qname):
    """A queue made on the XML plane (SMQProxy has no queue operations), its messages read as raw text there."""
    meta = QueueMeta()
    meta.set_visibilitytimeout(30)
    q = text_queue(account_a, qname, meta)
    yield q
    q.delete()


def refusal(call) -> Exception:
    """What the SDK raises for an error answer (the gateway reads a JSON error's `Code`)."""
    with pytest.raises(Exception) as refused:
        call()
    return refused.value


def send(smq, queue_name: str, body: str, **fields) -> models.SendMessageResponse:
    return smq.send_message(queue_name, models.SendMessageRequest(message_body=body, **fields))


def receive(smq, queue_name: str, count: int = 16, wait: int = 1) -> list:
    answer = smq.batch_receive_message(
        queue_name, models.BatchReceiveMessageRequest(num_of_messages=count, waitseconds=wait)
    )
    assert answer.status_code == 200
    return answer.body.messages


def test_send_with_its_properties_then_receive_change_visibility_and_batch_delete(smq, queue):
    binary = base64.b64encode(b"\x00\x01").decode()
    properties = {
        "kind": models.UserPropertiesValue(data_type="STRING", string_value="order"),
        "count": models.UserPropertiesValue(data_type="NUMBER", string_value="3"),
        "raw": models.UserPropertiesValue(data_type="BINARY", binary_value=binary),
    }
    sent = send(smq, queue.queue_name, "hello json", priority=3, delay_seconds=0, user_properties=properties)
    assert sent.status_code == 201
    assert sent.body.message_body_md5 == md5("hello json") and sent.body.message_id
    assert sent.headers["x-mns-version"] == "2026-04-09" and sent.headers["content-type"].startswith("application/json")

    (got,) = receive(smq, queue.queue_name)
    assert (got.message_id, got.message_body, got.message_body_md5) == (
        sent.body.message_id,
        "hello json",
        md5("hello json"),
    )
    assert (got.priority, got.dequeue_count) == (3, 1)
    assert all(isinstance(v, int) for v in (got.enqueue_time, got.first_dequeue_time, got.next_visible_time))
    assert got.next_visible_time > got.first_dequeue_time >= got.enqueue_time
    assert {k: (v.data_type, v.string_value, v.binary_value) for k, v in got.user_properties.items()} == {
        "kind": ("STRING", "order", None),
        "count": ("NUMBER", "3", None),
        "raw": ("BINARY", None, binary),
    }

    changed = smq.change_message_visibility(
        queue.queue_name,
        models.ChangeMessageVisibilityRequest(receipt_handle=got.receipt_handle, visibility_timeout=60),
    ).body
    assert changed.receipt_handle != got.receipt_handle and changed.next_visible_time > got.next_visible_time
    deleted = smq.batch_delete_message(
        queue.queue_name, models.BatchDeleteMessageRequest(receipt_handles=[changed.receipt_handle])
    )
    assert deleted.status_code == 204
    assert queue.get_attributes().active_messages + queue.get_attributes().inactive_messages == 0


def test_batch_send_then_batch_peek_and_a_delayed_message_s_handle(smq, queue):
    entries = [models.BatchSendMessageRequestMessages(message_body=f"m{i}", priority=i + 1) for i in range(3)]
    sent = smq.batch_send_message(queue.queue_name, models.BatchSendMessageRequest(messages=entries))
    assert sent.status_code == 201
    assert [m.message_body_md5 for m in sent.body.messages] == [md5(f"m{i}") for i in range(3)]
    peeked = smq.batch_peek_message(queue.queue_name, models.BatchPeekMessageRequest(num_of_messages=16, peekonly=True))
    assert peeked.status_code == 200
    assert sorted((m.message_body, m.priority, m.dequeue_count) for m in peeked.body.messages) == [
        ("m0", 1, 0),
        ("m1", 2, 0),
        ("m2", 3, 0),
    ]
    assert {m.message_id for m in peeked.body.messages} == {m.message_id for m in sent.body.messages}
    delayed = send(smq, queue.queue_name, "later", delay_seconds=60)
    assert delayed.body.receipt_handle  # a delayed message's handle, as on the XML plane
    assert queue.get_attributes().delay_messages == 1


def test_a_receive_waits_for_the_message_sent_while_it_waits(smq, endpoint, queue):
    other = smqproxy(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    threading.Timer(1.0, lambda: send(other, queue.queue_name, "arrived")).start()
    started = time.monotonic()
    (got,) = receive(smq, queue.queue_name, count=1, wait=10)
    assert got.message_body == "arrived" and 0.8 < time.monotonic() - started < 8


def test_publish_reaches_a_queue_subscription_with_its_tag(smq, account_a, queue, tname):
    topic = account_a.get_topic(tname)
    topic.create(TopicMeta())
    try:
        endpoint = f"acs:mns:cn-hangzhou:{ACCOUNT_A[0]}:queues/{queue.queue_name}"
        topic.get_subscription("s").subscribe(
            SubscriptionMeta(endpoint, notify_content_format="SIMPLIFIED", filter_tag="t1")
        )
        published = smq.publish_message(tname, models.PublishMessageRequest(message_body="fan out", message_tag="t1"))
        assert published.status_code == 201 and published.body.message_body_md5 == md5("fan out")
        smq.publish_message(tname, models.PublishMessageRequest(message_body="filtered", message_tag="t2"))
        (got,) = receive(smq, queue.queue_name, wait=10)
        assert got.message_body == "fan out"
    finally:
        topic.delete()


def test_the_operations_the_java_sdk_of_the_api_adds_receive_peek_and_delete_one(smq, queue):
    send(smq, queue.queue_name, "one")
    peeked = smqproxy_call(smq, "PeekMessage", "GET", f"/queues/{queue.queue_name}/messages", {"peekonly": "true"})
    assert peeked["body"]["MessageBody"] == "one" and "ReceiptHandle" not in peeked["body"]
    got = smqproxy_call(smq, "ReceiveMessage", "GET", f"/queues/{queue.queue_name}/messages", {"waitseconds": "1"})
    assert got["body"]["MessageBody"] == "one" and got["body"]["DequeueCount"] == 1
    path = f"/queues/{queue.queue_name}/messages"
    deleted = smqproxy_call(smq, "DeleteMessage", "DELETE", path, {"ReceiptHandle": got["body"]["ReceiptHandle"]})
    assert deleted["statusCode"] == 204


def test_errors_come_back_as_json_with_the_xml_plane_s_codes(smq, endpoint, queue):
    missing = "no-such-queue-" + uuid.uuid4().hex[:8]
    cases = [
        (lambda: send(smq, missing, "x"), "QueueNotExist", 404),
        (lambda: receive(smq, queue.queue_name, wait=0), "MessageNotExist", 404),
        (lambda: send(smq, queue.queue_name, "x", priority=17), "InvalidArgument", 400),
        (lambda: send(smq, queue.queue_name, ""), "InvalidArgument", 400),
        (lambda: send(smq, queue.queue_name, "x" * 300_000), "InvalidArgument", 400),  # refused before it is read
        (
            lambda: smq.change_message_visibility(
                queue.queue_name,
                models.ChangeMessageVisibilityRequest(receipt_handle="not-a-handle", visibility_timeout=5),
            ),
            "ReceiptHandleError",
            400,
        ),
        (
            lambda: smq.batch_send_message(queue.queue_name, models.BatchSendMessageRequest(messages=[])),
            "InvalidArgument",
            400,
        ),
        (lambda: send(smqproxy(endpoint, ACCOUNT_A[1], "WRONG"), queue.queue_name, "x"), "SignatureDoesNotMatch", 403),
        (lambda: send(smqproxy(endpoint, "NOSUCHKEY", "S"), queue.queue_name, "x"), "InvalidAccessKeyId", 403),
        (lambda: send(smqproxy(endpoint, ACCOUNT_B[1], ACCOUNT_B[2]), queue.queue_name, "x"), "QueueNotExist", 404),
    ]
    for call, code, status in cases:
        error = refusal(call)
        assert (error.code, error.data["statusCode"]) == (code, status), error
        assert error.data["RequestId"] and error.data["HostId"].startswith("http"), error.data


def test_a_batch_delete_s_failures_are_listed_under_the_first_failure_s_code(smq, queue):
    send(smq, queue.queue_name, "kept")
    (got,) = receive(smq, queue.queue_name)
    handles = [got.receipt_handle, "not-a-handle"]
    error = refusal(
        lambda: smq.batch_delete_message(queue.queue_name, models.BatchDeleteMessageRequest(receipt_handles=handles))
    )
    assert (error.code, error.data["statusCode"]) == ("ReceiptHandleError", 400)
    assert error.data["Errors"] == [
        {
            "ErrorCode": "ReceiptHandleError",
            "ErrorMessage": "The receipt handle you provide is not valid.",
            "ReceiptHandle": "not-a-handle",
        }
    ]
    assert queue.get_attributes().inactive_messages == 0  # the good handle was deleted


def test_a_call_the_json_plane_does_not_serve_is_refused_in_json(smq, qname):
    error = refusal(lambda: smqproxy_call(smq, "GetQueueAttributes", "GET", f"/queues/{qname}", {}))
    assert (error.code, error.data["statusCode"]) == ("InvalidArgument", 400)
    assert "2015-06-06" in error.data["Message"]


def test_the_xml_and_json_planes_serve_the_same_queue_side_by_side(smq, queue):
    # JSON in, XML out: the classic SDK reads what SMQProxy sent, and deletes it with the handle it got.
    sent = send(smq, queue.queue_name, "from json", priority=2)
    received = queue.receive_message(wait_seconds=3)
    assert (received.message_id, received.message_body, received.priority) == (sent.body.message_id, "from json", 2)
    queue.delete_message(received.receipt_handle)
    # XML in, JSON out, and a handle received on one plane used on the other.
    xml_sent = queue.send_message(Message("from xml"))
    (got,) = receive(smq, queue.queue_name)
    assert (got.message_id, got.message_body, got.message_body_md5) == (
        xml_sent.message_id,
        "from xml",
        md5("from xml"),
    )
    changed = queue.change_message_visibility(got.receipt_handle, 30)
    deleted = smq.batch_delete_message(
        queue.queue_name, models.BatchDeleteMessageRequest(receipt_handles=[changed.receipt_handle])
    )
    assert deleted.status_code == 204
    assert queue.get_attributes().active_messages + queue.get_attributes().inactive_messages == 0


def test_a_body_with_carriage_returns_reads_back_byte_identical_on_either_plane(smq, queue, raw_a):
    """JSON keeps a `\r` as `\r`; the XML plane writes it `&#13;`: each plane reads the other's body as sent."""
    body = "from json\r\nline two\r"
    sent = send(smq, queue.queue_name, body)
    assert sent.body.message_body_md5 == md5(body)
    received = queue.receive_message(wait_seconds=3)
    assert (received.message_id, received.message_body, received.message_body_md5) == (
        sent.body.message_id,
        body,
        md5(body),
    )
    queue.delete_message(received.receipt_handle)
    wire = '<?xml version="1.0" encoding="UTF-8"?><Message xmlns="http://mns.aliyuncs.com/doc/v1/">'
    raw_a.request(
        "POST", f"/queues/{queue.queue_name}/messages", wire + "<MessageBody>xml&#13;\n</MessageBody></Message>"
    )
    (got,) = receive(smq, queue.queue_name)
    assert (got.message_body, got.message_body_md5) == ("xml\r\n", md5("xml\r\n"))


def test_publish_s_mail_and_sms_attributes_are_checked_as_on_the_xml_plane(smq, account_a, tname):
    topic = account_a.get_topic(tname)
    topic.create(TopicMeta())
    try:
        mail = '{"AccountName":"a@example.com","Subject":"S","IsHtml":0}'
        good = models.PublishMessageRequestMessageAttributes(direct_mail=mail, direct_sms='{"Receiver":"13800000000"}')
        assert (
            smq.publish_message(
                tname, models.PublishMessageRequest(message_body="x", message_attributes=good)
            ).status_code
            == 201
        )
        for bad in ({"direct_mail": "{not json"}, {"direct_sms": "[1, 2]"}):
            attributes = models.PublishMessageRequestMessageAttributes(**bad)
            request = models.PublishMessageRequest(message_body="x", message_attributes=attributes)
            error = refusal(lambda request=request: smq.publish_message(tname, request))
            assert (error.code, error.data["statusCode"]) == ("InvalidArgument", 400)
        missing = refusal(lambda: smq.publish_message(tname + "-no", models.PublishMessageRequest(message_body="x")))
        assert (missing.code, missing.data["statusCode"]) == ("TopicNotExist", 404)
    finally:
        topic.delete()


def test_a_fifo_queue_s_groups_and_order_on_the_json_plane(smq, account_a, raw_a, qname):
    create_fifo(raw_a, qname)
    try:
        for i in range(3):
            sent = send(smq, qname, f"m{i}", message_group_id="g")
            assert sent.body.message_body_md5 == md5(f"m{i}")
        refused = refusal(lambda: send(smq, qname, "no group"))
        assert (refused.code, refused.data["statusCode"]) == ("InvalidArgument", 400)
        got = receive(smq, qname, count=16)
        assert [(m.message_body, m.message_group_id) for m in got][:1] == [("m0", "g")]
        handles = [m.receipt_handle for m in got]
        deleted = smq.batch_delete_message(qname, models.BatchDeleteMessageRequest(receipt_handles=handles))
        assert deleted.status_code == 204
        rest = receive(smq, qname, count=16) if len(got) < 3 else []
        assert [m.message_body for m in got + rest] == ["m0", "m1", "m2"]
    finally:
        account_a.get_queue(qname).delete()


def test_temporary_credentials_and_their_policy_hold_on_the_json_plane(endpoint, queue):
    """A security token (sent by the gateway as `security-token`) limited to sending and receiving."""
    policy = {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["mns:SendMessage", "mns:BatchReceiveMessage"],
                "Resource": f"acs:mns:*:{ACCOUNT_A[0]}:/queues/{queue.queue_name}/messages",
            }
        ],
    }
    credentials = issue(endpoint, policy_body(policy))
    temporary = smqproxy(
        endpoint, credentials["AccessKeyId"], credentials["AccessKeySecret"], token=credentials["SecurityToken"]
    )
    assert send(temporary, queue.queue_name, "with a token").status_code == 201
    (got,) = receive(temporary, queue.queue_name)
    assert got.message_body == "with a token"
    request = models.BatchDeleteMessageRequest(receipt_handles=[got.receipt_handle])
    denied = refusal(lambda: temporary.batch_delete_message(queue.queue_name, request))
    assert (denied.code, denied.data["statusCode"]) == ("AccessDenied", 403)
    assert "mns:BatchDeleteMessage" in denied.data["Message"]
    without_token = smqproxy(endpoint, credentials["AccessKeyId"], credentials["AccessKeySecret"])
    assert refusal(lambda: send(without_token, queue.queue_name, "x")).code in (
        "InvalidAccessKeyId",
        "InvalidSecurityToken",
    )
