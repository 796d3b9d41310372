import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.wire.codec import parse
from mnsd.wire.requests import queue_attribute_changes

ACCOUNT = "1000000000000001"


def queue_xml(**attrs):
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in attrs.items())
    return queue_attribute_changes(parse(f'<Queue xmlns="http://mns.aliyuncs.com/doc/v1">{inner}</Queue>'.encode()))


def test_create_get_set_delete(service, clock):
    assert service.create_queue(ACCOUNT, "q1", queue_xml(VisibilityTimeout=60, DelaySeconds=5)) is True
    queue = service.get_queue(ACCOUNT, "q1")
    assert queue.attributes.visibility_timeout == 60
    assert queue.attributes.delay_seconds == 5
    assert queue.attributes.maximum_message_size == 65536
    assert queue.create_time == queue.last_modify_time == int(clock.now())
    clock.advance(10)
    service.set_queue_attributes(ACCOUNT, "q1", queue_xml(PollingWaitSeconds=7, LoggingEnabled="True"))
    queue = service.get_queue(ACCOUNT, "q1")
    assert queue.attributes.polling_wait_seconds == 7
    assert queue.attributes.logging_enabled is True
    assert queue.attributes.visibility_timeout == 60
    assert queue.last_modify_time == queue.create_time + 10
    service.delete_queue(ACCOUNT, "q1")
    with pytest.raises(errors.QueueNotExist):
        service.get_queue(ACCOUNT, "q1")
    with pytest.raises(errors.QueueNotExist):
        service.set_queue_attributes(ACCOUNT, "q1", queue_xml(DelaySeconds=1))
    service.delete_queue(ACCOUNT, "q1")  # deleting a missing queue is fine


def test_create_invalid(service):
    with pytest.raises(errors.InvalidQueueName):
        service.create_queue(ACCOUNT, "bad_name", None)
    with pytest.raises(errors.InvalidArgument):
        service.create_queue(ACCOUNT, "q", queue_xml(VisibilityTimeout=0))
    with pytest.raises(errors.InvalidArgument):
        service.create_queue(ACCOUNT, "q", queue_xml(LoggingEnabled="maybe"))


def test_idempotent_create(service):
    assert service.create_queue(ACCOUNT, "q", queue_xml(DelaySeconds=3)) is True
    assert service.create_queue(ACCOUNT, "q", queue_xml(DelaySeconds=3)) is False
    with pytest.raises(errors.QueueAlreadyExist):
        service.create_queue(ACCOUNT, "q", queue_xml(DelaySeconds=4))
    with pytest.raises(errors.QueueAlreadyExist):
        service.create_queue(ACCOUNT, "q", None)


def test_accounts_are_isolated(service):
    service.create_queue(ACCOUNT, "q", None)
    with pytest.raises(errors.QueueNotExist):
        service.get_queue("other", "q")
    assert service.list_queues("other", "", 10, None) == ([], None)


def test_list_prefix_and_paging(service):
    names = ["alpha-1", "alpha-2", "alpha-3", "alpha-4", "alpha-5", "beta-1", "gamma"]
    for name in names:
        service.create_queue(ACCOUNT, name, None)
    queues, marker = service.list_queues(ACCOUNT, "", 100, None)
    assert [q.name for q in queues] == names
    assert marker is None
    queues, marker = service.list_queues(ACCOUNT, "alpha", 2, None)
    assert [q.name for q in queues] == ["alpha-1", "alpha-2"]
    assert marker
    queues, marker = service.list_queues(ACCOUNT, "alpha", 2, marker)
    assert [q.name for q in queues] == ["alpha-3", "alpha-4"]
    queues, marker = service.list_queues(ACCOUNT, "alpha", 2, marker)
    assert [q.name for q in queues] == ["alpha-5"]
    assert marker is None
    queues, marker = service.list_queues(ACCOUNT, "beta", 1, None)
    assert [q.name for q in queues] == ["beta-1"] and marker is None
    assert service.list_queues(ACCOUNT, "zzz", 10, None) == ([], None)
    with pytest.raises(errors.InvalidArgument):
        service.list_queues(ACCOUNT, "", 10, "!!!not-base64")


def test_queue_limit(make):
    service = make(max_queues=2)
    service.create_queue(ACCOUNT, "a", None)
    service.create_queue(ACCOUNT, "b", None)
    with pytest.raises(errors.QueueNumExceededLimit):
        service.create_queue(ACCOUNT, "c", None)
    assert service.create_queue(ACCOUNT, "a", None) is False  # idempotent create still answers
    service.create_queue("other", "c", None)  # the limit is per account
    service.delete_queue(ACCOUNT, "a")
    assert service.create_queue(ACCOUNT, "c", None) is True


def test_recreate_does_not_see_old_messages(service):
    service.create_queue(ACCOUNT, "q", None)
    service.send(ACCOUNT, "q", [MessageInput("old", None, 8)])
    service.delete_queue(ACCOUNT, "q")
    service.create_queue(ACCOUNT, "q", None)
    assert service.queue_counts(service.get_queue(ACCOUNT, "q")).active == 0
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 1, 0)
    with pytest.raises(errors.MessageNotExist):
        service.peek(ACCOUNT, "q", 1)
