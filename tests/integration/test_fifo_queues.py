"""FIFO queues through the queue service, on both engines, with an injected clock: creation, sends, receives
of runs, visibility, dead letters from a run's head, redrive and rewind in order."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges
from mnsd.services import build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.integration.services import ACCOUNT, make_service
from tests.support.by_name import QueuesByName

FIFO = QueueAttributeChanges(queue_type="fifo", visibility_timeout="10")


@pytest.fixture(params=["sqlite", "dynamodb"])
def service(request, clock, tmp_path):
    """The queue service over each engine (DynamoDB: moto)."""
    if request.param == "dynamodb":
        return make_service(request.getfixturevalue("dynamodb"), clock)
    settings = Settings(poll_interval_ms=200, credentials=f"{ACCOUNT}:KEYID:SECRET")
    return QueuesByName(build_services(settings, clock=clock, storage=sqlite_storage(tmp_path / "data")))


def sent(group: str, body: str) -> MessageInput:
    return MessageInput(body, None, 8, message_group_id=group)


def bodies(service, name: str, count: int = 16) -> list[str]:
    try:
        return [r.message.body or "" for r in service.receive(ACCOUNT, name, count, 0)]
    except errors.MessageNotExist:
        return []


def test_queue_type_is_chosen_at_creation_and_kept(service):
    service.create_queue(ACCOUNT, "ordered", FIFO)
    service.create_queue(ACCOUNT, "plain")
    assert service.get_queue(ACCOUNT, "ordered").attributes.queue_type == "fifo"
    assert service.get_queue(ACCOUNT, "plain").attributes.queue_type == "normal"
    service.set_queue_attributes(ACCOUNT, "ordered", QueueAttributeChanges(queue_type="FIFO", delay_seconds="1"))
    with pytest.raises(errors.InvalidArgument):
        service.set_queue_attributes(ACCOUNT, "ordered", QueueAttributeChanges(queue_type="normal"))
    with pytest.raises(errors.InvalidArgument):
        service.create_queue(ACCOUNT, "odd", QueueAttributeChanges(queue_type="lifo"))
    # Re-creating it as the other type is a different queue: refused as any differing re-creation.
    with pytest.raises(errors.QueueAlreadyExist):
        service.create_queue(ACCOUNT, "ordered")


def test_receives_keep_each_group_in_send_order(service, clock):
    service.create_queue(ACCOUNT, "ordered", FIFO)
    service.send(ACCOUNT, "ordered", [sent("a", "a0"), sent("b", "b0"), sent("a", "a1"), sent("a", "a2")])
    got = bodies(service, "ordered")  # one batch: both groups' runs, each in order
    assert sorted(got) == ["a0", "a1", "a2", "b0"]
    assert [b for b in got if b.startswith("a")] == ["a0", "a1", "a2"]
    assert bodies(service, "ordered") == []  # both groups in flight
    clock.advance(11)  # every run lapses: each group comes back from its head
    again = bodies(service, "ordered")
    assert [b for b in again if b.startswith("a")] == ["a0", "a1", "a2"]


def test_a_delete_frees_the_group_for_the_next_receive(service):
    service.create_queue(ACCOUNT, "ordered", FIFO)
    service.send(ACCOUNT, "ordered", [sent("a", f"a{n}") for n in range(3)])
    (head,) = service.receive(ACCOUNT, "ordered", 1, 0)
    assert bodies(service, "ordered") == []
    service.delete(ACCOUNT, "ordered", head.receipt_handle)
    assert bodies(service, "ordered", 1) == ["a1"]


def test_a_dead_lettered_head_frees_its_group_in_order(service, clock):
    dead = QueueAttributeChanges(queue_type="fifo")
    service.create_queue(ACCOUNT, "dead", dead)
    policy = DlqPolicyInput("True", "dead", "2")
    service.create_queue(
        ACCOUNT, "ordered", QueueAttributeChanges(queue_type="fifo", visibility_timeout="10", dlq_policy=policy)
    )
    service.send(ACCOUNT, "ordered", [sent("a", "a0"), sent("a", "a1")])
    for _ in range(2):
        assert bodies(service, "ordered", 1) == ["a0"]
        clock.advance(11)
    # The third receive would exceed MaxReceiveCount: a0 moves, in its group, and the receive gets a1 instead.
    assert bodies(service, "ordered", 1) == ["a1"]
    (dead_letter,) = service.receive(ACCOUNT, "dead", 1, 0)
    assert (dead_letter.message.body, dead_letter.message.message_group_id) == ("a0", "a")
    clock.advance(31)  # the dead-letter queue's visibility timeout (30 s) lapses
    assert service.redrive(ACCOUNT, "dead") == 1
    clock.advance(11)
    assert bodies(service, "ordered") == ["a1", "a0"]  # back in its group, after what was there


def test_a_dead_letter_queue_has_the_queues_type(service):
    service.create_queue(ACCOUNT, "plain-dead")
    policy = DlqPolicyInput("True", "plain-dead", "2")
    with pytest.raises(errors.InvalidArgument):
        service.create_queue(ACCOUNT, "ordered", QueueAttributeChanges(queue_type="fifo", dlq_policy=policy))


def test_sends_a_fifo_queue_refuses(service):
    service.create_queue(ACCOUNT, "ordered", FIFO)
    for given in [
        MessageInput("x", None, 8),
        MessageInput("x", 5, 8, message_group_id="a"),
        MessageInput("x", None, 3, message_group_id="a", priority_given=True),
        MessageInput("x", None, 8, message_group_id="a|b"),
        MessageInput("x", None, 8, message_group_id="g" * 129),
    ]:
        with pytest.raises(errors.InvalidArgument):
            service.send(ACCOUNT, "ordered", [given])
    assert bodies(service, "ordered") == []


def test_rewind_replays_a_group_in_order(service, clock):
    service.create_queue(ACCOUNT, "ordered", QueueAttributeChanges(queue_type="fifo", rewind_period="600"))
    start = int(clock.now())
    service.send(ACCOUNT, "ordered", [sent("a", f"a{n}") for n in range(3)])
    for received in service.receive(ACCOUNT, "ordered", 2, 0):
        service.delete(ACCOUNT, "ordered", received.receipt_handle)
    clock.advance(1)
    assert service.rewind(ACCOUNT, "ordered", str(start)) == 2
    assert bodies(service, "ordered") == ["a0", "a1", "a2"]


def test_held_groups_count(service):
    service.create_queue(ACCOUNT, "ordered", FIFO)
    service.send(ACCOUNT, "ordered", [sent(g, g) for g in "abc"])
    service.receive(ACCOUNT, "ordered", 2, 0)
    queue = service.get_queue(ACCOUNT, "ordered")
    assert service.held_groups(queue) == 2
