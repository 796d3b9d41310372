"""FIFO queues through the official SDK: created with `<QueueType>fifo</QueueType>` (the SDK's QueueMeta has no such
field: the creation is a signed raw request), then used by the unchanged SDK; a standard queue unchanged."""

from __future__ import annotations

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import Message

from tests.e2e.resources import text_queue
from tests.support.fifo_queues import FIFO_QUEUE, create_fifo

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def grouped(body: str, group: str) -> Message:
    message = Message(body)
    message.message_group_id = group
    return message


def test_message_group_id_round_trip_and_order(account_a, raw_a, qname):
    create_fifo(raw_a, qname)
    queue = account_a.get_queue(qname)
    queue.set_encoding(False)
    assert queue.get_attributes().queue_name == qname  # the SDK's decoder reads the answer (QueueType included)
    attributes = raw_a.request("GET", f"/queues/{qname}")
    assert b"<QueueType>fifo</QueueType>" in attributes.body
    queue.send_message(grouped("g1-0", "G1"))
    sent = queue.batch_send_message([grouped("g2-0", "G2"), grouped("g1-1", "G1"), grouped("g1-2", "G1")])
    assert [m.message_group_id for m in sent] == ["G2", "G1", "G1"]  # SDK 1.3.0 reads a batch's groups back
    # G1's head in flight: a receive gets G2's head, never g1-1.
    first = queue.receive_message()
    second = queue.receive_message()
    assert {(first.message_body, first.message_group_id), (second.message_body, second.message_group_id)} == {
        ("g1-0", "G1"),
        ("g2-0", "G2"),
    }
    with pytest.raises(MNSServerException) as held:
        queue.receive_message()
    assert held.value.type == "MessageNotExist"
    g1_head = first if first.message_group_id == "G1" else second
    queue.delete_message(g1_head.receipt_handle)
    rest = queue.batch_receive_message(16)
    assert [(m.message_body, m.message_group_id) for m in rest] == [("g1-1", "G1"), ("g1-2", "G1")]
    assert b"<MessageGroupsInFlight>2</MessageGroupsInFlight>" in raw_a.request("GET", f"/queues/{qname}").body


def test_a_fifo_queue_refuses_what_would_break_order(account_a, raw_a, qname):
    create_fifo(raw_a, qname)
    queue = account_a.get_queue(qname)
    for message, reason in [
        (Message("no group"), "MessageGroupId"),
        (Message("delayed", delay_seconds=5, message_group_id="G"), "DelaySeconds"),
        (Message("urgent", priority=1, message_group_id="G"), "Priority"),
    ]:
        with pytest.raises(MNSServerException) as refused:
            queue.send_message(message)
        assert refused.value.type == "InvalidArgument"
        assert reason in refused.value.message
    change = FIFO_QUEUE.format("<QueueType>normal</QueueType>")
    answer = raw_a.request("PUT", f"/queues/{qname}?metaoverride=true", change)
    assert answer.status == 400 and b"<Code>InvalidArgument</Code>" in answer.body


def test_a_standard_queue_is_unchanged(account_a, raw_a, qname):
    queue = text_queue(account_a, qname)
    queue.set_encoding(False)
    queue.batch_send_message([grouped(f"m{n}", "G1") for n in range(3)])
    received = queue.batch_receive_message(16)
    # All three at once (no group holds the others back), the group id handed back as sent.
    assert sorted(m.message_body for m in received) == ["m0", "m1", "m2"]
    assert {m.message_group_id for m in received} == {"G1"}
    assert b"<QueueType>normal</QueueType>" in raw_a.request("GET", f"/queues/{qname}").body
