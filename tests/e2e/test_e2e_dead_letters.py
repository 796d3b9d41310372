"""Dead-letter queues (DlqPolicy, redrive) and message rewind (RewindPeriod, rewindtime), against the local
server: the official SDK for messages, raw signed requests for the elements and calls it does not know."""

from __future__ import annotations

import json
import math
import threading
import time
import uuid

import pytest
from mns.message_property import MessagePropertyValue, PropertyType
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta

from tests.support.raw_http import NS, assert_mns_error
from tests.support.servers import ACCOUNT_A

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


def queue_xml(inner: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><Queue {XMLNS}>{inner}</Queue>'


def dlq_xml(target: str, count: object, enabled: str = "True") -> str:
    return (
        f"<DlqPolicy><Enabled>{enabled}</Enabled><DeadLetterTargetQueue>{target}</DeadLetterTargetQueue>"
        f"<MaxReceiveCount>{count}</MaxReceiveCount></DlqPolicy>"
    )


def new_name() -> str:
    return "e2e-" + uuid.uuid4().hex[:20]


@pytest.fixture
def make_queue(raw_a, account_a):
    """Creates queues with raw XML bodies; deletes them afterwards."""
    names: list[str] = []

    def make(inner: str = "", name: str | None = None):
        name = name or new_name()
        resp = raw_a.request("PUT", f"/queues/{name}", queue_xml(inner))
        assert resp.status == 201, resp.body
        names.append(name)
        q = account_a.get_queue(name)
        q.set_encoding(False)
        return q

    yield make
    for name in names:
        raw_a.request("DELETE", f"/queues/{name}")


def attributes(raw_a, name: str):
    resp = raw_a.request("GET", f"/queues/{name}")
    assert resp.status == 200, resp.body
    return resp.xml()


def dlq_policy_of(raw_a, name: str) -> dict | None:
    """GetQueueAttributes' DlqPolicy: JSON text (SDK 1.3.0 fails on a nested element under <Queue>)."""
    node = attributes(raw_a, name).find(NS + "DlqPolicy")
    return None if node is None else json.loads(node.text)


def receive_all(q, wait: int = 1, size: int = 16) -> list:
    try:
        return q.batch_receive_message(size, wait)
    except MNSServerException as exc:
        assert exc.type == "MessageNotExist"
        return []


# --- DlqPolicy attribute --------------------------------------------------------------------------


def test_dlq_policy_is_set_returned_changed_and_turned_off(raw_a, make_queue, account_a):
    dlq = make_queue()
    source = make_queue(f"<VisibilityTimeout>5</VisibilityTimeout>{dlq_xml(dlq.queue_name, 3)}")
    assert dlq_policy_of(raw_a, source.queue_name) == {
        "Enabled": True,
        "DeadLetterTargetQueue": dlq.queue_name,
        "MaxReceiveCount": 3,
    }
    assert source.get_attributes().visibility_timeout == 5  # the SDK still reads the queue's attributes
    listed, _ = account_a.list_queue(source.queue_name)
    assert len(listed) == 1
    resp = raw_a.request(
        "PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(dlq_xml(dlq.queue_name, 1000))
    )
    assert resp.status == 204, resp.body
    assert dlq_policy_of(raw_a, source.queue_name)["MaxReceiveCount"] == 1000
    # The JSON text GetQueueAttributes answers with is accepted as well.
    text = json.dumps({"Enabled": True, "DeadLetterTargetQueue": dlq.queue_name, "MaxReceiveCount": 7})
    resp = raw_a.request(
        "PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(f"<DlqPolicy>{text}</DlqPolicy>")
    )
    assert resp.status == 204, resp.body
    assert dlq_policy_of(raw_a, source.queue_name)["MaxReceiveCount"] == 7
    off = "<DlqPolicy><Enabled>False</Enabled></DlqPolicy>"
    resp = raw_a.request("PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(off))
    assert resp.status == 204, resp.body
    assert dlq_policy_of(raw_a, source.queue_name) is None
    # Other attributes leave the policy as it is.
    raw_a.request("PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(dlq_xml(dlq.queue_name, 2)))
    raw_a.request("PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml("<DelaySeconds>0</DelaySeconds>"))
    assert dlq_policy_of(raw_a, source.queue_name)["MaxReceiveCount"] == 2


@pytest.mark.parametrize("count", ["0", "1001", "-1", "abc", ""])
def test_max_receive_count_out_of_range_is_invalid_argument(raw_a, make_queue, count):
    dlq = make_queue()
    name = new_name()
    resp = raw_a.request("PUT", f"/queues/{name}", queue_xml(dlq_xml(dlq.queue_name, count)))
    assert_mns_error(resp, 400, "InvalidArgument")
    assert_mns_error(raw_a.request("GET", f"/queues/{name}"), 404, "QueueNotExist")  # not created
    source = make_queue()
    resp = raw_a.request(
        "PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(dlq_xml(dlq.queue_name, count))
    )
    assert_mns_error(resp, 400, "InvalidArgument")
    assert dlq_policy_of(raw_a, source.queue_name) is None


def test_dlq_target_errors(raw_a, make_queue, account_b):
    source = make_queue()
    own = raw_a.request(
        "PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(dlq_xml(source.queue_name, 3))
    )
    assert_mns_error(own, 400, "InvalidArgument")
    missing = raw_a.request("PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(dlq_xml(new_name(), 3)))
    assert_mns_error(missing, 404, "QueueNotExist")
    name = new_name()
    created = raw_a.request("PUT", f"/queues/{name}", queue_xml(dlq_xml(new_name(), 3)))
    assert_mns_error(created, 404, "QueueNotExist")
    # Another account's queue of that name is not a target: the target is looked up in the caller's account.
    other = account_b.get_queue(new_name())
    other.create(QueueMeta())
    try:
        resp = raw_a.request(
            "PUT", f"/queues/{source.queue_name}?metaoverride=true", queue_xml(dlq_xml(other.queue_name, 3))
        )
        assert_mns_error(resp, 404, "QueueNotExist")
    finally:
        other.delete()
    no_target = raw_a.request(
        "PUT",
        f"/queues/{source.queue_name}?metaoverride=true",
        queue_xml("<DlqPolicy><Enabled>True</Enabled></DlqPolicy>"),
    )
    assert_mns_error(no_target, 400, "InvalidArgument")
    assert dlq_policy_of(raw_a, source.queue_name) is None


# --- dead-lettering -------------------------------------------------------------------------------


def test_a_consumer_that_always_fails_dead_letters_after_exactly_n_receives(raw_a, make_queue):
    dlq = make_queue()
    source = make_queue(f"<VisibilityTimeout>1</VisibilityTimeout>{dlq_xml(dlq.queue_name, 3)}")
    msg = Message("poison")
    msg.add_user_property("kind", MessagePropertyValue(PropertyType.STRING, "order"))
    sent = source.send_message(msg)
    counts = []
    for _ in range(3):  # receives, never deletes: the message comes back after each visibility timeout
        got = source.receive_message(3)
        assert got.message_id == sent.message_id
        counts.append(got.dequeue_count)
    assert counts == [1, 2, 3]
    with pytest.raises(MNSServerException) as exc:
        source.receive_message(3)  # the 4th receive would exceed MaxReceiveCount: moved instead
    assert exc.value.type == "MessageNotExist"
    attrs = source.get_attributes()
    assert (attrs.active_messages, attrs.inactive_messages) == (0, 0)
    letter = dlq.receive_message(1)
    assert letter.message_body == "poison"
    assert letter.message_id != sent.message_id and letter.dequeue_count == 1
    system = letter.get_system_properties()
    assert system["DLQOriginMessageId"].string_value == sent.message_id
    assert system["DLQSourceArn"].string_value == f"acs:mns:cn-hangzhou:{ACCOUNT_A[0]}:queues/{source.queue_name}"
    assert system["DLQMessageType"].string_value
    assert letter.get_user_properties()["kind"].string_value == "order"


def take(q, wait: int = 1) -> list:
    """Receive and delete (so that a slow run cannot see a dead letter twice after its visibility timeout)."""
    got = receive_all(q, wait)
    for message in got:
        q.delete_message(message.receipt_handle)
    return got


class FailingOddConsumers:
    """Consumers that delete the even messages (`m{n}`) they receive and never the odd ones."""

    def __init__(self, new_queue) -> None:
        self.new_queue = new_queue
        self.received: list[str] = []
        self.deleted: set[str] = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors: list[BaseException] = []

    def consume(self) -> None:
        try:
            self._consume()
        except BaseException as exc:  # noqa: BLE001  (the test fails on it)
            self.errors.append(exc)

    def _consume(self) -> None:
        q = self.new_queue()
        q.set_encoding(False)
        while not self.stop.is_set():
            for got in receive_all(q, 1, 4):
                with self.lock:
                    self.received.append(got.message_body)
                if int(got.message_body[1:]) % 2 == 0 and self.delete(q, got.receipt_handle):
                    with self.lock:
                        self.deleted.add(got.message_body)

    @staticmethod
    def delete(q, handle: str) -> bool:
        try:
            q.delete_message(handle)
        except MNSServerException:  # too late (a loaded machine): it will be dead-lettered
            return False
        return True


def test_eight_consumers_with_max_receive_count_1_lose_and_duplicate_nothing(raw_a, make_queue, new_account_a):
    dlq = make_queue()
    source = make_queue(f"<VisibilityTimeout>5</VisibilityTimeout>{dlq_xml(dlq.queue_name, 1)}")
    total = 48
    for start in range(0, total, 16):
        source.batch_send_message([Message(f"m{n}") for n in range(start, start + 16)])
    consumers = FailingOddConsumers(lambda: new_account_a().get_queue(source.queue_name))
    received, deleted, stop = consumers.received, consumers.deleted, consumers.stop
    consume = consumers.consume

    threads = [threading.Thread(target=consume) for _ in range(8)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    letters: list = []
    while time.monotonic() < deadline and len(letters) + len(deleted) < total:
        letters += take(dlq)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    letters += take(dlq, 0)
    assert consumers.errors == []
    everything = sorted(f"m{n}" for n in range(total))
    assert sorted(received) == everything  # each received exactly once: none lost, none twice
    dead = sorted(m.message_body for m in letters)
    assert len(dead) == len(set(dead))  # dead-lettered at most once
    assert sorted(dead + sorted(deleted)) == everything  # each either deleted or dead-lettered, never both
    assert {f"m{n}" for n in range(1, total, 2)} <= set(dead)
    attrs = source.get_attributes()
    assert (attrs.active_messages, attrs.inactive_messages) == (0, 0)


# --- redrive --------------------------------------------------------------------------------------


def redrive(raw_a, name: str):
    return raw_a.request("PUT", f"/queues/{name}?redrive=true")


def test_redrive_moves_dead_letters_back_to_their_source(raw_a, make_queue, server_clock):
    dlq = make_queue()
    source = make_queue(f"<VisibilityTimeout>1</VisibilityTimeout>{dlq_xml(dlq.queue_name, 1)}")
    for n in range(3):
        msg = Message(f"r{n}")
        msg.add_user_property("n", MessagePropertyValue(PropertyType.NUMBER, n))
        source.send_message(msg)
    assert len(source.batch_receive_message(16, 1)) == 3
    server_clock.advance(1.1)
    assert receive_all(source, 0) == []  # all three moved on this receive
    assert dlq.get_attributes().active_messages == 3
    resp = redrive(raw_a, dlq.queue_name)
    assert resp.status == 200, resp.body
    root = resp.xml()
    assert root.tag == NS + "RedriveResult"
    assert root.find(NS + "MovedMessages").text == "3"
    assert dlq.get_attributes().active_messages == 0
    back = source.batch_receive_message(16, 1)
    assert sorted(m.message_body for m in back) == ["r0", "r1", "r2"]
    assert all(m.dequeue_count == 1 for m in back)  # a fresh start against MaxReceiveCount
    assert all("DLQSourceArn" not in m.get_system_properties() for m in back)
    assert sorted(m.get_user_properties()["n"].string_value for m in back) == ["0", "1", "2"]
    assert redrive(raw_a, dlq.queue_name).xml().find(NS + "MovedMessages").text == "0"


def test_redrive_leaves_messages_it_cannot_send_back(raw_a, make_queue):
    dlq = make_queue()
    dlq.send_message(Message("not a dead letter"))
    resp = redrive(raw_a, dlq.queue_name)
    assert resp.xml().find(NS + "MovedMessages").text == "0"
    assert dlq.get_attributes().active_messages == 1
    assert_mns_error(redrive(raw_a, new_name()), 404, "QueueNotExist")


# --- rewind ---------------------------------------------------------------------------------------


def rewind(raw_a, name: str, at: object):
    return raw_a.request("PUT", f"/queues/{name}?rewindtime={at}")


def drain(q) -> list[str]:
    bodies = []
    while batch := receive_all(q, 0):
        for got in batch:
            bodies.append(got.message_body)
            q.delete_message(got.receipt_handle)
    return bodies


def test_rewind_after_deletes_replays_exactly_the_messages_enqueued_since_t(raw_a, make_queue, server_clock):
    q = make_queue("<RewindPeriod>600</RewindPeriod>")
    assert attributes(raw_a, q.queue_name).find(NS + "RewindPeriod").text == "600"
    for n in range(3):
        q.send_message(Message(f"before{n}"))
    t = math.ceil(server_clock.now()) + 1
    server_clock.advance(t - server_clock.now() + 0.05)  # the server's next second but one
    for n in range(4):
        q.send_message(Message(f"after{n}"))
    assert len(drain(q)) == 7
    attrs = q.get_attributes()
    assert (attrs.active_messages, attrs.inactive_messages, attrs.delay_messages) == (0, 0, 0)  # kept: uncounted
    resp = rewind(raw_a, q.queue_name, t)
    assert resp.status == 204, resp.body
    assert q.get_attributes().active_messages == 4
    assert sorted(drain(q)) == ["after0", "after1", "after2", "after3"]
    # A second rewind replays them again (they were deleted with rewind on once more).
    assert rewind(raw_a, q.queue_name, t).status == 204
    assert sorted(drain(q)) == ["after0", "after1", "after2", "after3"]


def test_turning_rewind_off_drops_what_was_kept(raw_a, make_queue, server_clock):
    q = make_queue("<RewindPeriod>600</RewindPeriod>")
    t = int(server_clock.now())
    q.send_message(Message("one"))
    assert drain(q) == ["one"]
    off = raw_a.request("PUT", f"/queues/{q.queue_name}?metaoverride=true", queue_xml("<RewindPeriod>0</RewindPeriod>"))
    assert off.status == 204, off.body
    assert attributes(raw_a, q.queue_name).find(NS + "RewindPeriod") is None
    assert_mns_error(rewind(raw_a, q.queue_name, t), 400, "InvalidArgument")  # rewind is off
    on = raw_a.request(
        "PUT", f"/queues/{q.queue_name}?metaoverride=true", queue_xml("<RewindPeriod>600</RewindPeriod>")
    )
    assert on.status == 204
    assert rewind(raw_a, q.queue_name, t).status == 204
    assert receive_all(q, 0) == []  # what was kept before went with the switch-off


def test_rewind_errors(raw_a, make_queue, server_clock):
    q = make_queue("<MessageRetentionPeriod>600</MessageRetentionPeriod><RewindPeriod>120</RewindPeriod>")
    now = int(server_clock.now())
    assert rewind(raw_a, q.queue_name, now - 100).status == 204
    assert_mns_error(rewind(raw_a, q.queue_name, now + 30), 400, "InvalidArgument")  # in the future
    assert_mns_error(rewind(raw_a, q.queue_name, now - 300), 400, "InvalidArgument")  # before now - RewindPeriod
    assert_mns_error(rewind(raw_a, q.queue_name, "yesterday"), 400, "InvalidArgument")
    assert_mns_error(rewind(raw_a, new_name(), now), 404, "QueueNotExist")
    too_long = queue_xml("<RewindPeriod>601</RewindPeriod>")  # longer than MessageRetentionPeriod
    assert_mns_error(
        raw_a.request("PUT", f"/queues/{q.queue_name}?metaoverride=true", too_long), 400, "InvalidArgument"
    )
    shorter = queue_xml("<MessageRetentionPeriod>100</MessageRetentionPeriod>")  # below RewindPeriod
    assert_mns_error(raw_a.request("PUT", f"/queues/{q.queue_name}?metaoverride=true", shorter), 400, "InvalidArgument")
    below = queue_xml("<MessageRetentionPeriod>60</MessageRetentionPeriod><RewindPeriod>61</RewindPeriod>")
    assert_mns_error(raw_a.request("PUT", f"/queues/{new_name()}", below), 400, "InvalidArgument")
    assert attributes(raw_a, q.queue_name).find(NS + "RewindPeriod").text == "120"
