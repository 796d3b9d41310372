"""Dead letters and rewind on the DynamoDB engine (moto), through the queue service with an injected clock."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.model.messages import Property
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges
from tests.integration.services import ACCOUNT


def dlq(target: str, count: int | str) -> QueueAttributeChanges:
    return QueueAttributeChanges(visibility_timeout="10", dlq_policy=DlqPolicyInput("True", target, str(count)))


def lease_items(dynamodb, service, name: str) -> list[dict]:
    queue = service.get_queue(ACCOUNT, name)
    return dynamodb.query(
        TableName=service.settings.message_table,
        KeyConditionExpression="pk = :q AND begins_with(sk, :l)",
        ExpressionAttributeValues={":q": {"S": queue.queue_id}, ":l": {"S": "L"}},
    )["Items"]


def receive_ids(service, name: str, count: int = 16) -> list[str]:
    try:
        return [r.message.message_id for r in service.receive(ACCOUNT, name, count, 0)]
    except errors.MessageNotExist:
        return []


def test_a_message_moves_on_the_receive_that_would_exceed_max_receive_count(service, clock):
    service.create_queue(ACCOUNT, "dead")
    service.create_queue(ACCOUNT, "work", dlq("dead", 2))
    big = "x" * 2000  # stored out of line: the move loads it first
    given = MessageInput(big, None, 3, (Property("k", "v", "STRING"),))
    (sent,) = service.send(ACCOUNT, "work", [given])
    for _ in range(2):
        assert receive_ids(service, "work") == [sent.message.message_id]
        clock.advance(11)
    assert receive_ids(service, "work") == []
    (letter,) = service.receive(ACCOUNT, "dead", 1, 0)
    message = letter.message
    assert message.body == big and message.priority == 3
    assert message.user_properties == (Property("k", "v", "STRING"),)
    assert message.expires_at == sent.message.expires_at  # retention not reset
    system = {p.name: p.value for p in message.system_properties}
    assert system == {
        "DLQMessageType": "QUEUE",
        "DLQSourceArn": f"acs:mns:cn-hangzhou:{ACCOUNT}:queues/work",
        "DLQOriginMessageId": sent.message.message_id,
    }
    assert lease_items_count(service, "work") == 0


def lease_items_count(service, name: str) -> int:
    counts = service.queue_counts(service.get_queue(ACCOUNT, name))
    return counts.active + counts.inactive + counts.delayed


def test_a_deleted_target_leaves_messages_receivable(service, clock):
    service.create_queue(ACCOUNT, "dead")
    service.create_queue(ACCOUNT, "work", dlq("dead", 1))
    service.send(ACCOUNT, "work", [MessageInput("m", None, 8)])
    assert len(receive_ids(service, "work")) == 1
    service.delete_queue(ACCOUNT, "dead")
    clock.advance(11)
    assert len(receive_ids(service, "work")) == 1  # nowhere to move it: received as before


def test_policy_checks(service):
    service.create_queue(ACCOUNT, "work")
    with pytest.raises(errors.InvalidArgument):
        service.set_queue_attributes(ACCOUNT, "work", dlq("work", 3))
    with pytest.raises(errors.QueueNotExist):
        service.set_queue_attributes(ACCOUNT, "work", dlq("missing", 3))
    service.create_queue(ACCOUNT, "dead")
    for count in (0, 1001, "x"):
        with pytest.raises(errors.InvalidArgument):
            service.set_queue_attributes(ACCOUNT, "work", dlq("dead", count))
    service.set_queue_attributes(ACCOUNT, "work", dlq("dead", 1000))
    assert service.get_queue(ACCOUNT, "work").attributes.dlq_policy.max_receive_count == 1000


def test_dead_letter_send_stores_a_message_with_system_properties(service):
    service.create_queue(ACCOUNT, "dead")
    system = (Property("DLQMessageType", "TOPIC", "STRING"),)
    stored = service.services.dead_letters.send(ACCOUNT, "dead", "notification", (), system)
    (got,) = service.receive(ACCOUNT, "dead", 1, 0)
    assert got.message.message_id == stored.message_id
    assert (got.message.body, got.message.system_properties) == ("notification", system)
    with pytest.raises(errors.QueueNotExist):
        service.services.dead_letters.send(ACCOUNT, "missing", "x", (), system)


def test_redrive_sends_dead_letters_back(service, clock):
    service.create_queue(ACCOUNT, "dead")
    service.create_queue(ACCOUNT, "work", dlq("dead", 1))
    service.send(ACCOUNT, "work", [MessageInput(f"m{n}", None, 8) for n in range(5)])
    assert len(receive_ids(service, "work")) == 5
    clock.advance(11)
    assert receive_ids(service, "work") == []
    service.send(ACCOUNT, "dead", [MessageInput("stranger", None, 8)])  # not a dead letter: stays
    own = (Property("DLQSourceArn", f"acs:mns:cn-hangzhou:{ACCOUNT}:queues/dead", "STRING"),)
    service.services.dead_letters.send(ACCOUNT, "dead", "from itself", (), own)  # stays: no move into its own queue
    assert service.redrive(ACCOUNT, "dead") == 5
    back = service.receive(ACCOUNT, "work", 16, 0)
    assert sorted(r.message.body for r in back) == [f"m{n}" for n in range(5)]
    assert all(r.message.system_properties == () for r in back)
    assert len(receive_ids(service, "dead")) == 2


def rewinding(service, name: str = "work", period: int = 600) -> None:
    service.create_queue(ACCOUNT, name, QueueAttributeChanges(rewind_period=str(period)))


def test_a_delete_with_rewind_on_keeps_the_lease_in_place_without_v(service, dynamodb):
    rewinding(service)
    service.send(ACCOUNT, "work", [MessageInput("m", None, 8)])
    (got,) = service.receive(ACCOUNT, "work", 1, 0)
    before = lease_items(dynamodb, service, "work")[0]["sk"]
    service.delete(ACCOUNT, "work", got.receipt_handle)
    (item,) = lease_items(dynamodb, service, "work")
    assert item["sk"] == before  # re-marked in place
    assert "v" not in item and item["k"] == {"BOOL": True}
    assert lease_items_count(service, "work") == 0
    assert receive_ids(service, "work") == []


def test_rewind_replays_the_messages_enqueued_since_t(service, clock):
    rewinding(service)
    service.send(ACCOUNT, "work", [MessageInput("early", None, 8)])
    clock.advance(10)
    t = int(clock.now())
    service.send(ACCOUNT, "work", [MessageInput(f"late{n}", None, 8) for n in range(3)])
    for got in service.receive(ACCOUNT, "work", 16, 0):
        service.delete(ACCOUNT, "work", got.receipt_handle)
    clock.advance(5)
    assert service.rewind(ACCOUNT, "work", str(t)) == 3
    assert sorted(r.message.body for r in service.receive(ACCOUNT, "work", 16, 0)) == ["late0", "late1", "late2"]


def test_rewind_time_window_and_switch_off(service, clock, dynamodb):
    rewinding(service, period=60)
    now = int(clock.now())
    for bad in (str(now + 1), str(now - 61), "soon", ""):
        with pytest.raises(errors.InvalidArgument):
            service.rewind(ACCOUNT, "work", bad)
    with pytest.raises(errors.QueueNotExist):
        service.rewind(ACCOUNT, "missing", str(now))
    service.send(ACCOUNT, "work", [MessageInput("m", None, 8)])
    (got,) = service.receive(ACCOUNT, "work", 1, 0)
    service.delete(ACCOUNT, "work", got.receipt_handle)
    assert len(lease_items(dynamodb, service, "work")) == 1
    service.set_queue_attributes(ACCOUNT, "work", QueueAttributeChanges(rewind_period="0"))
    assert lease_items(dynamodb, service, "work") == []  # what was kept is dropped
    with pytest.raises(errors.InvalidArgument):
        service.rewind(ACCOUNT, "work", str(now))
