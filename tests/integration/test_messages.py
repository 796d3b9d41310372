import base64
import os
import random

import pytest

from mnsd.ground import errors
from mnsd.ground.clock import ms
from mnsd.model.inputs import MessageInput
from mnsd.model.messages import Property, body_md5
from mnsd.model.queues import QueueCounts
from mnsd.storage.capacity import item_size
from mnsd.wire.codec import parse
from mnsd.wire.requests import queue_attribute_changes

ACCOUNT = "1000000000000001"
_RNG = random.Random(1)


def queue_xml(**attrs):
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in attrs.items())
    return queue_attribute_changes(parse(f"<Queue>{inner}</Queue>".encode()))


def make_queue(service, name="q", **attrs):
    service.create_queue(ACCOUNT, name, queue_xml(**attrs) if attrs else None)
    return name


def send(service, body="hello", delay=None, priority=8, name="q", **kwargs):
    (result,) = service.send(ACCOUNT, name, [MessageInput(body, delay, priority, **kwargs)])
    assert result.error is None
    return result


def sent_and_received(service, visibility_timeout: int):
    """A new queue q with `visibility_timeout`, one message sent to it and received: what the receive gave."""
    make_queue(service, VisibilityTimeout=visibility_timeout)
    send(service)
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    return got


def counts(service, name="q"):
    return service.queue_counts(service.get_queue(ACCOUNT, name))


def items(dynamodb, service):
    return dynamodb.scan(TableName=service.messages.table)["Items"]


def test_send_receive_delete(service, clock):
    make_queue(service)
    sent = send(service, "hello")
    assert sent.receipt_handle is None
    assert sent.message.body_md5 == body_md5("hello")
    enqueue = ms(clock.now())
    (peeked,) = service.peek(ACCOUNT, "q", 1)
    assert peeked.first_dequeue_time == peeked.enqueue_time == enqueue
    clock.advance(2)
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    message = got.message
    assert message.message_id == sent.message.message_id
    assert message.body == "hello"
    assert message.dequeue_count == 1
    assert message.enqueue_time == enqueue
    assert message.first_dequeue_time == enqueue + 2000
    assert message.visible_at == ms(clock.now()) + 30_000
    assert counts(service) == QueueCounts(active=0, inactive=1, delayed=0)
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 0)
    service.delete(ACCOUNT, "q", got.receipt_handle)
    assert counts(service) == QueueCounts()
    with pytest.raises(errors.MessageNotExist):
        service.delete(ACCOUNT, "q", got.receipt_handle)
    with pytest.raises(errors.ReceiptHandleError):
        service.delete(ACCOUNT, "q", "garbage")
    with pytest.raises(errors.MissingReceiptHandle):
        service.delete(ACCOUNT, "q", "")


def test_handle_of_other_queue_is_invalid(service):
    make_queue(service, "a")
    make_queue(service, "b")
    send(service, name="a")
    (got,) = service.receive(ACCOUNT, "a", 1, 0)
    with pytest.raises(errors.ReceiptHandleError):
        service.delete(ACCOUNT, "b", got.receipt_handle)


def test_message_too_large(service):
    make_queue(service, MaximumMessageSize=1024)
    with pytest.raises(errors.InvalidArgument):
        service.send(ACCOUNT, "q", [MessageInput("ok", None, 8), MessageInput("x" * 1025, None, 8)])
    assert counts(service) == QueueCounts()  # all-or-nothing validation


def test_visibility_timeout_redelivers(service, clock):
    first = sent_and_received(service, visibility_timeout=10)
    clock.advance(9.5)
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 0)
    clock.advance(1)
    assert counts(service).active == 1
    (second,) = service.receive(ACCOUNT, "q", 1, 0)
    assert second.message.message_id == first.message.message_id
    assert second.message.dequeue_count == 2
    assert second.message.first_dequeue_time == first.message.first_dequeue_time
    assert second.receipt_handle != first.receipt_handle
    with pytest.raises(errors.MessageNotExist):
        service.delete(ACCOUNT, "q", first.receipt_handle)
    with pytest.raises(errors.MessageNotExist):
        service.change_visibility(ACCOUNT, "q", first.receipt_handle, 30)
    service.delete(ACCOUNT, "q", second.receipt_handle)
    assert counts(service) == QueueCounts()


def test_expired_handle_is_stale_even_before_redelivery(service, clock):
    got = sent_and_received(service, visibility_timeout=5)
    clock.advance(6)
    with pytest.raises(errors.MessageNotExist):
        service.delete(ACCOUNT, "q", got.receipt_handle)
    assert counts(service).active == 1


def test_change_visibility(service, clock):
    got = sent_and_received(service, visibility_timeout=10)
    clock.advance(1)
    handle, visible_at = service.change_visibility(ACCOUNT, "q", got.receipt_handle, 100)
    assert visible_at == ms(clock.now()) + 100_000
    assert handle != got.receipt_handle
    # The old handle, though its time has not come, names an old lease version.
    with pytest.raises(errors.MessageNotExist):
        service.delete(ACCOUNT, "q", got.receipt_handle)
    with pytest.raises(errors.MessageNotExist):
        service.change_visibility(ACCOUNT, "q", got.receipt_handle, 5)
    clock.advance(50)  # past the original timeout, before the new one
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 0)
    assert counts(service) == QueueCounts(inactive=1)
    # Shorten it: visible again at once.
    handle, _ = service.change_visibility(ACCOUNT, "q", handle, 0)
    assert counts(service) == QueueCounts(active=1)
    with pytest.raises(errors.MessageNotExist):
        service.delete(ACCOUNT, "q", handle)
    (again,) = service.receive(ACCOUNT, "q", 1, 0)
    assert again.message.dequeue_count == 2
    service.delete(ACCOUNT, "q", again.receipt_handle)


def test_delayed_messages(service, clock):
    make_queue(service, DelaySeconds=10)
    queue_delayed = send(service, "queue-delay")
    message_delayed = send(service, "own-delay", delay=3)
    immediate = send(service, "no-delay", delay=0)
    assert queue_delayed.receipt_handle and message_delayed.receipt_handle
    assert immediate.receipt_handle is None
    assert counts(service) == QueueCounts(active=1, delayed=2)
    (got,) = service.receive(ACCOUNT, "q", 16, 0)
    assert got.message.body == "no-delay"
    assert counts(service) == QueueCounts(inactive=1, delayed=2)
    clock.advance(3)
    assert counts(service) == QueueCounts(active=1, inactive=1, delayed=1)
    (peeked,) = service.peek(ACCOUNT, "q", 16)
    assert peeked.body == "own-delay"
    assert peeked.dequeue_count == 0
    clock.advance(7)
    assert counts(service) == QueueCounts(active=2, inactive=1, delayed=0)
    bodies = {r.message.body for r in service.receive(ACCOUNT, "q", 16, 0)}
    assert bodies == {"own-delay", "queue-delay"}
    assert counts(service) == QueueCounts(inactive=3)


def test_delayed_message_handle_can_delete(service, clock):
    make_queue(service)
    sent = send(service, delay=60)
    service.delete(ACCOUNT, "q", sent.receipt_handle)
    clock.advance(61)
    assert counts(service) == QueueCounts()


def test_retention(service, clock, dynamodb):
    make_queue(service, MessageRetentionPeriod=60)
    send(service, "old")
    delayed = send(service, "older-delayed", delay=120)
    clock.advance(59)
    assert counts(service) == QueueCounts(active=1, delayed=1)
    clock.advance(2)
    assert counts(service) == QueueCounts()
    with pytest.raises(errors.MessageNotExist):
        service.peek(ACCOUNT, "q", 16)
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 16, 0)
    # moto never runs TTL: the expired leases a receive read (a quiet queue's, from the table: the delayed one
    # too, its retention over before its delay) it deleted, so no later receive reads them again.
    assert items(dynamodb, service) == []
    assert delayed.message.expires_at < clock.now()
    send(service, "new")
    assert [r.message.body for r in service.receive(ACCOUNT, "q", 16, 0)] == ["new"]


def test_priority_order(service):
    make_queue(service)
    for priority in (8, 1, 16, 3, 12):
        send(service, f"p{priority}", priority=priority)
    order = [service.receive(ACCOUNT, "q", 1, 0)[0].message.body for _ in range(5)]
    assert order == ["p1", "p3", "p8", "p12", "p16"]


def test_priority_in_batch(service):
    make_queue(service)
    for priority in (16, 8, 1):
        send(service, f"p{priority}", priority=priority)
    assert [m.body for m in service.peek(ACCOUNT, "q", 16)] == ["p1", "p8", "p16"]
    assert [r.message.body for r in service.receive(ACCOUNT, "q", 2, 0)] == ["p1", "p8"]


def test_peek_does_not_change_state(service):
    make_queue(service)
    send(service, "a")
    before = counts(service)
    for _ in range(3):
        (peeked,) = service.peek(ACCOUNT, "q", 16)
        assert peeked.body == "a" and peeked.dequeue_count == 0
    assert counts(service) == before == QueueCounts(active=1)
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.dequeue_count == 1
    assert got.message.version == peeked.version + 1
    with pytest.raises(errors.MessageNotExist):
        service.peek(ACCOUNT, "q", 16)


def test_long_poll_returns_when_delayed_message_matures(service, clock):
    make_queue(service)
    send(service, "later", delay=3)
    start = clock.now()
    (got,) = service.receive(ACCOUNT, "q", 1, 10)
    assert got.message.body == "later"
    assert 3 <= clock.now() - start < 3.5


def test_long_poll_queue_default_wait(service, clock):
    make_queue(service, PollingWaitSeconds=4)
    start = clock.now()
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, None)
    assert 4 <= clock.now() - start < 4.5


def test_empty_wait(service, clock):
    make_queue(service)
    start = clock.now()
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 5)
    assert 5 <= clock.now() - start < 5.5
    start = clock.now()
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 0)
    assert clock.now() == start


def test_long_poll_capped(make, clock):
    service = make(max_poll_seconds=2)
    make_queue(service)
    start = clock.now()
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 30)
    assert 2 <= clock.now() - start < 2.5


def test_batch_delete_partial_failures(service, clock):
    make_queue(service, VisibilityTimeout=10)
    service.send(ACCOUNT, "q", [MessageInput(f"m{i}", None, 8) for i in range(4)])
    got = service.receive(ACCOUNT, "q", 16, 0)
    assert len(got) == 4
    handles = [r.receipt_handle for r in got]
    service.delete(ACCOUNT, "q", handles[1])  # already deleted: stale
    failures = service.batch_delete(ACCOUNT, "q", [handles[0], handles[1], "not-a-handle", handles[2], ""])
    failed = {handle: type(exc) for handle, exc in failures}
    assert failed == {
        handles[1]: errors.MessageNotExist,
        "not-a-handle": errors.ReceiptHandleError,
        "": errors.MissingReceiptHandle,
    }
    assert counts(service) == QueueCounts(inactive=1)
    with pytest.raises(errors.InvalidArgument):
        service.batch_delete(ACCOUNT, "q", [])
    with pytest.raises(errors.InvalidArgument):
        service.batch_delete(ACCOUNT, "q", [handles[3]] * 17)


@pytest.mark.parametrize(
    "body,out_of_line",
    [
        (base64.b64encode(os.urandom(45 * 1024)).decode(), True),  # 60 KB, hardly compressible
        ("".join(chr(_RNG.randrange(0x4E00, 0x9FFF)) for _ in range(700)) + "\U0001f600", True),  # 2 KB
        ("x" * 50_000, False),  # compresses to well under 1 KB: inline
        ("small body", False),
        ("", False),
    ],
)
def test_bodies_round_trip(service, dynamodb, body, out_of_line):
    make_queue(service)
    sent = send(service, body)
    assert sent.message.body_md5 == body_md5(body)
    stored = items(dynamodb, service)
    assert len(stored) == (2 if out_of_line else 1)
    (peeked,) = service.peek(ACCOUNT, "q", 1)
    assert peeked.body == body
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.body == body
    assert got.message.body_md5 == body_md5(body)
    # The lease a receive rewrites stays small when the body is stored apart; it repeats neither the message id
    # (its sort key ends with it) nor the body's MD5 (computed from an inline body, kept in a body item).
    lease = next(i for i in items(dynamodb, service) if i["sk"]["S"].startswith("L"))
    assert "id" not in lease and "m" not in lease
    if out_of_line:
        assert item_size(lease) <= 1024
        (kept,) = [i for i in items(dynamodb, service) if i["sk"]["S"].startswith("B")]
        assert kept["m"]["S"] == body_md5(body)


@pytest.mark.parametrize("out_of_line", [False, True])
def test_leases_written_before_they_lost_id_and_md5_still_work(service, dynamodb, out_of_line):
    """A lease of the former shape (`id` and `m` on the lease, none on its body item) is read, received and deleted
    as before."""
    make_queue(service)
    body = base64.b64encode(os.urandom(2000)).decode() if out_of_line else "old body"
    sent = send(service, body)
    for item in items(dynamodb, service):
        if item["sk"]["S"].startswith("L"):
            item.update({"id": {"S": sent.message.message_id}, "m": {"S": "OLDSTOREDMD5"}})
        else:
            del item["m"]
        dynamodb.put_item(TableName=service.messages.table, Item=item)
    (peeked,) = service.peek(ACCOUNT, "q", 1)
    assert (peeked.message_id, peeked.body, peeked.body_md5) == (sent.message.message_id, body, "OLDSTOREDMD5")
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert (got.message.message_id, got.message.body, got.message.body_md5) == (peeked.message_id, body, "OLDSTOREDMD5")
    service.delete(ACCOUNT, "q", got.receipt_handle)
    assert counts(service) == QueueCounts(0, 0, 0)


def test_properties_round_trip(service):
    make_queue(service)
    user = (Property("k1", "v1", "STRING"), Property("n\u00e9", "42", "NUMBER"))
    system = (Property("DLQSourceArn", "arn:x", "STRING"),)
    send(service, "p", user_properties=user, system_properties=system, message_group_id="g1")
    (peeked,) = service.peek(ACCOUNT, "q", 1)
    assert peeked.user_properties == user
    assert peeked.system_properties == system
    assert peeked.message_group_id == "g1"
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.user_properties == user
    assert got.message.system_properties == system
    assert got.message.message_group_id == "g1"


def test_properties_with_big_body(service):
    make_queue(service)
    user = (Property("key", "v" * 100, "STRING"),)
    body = base64.b64encode(os.urandom(3000)).decode()
    send(service, body, user_properties=user)
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.body == body and got.message.user_properties == user


@pytest.mark.parametrize("length", [700, 800, 850, 880, 900, 920, 950, 1000])
def test_leases_stay_within_one_write_unit(service, dynamodb, clock, length):
    """Near the 1 KB boundary: after receives (which add and grow attributes) an item is still <= 1 KB."""
    make_queue(service, VisibilityTimeout=1)
    body = "".join(chr(_RNG.randrange(0x21, 0x7F)) for _ in range(length))
    send(service, body)
    for _ in range(3):
        service.receive(ACCOUNT, "q", 1, 0)
        clock.advance(2)
    for item in items(dynamodb, service):
        if item["sk"]["S"].startswith("L"):
            assert item_size(item) <= 1024, item_size(item)
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.body == body and got.message.dequeue_count == 4
