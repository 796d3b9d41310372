"""A FIFO message given back through the official SDK: received (VisibilityTimeout 30 s), then ChangeMessageVisibility
to 1 s or 0 (as SQS FIFO consumers "nack"): its group is released at the new time, the same head first, on every
engine (`MNS_ENGINE=moto` is the DynamoDB engine, as on AWS, where the group once stayed held for the 30 s)."""

from __future__ import annotations

import time

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import Message

from tests.support.fifo_queues import create_fifo

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _received_head(account, raw, name: str):
    create_fifo(raw, name)  # VisibilityTimeout 30 s (the default)
    queue = account.get_queue(name)
    queue.set_encoding(False)
    queue.batch_send_message([Message(f"m{n}", message_group_id="G") for n in range(3)])
    head = queue.receive_message()
    assert (head.message_body, head.dequeue_count) == ("m0", 1)
    with pytest.raises(MNSServerException) as held:
        queue.receive_message()
    assert held.value.type == "MessageNotExist"
    return queue, head


def test_a_head_given_back_for_a_second_comes_back_first_after_it(account_a, raw_a, qname):
    queue, head = _received_head(account_a, raw_a, qname)
    changed = queue.change_message_visibility(head.receipt_handle, 1)
    assert changed.receipt_handle != head.receipt_handle
    with pytest.raises(MNSServerException) as held:
        queue.receive_message()
    assert held.value.type == "MessageNotExist"
    started = time.monotonic()
    again = queue.receive_message(wait_seconds=5)  # a long poll: back after the second, not the 30 s
    assert time.monotonic() - started < 4
    assert (again.message_id, again.message_body, again.dequeue_count) == (head.message_id, "m0", 2)


def test_a_head_given_back_at_once_comes_back_first_at_once(account_a, raw_a, qname):
    queue, head = _received_head(account_a, raw_a, qname)
    queue.change_message_visibility(head.receipt_handle, 0)
    run = queue.batch_receive_message(16)
    assert [(m.message_body, m.dequeue_count) for m in run] == [("m0", 2), ("m1", 1), ("m2", 1)]
    assert run[0].message_id == head.message_id
