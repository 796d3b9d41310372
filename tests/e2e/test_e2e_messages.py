"""Message operations through the SDK, in base64 (default) and raw mode."""

from __future__ import annotations

import base64
import hashlib
import threading
import time

import pytest
from mns.message_property import MessagePropertyValue, MessageSystemPropertyValue, PropertyType, SystemPropertyType
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta

from tests.e2e.resources import text_queue

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def text(body) -> str:
    """The SDK's base64 mode hands back the decoded body as bytes."""
    return body.decode("utf-8") if isinstance(body, bytes) else body


def md5u(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest().upper()


@pytest.mark.parametrize("base64_mode", [True, False])
def test_send_receive_delete_roundtrip(queue, base64_mode):
    queue.set_encoding(base64_mode)
    body = "héllo wörld ✓ 你好"
    sent = queue.send_message(Message(body))
    wire = base64.b64encode(body.encode()).decode() if base64_mode else body
    assert sent.message_body_md5 == md5u(wire)
    assert sent.message_id

    peeked = queue.peek_message()
    assert text(peeked.message_body) == body and peeked.message_id == sent.message_id
    assert peeked.dequeue_count == 0
    assert peeked.first_dequeue_time == peeked.enqueue_time

    got = queue.receive_message()
    assert text(got.message_body) == body and got.message_id == sent.message_id
    assert got.message_body_md5 == md5u(wire)
    assert got.dequeue_count == 1
    assert got.enqueue_time > 1_600_000_000_000  # ms
    assert got.first_dequeue_time >= got.enqueue_time
    assert got.next_visible_time > got.enqueue_time
    assert got.receipt_handle
    queue.delete_message(got.receipt_handle)
    with pytest.raises(MNSServerException) as exc:
        queue.receive_message()
    assert exc.value.type == "MessageNotExist"
    with pytest.raises(MNSServerException) as exc:
        queue.peek_message()
    assert exc.value.type == "MessageNotExist"


@pytest.mark.parametrize("base64_mode", [True, False])
def test_batch_send_receive_peek_delete(queue, base64_mode):
    queue.set_encoding(base64_mode)
    bodies = [f"body-{i}-ü" for i in range(5)]
    sent = queue.batch_send_message([Message(b) for b in bodies])
    assert len(sent) == 5 and len({m.message_id for m in sent}) == 5
    for m, b in zip(sent, bodies, strict=True):
        wire = base64.b64encode(b.encode()).decode() if base64_mode else b
        assert m.message_body_md5 == md5u(wire)
    peeked = queue.batch_peek_message(16)
    assert sorted(text(m.message_body) for m in peeked) == sorted(bodies)
    got = queue.batch_receive_message(3)
    assert len(got) == 3 and all(m.dequeue_count == 1 for m in got)
    rest = queue.batch_receive_message(16)
    assert len(rest) == 2
    assert sorted(text(m.message_body) for m in got + rest) == sorted(bodies)
    queue.batch_delete_message([m.receipt_handle for m in got + rest])
    with pytest.raises(MNSServerException) as exc:
        queue.batch_receive_message(16)
    assert exc.value.type == "MessageNotExist"
    with pytest.raises(MNSServerException) as exc:
        queue.batch_peek_message(16)
    assert exc.value.type == "MessageNotExist"


def test_batch_delete_partial_failure(queue, server_clock):
    queue.send_message(Message("x"))
    good = queue.receive_message().receipt_handle
    queue.send_message(Message("y"))
    other = queue.receive_message()
    queue.change_message_visibility(other.receipt_handle, 1)
    server_clock.advance(1.2)
    stale = other.receipt_handle
    fresh = queue.receive_message()  # re-delivery invalidates the stale handle
    assert fresh.message_id == other.message_id and fresh.dequeue_count == 2
    with pytest.raises(MNSServerException) as exc:
        queue.batch_delete_message([good, stale])
    e = exc.value
    assert e.sub_errors, e
    assert len(e.sub_errors) == 1
    assert e.sub_errors[0]["ReceiptHandle"] == stale
    assert e.sub_errors[0]["ErrorCode"] in ("MessageNotExist", "ReceiptHandleError")
    a = queue.get_attributes()
    assert a.active_messages + a.inactive_messages == 1  # the good one was deleted


@pytest.mark.parametrize("passing", ["on the clock", pytest.param("in real time", marks=pytest.mark.slow)])
def test_change_visibility_and_stale_handle(queue, server_clock, passing):
    """The visibility timeout's second passes on the server's clock (and, once, in real time)."""
    queue.set_encoding(False)
    queue.send_message(Message("vis"))
    first = queue.receive_message()
    changed = queue.change_message_visibility(first.receipt_handle, 1)
    assert changed.receipt_handle and changed.receipt_handle != first.receipt_handle
    assert int(changed.next_visible_time) > 0  # the SDK leaves this one a string
    if passing == "in real time":
        time.sleep(1.2)
    else:
        server_clock.advance(1.2)
    second = queue.receive_message()
    assert second.dequeue_count == 2
    assert second.first_dequeue_time == first.first_dequeue_time
    with pytest.raises(MNSServerException) as exc:
        queue.delete_message(first.receipt_handle)
    assert exc.value.type == "MessageNotExist"
    with pytest.raises(MNSServerException) as exc:
        queue.delete_message(changed.receipt_handle)
    assert exc.value.type == "MessageNotExist"
    queue.delete_message(second.receipt_handle)


def test_delay_seconds_message_overrides_queue(account_a, qname):
    m = QueueMeta()
    m.set_delay_seconds(100)
    q = text_queue(account_a, qname, m)
    try:
        r = q.send_message(Message("later"))
        assert r.receipt_handle  # delayed messages get a receipt handle
        q.send_message(Message("now", delay_seconds=0))
        got = q.receive_message()
        assert got.message_body == "now"
        with pytest.raises(MNSServerException) as exc:
            q.receive_message()
        assert exc.value.type == "MessageNotExist"
        a = q.get_attributes()
        assert (a.delay_messages, a.inactive_messages, a.active_messages) == (1, 1, 0)
    finally:
        q.delete()


def test_priority_order(queue):
    queue.set_encoding(False)
    for i in range(3):
        queue.send_message(Message(f"low-{i}", priority=16))
    queue.send_message(Message("high", priority=1))
    assert queue.receive_message().message_body == "high"
    peek = queue.peek_message()
    assert peek.priority == 16


def test_user_and_system_properties(queue):
    queue.set_encoding(False)
    msg = Message("props")
    msg.add_user_property("s", MessagePropertyValue(PropertyType.STRING, "vä l"))
    msg.add_user_property("n", MessagePropertyValue(PropertyType.NUMBER, 42))
    msg.add_user_property("b", MessagePropertyValue(PropertyType.BOOLEAN, True))
    msg.add_user_property("bin", MessagePropertyValue(PropertyType.BINARY, b"\x00\x01bytes"))
    msg.add_system_property(
        "traceparent",
        MessageSystemPropertyValue(
            SystemPropertyType.STRING, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ),
    )
    queue.send_message(msg)
    got = queue.receive_message()
    up = got.get_user_properties()
    assert set(up) == {"s", "n", "b", "bin"}
    assert up["s"].data_type == "STRING" and up["s"].string_value == "vä l"
    assert up["n"].data_type == "NUMBER" and up["n"].string_value == "42"
    assert up["b"].data_type == "BOOLEAN" and up["b"].string_value == "true"
    assert up["bin"].data_type == "BINARY" and up["bin"].binary_value == b"\x00\x01bytes"
    sp = got.get_system_properties()
    assert "traceparent" in sp
    assert sp["traceparent"].string_value.startswith("00-0af7651916cd43dd")


def test_long_poll_wakes_on_send(queue, new_account_a):
    queue.set_encoding(False)
    result = {}
    # the SDK's client holds one HTTP connection: the waiting receive needs its own Account
    waiter = new_account_a().get_queue(queue.queue_name)
    waiter.set_encoding(False)

    def recv():
        t0 = time.monotonic()
        try:
            result["msg"] = waiter.receive_message(5)
        except Exception as exc:  # pragma: no cover - reported below
            result["err"] = exc
        result["elapsed"] = time.monotonic() - t0

    th = threading.Thread(target=recv)
    th.start()
    time.sleep(1)
    queue.send_message(Message("wake"))
    th.join(10)
    assert "err" not in result, result
    assert result["msg"].message_body == "wake"
    assert 0.9 <= result["elapsed"] <= 2.2, result


def polled_while_the_clock_moves(queue, server_clock, seconds: float):
    """What a 5 s long poll gets while the server's clock moves `seconds` on, 0.3 s into the poll, and how long the
    poll took (real seconds)."""
    threading.Timer(0.3, server_clock.advance, [seconds]).start()
    t0 = time.monotonic()
    got = queue.receive_message(5)
    return got, time.monotonic() - t0


def test_long_poll_receives_delayed_message(queue, server_clock):
    """The waiting poll gets the message once the server's time reaches it (not 3 s of real time later)."""
    queue.set_encoding(False)
    queue.send_message(Message("delayed", delay_seconds=3))
    got, elapsed = polled_while_the_clock_moves(queue, server_clock, 3)
    assert got.message_body == "delayed"
    assert 0.25 <= elapsed <= 2.5, elapsed


def test_long_poll_sees_visibility_expiry(queue, server_clock):
    queue.set_encoding(False)
    queue.send_message(Message("again"))
    first = queue.receive_message()
    queue.change_message_visibility(first.receipt_handle, 3)
    got, elapsed = polled_while_the_clock_moves(queue, server_clock, 3)
    assert got.message_id == first.message_id and got.dequeue_count == 2
    assert 0.25 <= elapsed <= 2.5, elapsed


def test_long_poll_times_out_with_message_not_exist(queue):
    t0 = time.monotonic()
    with pytest.raises(MNSServerException) as exc:
        queue.receive_message(1)
    assert exc.value.type == "MessageNotExist"
    assert 0.8 <= time.monotonic() - t0 <= 2.5


def test_a_body_with_carriage_returns_reads_back_byte_identical(queue, raw_a):
    """A stored `\r` is written `&#13;` in the XML answers (an XML reader turns a bare one into `\n`): the SDK in raw
    mode reads the body byte for byte on receive, peek and batch receive, with the MD5 the service computed. (Sent
    by the SDK, a bare `\r` is turned into `\n` by any XML reader before it is stored: `&#13;` or the JSON plane
    carries one.)"""
    queue.set_encoding(False)
    body = "line one\r\nline two\rthree\n\r\n"
    wire = '<?xml version="1.0" encoding="UTF-8"?><Message xmlns="http://mns.aliyuncs.com/doc/v1/">'
    wire += "<MessageBody>line one&#13;\nline two&#13;three\n&#13;\n</MessageBody></Message>"
    sent = raw_a.request("POST", f"/queues/{queue.queue_name}/messages", wire)
    assert sent.status == 201, sent.body
    assert queue.peek_message().message_body == body
    got = queue.receive_message()
    assert (got.message_body, got.message_body_md5) == (body, md5u(body))
    queue.change_message_visibility(got.receipt_handle, 1)
    time.sleep(1.2)
    (again,) = queue.batch_receive_message(16, 3)
    assert again.message_body.encode() == body.encode()
    queue.delete_message(again.receipt_handle)
