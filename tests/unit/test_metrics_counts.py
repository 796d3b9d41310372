"""What the services count (`mnsd.metrics`): each event once, where it happens, for the queue (or receiver, or topic
and subscription) it belongs to. Services over the embedded engine in memory, a clock moved by hand."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.metrics import (
    EMPTY_RECEIVES,
    MESSAGES_DEAD_LETTERED,
    MESSAGES_DELETED,
    MESSAGES_PUBLISHED,
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    PUSHES_DEAD_LETTERED,
    PUSHES_DELIVERED,
    PUSHES_DROPPED,
    PUSHES_FAILED,
    QPS_LIMIT_EXCEEDED,
    SENT_MESSAGE_SIZE,
    Labels,
    Metric,
    queue_labels,
    topic_labels,
)
from mnsd.metrics.process import ProcessMetrics
from mnsd.model.inputs import MessageInput, PublishInput
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges, RateLimitInput
from mnsd.model.topics import Subscription, SubscriptionInput, TopicMessage
from mnsd.push.dead_letters import DeadLetters
from mnsd.push.delivery import Deliverer, Outcome, QueueEndpoints
from mnsd.push.first_attempt import FirstAttempt
from mnsd.push.records import PushCounters, PushRecords
from mnsd.push.retry_worker import RetryWorker
from mnsd.push.workflow import delivery_reference
from mnsd.queues.receivers import ReceiverInput
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"


@pytest.fixture
def counts() -> ProcessMetrics:
    return ProcessMetrics()


@pytest.fixture
def services(counts) -> Iterator[Services]:
    storage = sqlite_storage(":memory:")
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET")
    yield build_services(settings, storage=storage, clock=ManualClock(), metrics=counts)
    storage.database.close()


def counted(counts: ProcessMetrics, metric: Metric, labels: Labels) -> float:
    return counts.counts().get((metric, labels), 0)


def queue(name: str) -> Labels:
    return queue_labels(ACCOUNT, name)


def send(services: Services, name: str, *bodies: str, delay: int | None = None) -> None:
    services.messages.send(services.addresses.resolve(ACCOUNT, name), [MessageInput(body, delay, 8) for body in bodies])


def test_sends_count_each_message_and_its_size_single_and_batched(services, counts):
    services.queues.create_queue(ACCOUNT, "orders")
    send(services, "orders", "hello")
    send(services, "orders", "ab", "écu", "")  # a batch; sizes in UTF-8 bytes
    assert counted(counts, MESSAGES_SENT, queue("orders")) == 4
    assert counted(counts, SENT_MESSAGE_SIZE, queue("orders")) == 5 + 2 + 4 + 0


def test_a_send_reaches_each_receiver_and_is_counted_at_its_address(services, counts):
    services.queues.create_queue(ACCOUNT, "orders")
    services.receivers.create(ACCOUNT, "orders", "audit", ReceiverInput())
    send(services, "orders", "abc", "de")
    for address in ("orders", "orders.audit"):
        assert counted(counts, MESSAGES_SENT, queue(address)) == 2
        assert counted(counts, SENT_MESSAGE_SIZE, queue(address)) == 5


def test_receives_count_messages_and_a_receive_without_one_counts_once(services, counts):
    services.queues.create_queue(ACCOUNT, "orders")
    send(services, "orders", "a", "b", "c")
    assert len(services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 2, 0)) == 2
    assert len(services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 16, 0)) == 1
    with pytest.raises(errors.MessageNotExist):
        services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 16, 0)
    with pytest.raises(errors.MessageNotExist):
        services.messages.receive(
            services.addresses.resolve(ACCOUNT, "orders"), 1, 3
        )  # a long poll that waits (on the clock) and ends empty
    assert counted(counts, MESSAGES_RECEIVED, queue("orders")) == 3
    assert counted(counts, EMPTY_RECEIVES, queue("orders")) == 2


def test_deletes_count_the_messages_deleted_not_the_handles_refused(services, counts):
    services.queues.create_queue(ACCOUNT, "orders")
    send(services, "orders", "a", "b", "c")
    first, second, third = services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 3, 0)
    services.messages.delete(services.addresses.resolve(ACCOUNT, "orders"), first.receipt_handle)
    with pytest.raises(errors.MessageNotExist):
        services.messages.delete(services.addresses.resolve(ACCOUNT, "orders"), first.receipt_handle)  # spent
    failures = services.messages.batch_delete(
        services.addresses.resolve(ACCOUNT, "orders"),
        [second.receipt_handle, third.receipt_handle, first.receipt_handle],
    )
    assert [handle for handle, _ in failures] == [first.receipt_handle]
    assert counted(counts, MESSAGES_DELETED, queue("orders")) == 3


def test_a_delete_with_rewind_on_is_a_delete(services, counts):
    services.queues.create_queue(ACCOUNT, "orders", QueueAttributeChanges(rewind_period="3600"))
    send(services, "orders", "a")
    (received,) = services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 1, 0)
    services.messages.delete(services.addresses.resolve(ACCOUNT, "orders"), received.receipt_handle)
    assert counted(counts, MESSAGES_DELETED, queue("orders")) == 1


def dead_lettering(services: Services, name: str, target: str, fifo: bool = False) -> None:
    kind = "fifo" if fifo else None
    services.queues.create_queue(ACCOUNT, target, QueueAttributeChanges(queue_type=kind))
    policy = DlqPolicyInput("true", target, "1")
    services.queues.create_queue(
        ACCOUNT, name, QueueAttributeChanges(visibility_timeout="1", dlq_policy=policy, queue_type=kind)
    )


def test_a_dead_letter_move_counts_on_the_queue_it_leaves_and_is_no_send(services, counts):
    dead_lettering(services, "orders", "orders-dlq")
    send(services, "orders", "a", "b")
    assert len(services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 2, 0)) == 2
    services.clock.advance(2)  # both visible again, received once: the next receive moves them
    with pytest.raises(errors.MessageNotExist):
        services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 2, 0)
    assert counted(counts, MESSAGES_DEAD_LETTERED, queue("orders")) == 2
    assert counted(counts, MESSAGES_SENT, queue("orders-dlq")) == 0
    assert len(services.messages.receive(services.addresses.resolve(ACCOUNT, "orders-dlq"), 2, 0)) == 2


def test_a_fifo_queue_counts_its_dead_letter_moves(services, counts):
    dead_lettering(services, "orders", "orders-dlq", fifo=True)
    services.messages.send(
        services.addresses.resolve(ACCOUNT, "orders"), [MessageInput("a", None, 8, message_group_id="g")]
    )
    assert len(services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 1, 0)) == 1
    services.clock.advance(2)
    with pytest.raises(errors.MessageNotExist):
        services.messages.receive(services.addresses.resolve(ACCOUNT, "orders"), 1, 0)
    assert counted(counts, MESSAGES_DEAD_LETTERED, queue("orders")) == 1


def test_qps_refusals_count_per_queue_and_per_receiver(services, counts):
    limit = RateLimitInput("true", "1")
    services.queues.create_queue(ACCOUNT, "orders", QueueAttributeChanges(rate_limit=limit))
    services.receivers.create(ACCOUNT, "orders", "audit", ReceiverInput())
    for address, tries in (("orders", 3), ("orders.audit", 2)):
        for _ in range(tries):
            with pytest.raises((errors.MessageNotExist, errors.QpsLimitExceeded)):
                services.messages.receive(services.addresses.resolve(ACCOUNT, address), 1, 0)
    assert counted(counts, QPS_LIMIT_EXCEEDED, queue("orders")) == 2
    assert counted(counts, QPS_LIMIT_EXCEEDED, queue("orders.audit")) == 1
    assert counted(counts, EMPTY_RECEIVES, queue("orders")) == 1  # the one admitted


def test_publishing_counts_per_topic(services, counts):
    services.topics.create_topic(ACCOUNT, "news")
    for _ in range(3):
        services.topics.publish(ACCOUNT, "news", PublishInput(body="hi"))
    assert counted(counts, MESSAGES_PUBLISHED, topic_labels(ACCOUNT, "news")) == 3


# --- push results ------------------------------------------------------------------------------------------


@dataclass
class ScriptedDeliverer:
    outcome: Outcome

    def deliver(self, subscription, message) -> Outcome:
        return self.outcome


class RecordingWorkflow:
    """The retry workflow's port, answering as Step Functions does to a task still awaited."""

    def __init__(self) -> None:
        self.answers: list[str] = []

    def start(self, name: str, execution_input: str) -> bool:
        return True

    def heartbeat(self, token: str) -> bool:
        return True

    def succeed(self, token: str, output: str) -> None:
        self.answers.append("succeed")

    def fail(self, token: str, error: str, cause: str) -> None:
        self.answers.append("fail")


class RefusingDeadLetterQueues:
    def send(self, account_id, queue_name, body, user_properties, system_properties):
        raise errors.QueueNotExist()


ENDPOINT = "http://example.com/notify"
SUBSCRIPTION = topic_labels(ACCOUNT, "news", "sub")


def subscribed(services: Services, endpoint: str = ENDPOINT, dlq: bool = False) -> tuple[Subscription, TopicMessage]:
    """A subscription of the topic `news` (with the dead-letter queue `news-dlq`) and a message published to it."""
    services.topics.create_topic(ACCOUNT, "news")
    policy = None
    if dlq:
        services.queues.create_queue(ACCOUNT, "news-dlq")
        policy = DlqPolicyInput("true", "news-dlq")
    services.topics.subscribe(ACCOUNT, "news", "sub", SubscriptionInput(endpoint=endpoint, dlq_policy=policy))
    message = services.topics.publish(ACCOUNT, "news", PublishInput(body="hi"))
    return services.topics.get_subscription(ACCOUNT, "news", "sub"), message


def dead_letters(services: Services, counts: ProcessMetrics, queues: Any = None) -> DeadLetters:
    records = PushRecords(services.storage.log, services.clock, services.settings.region)
    return DeadLetters(queues or services.dead_letters, records, PushCounters(), services.settings.region, counts)


def first_attempt(services: Services, counts: ProcessMetrics, outcome: Outcome, letters: DeadLetters) -> FirstAttempt:
    records = PushRecords(services.storage.log, services.clock, services.settings.region)
    return FirstAttempt(ScriptedDeliverer(outcome), RecordingWorkflow(), letters, records, PushCounters(), counts)


def test_a_delivered_first_attempt_counts_delivered(services, counts):
    subscription, message = subscribed(services)
    first_attempt(services, counts, Outcome(True, 200), dead_letters(services, counts)).attempt(subscription, message)
    assert counted(counts, PUSHES_DELIVERED, SUBSCRIPTION) == 1
    assert counted(counts, PUSHES_FAILED, SUBSCRIPTION) == 0


def test_a_failed_first_attempt_counts_failed_and_gives_nothing_up(services, counts):
    subscription, message = subscribed(services)
    first_attempt(services, counts, Outcome(False, 503), dead_letters(services, counts)).attempt(subscription, message)
    assert counted(counts, PUSHES_FAILED, SUBSCRIPTION) == 1
    assert counted(counts, PUSHES_DROPPED, SUBSCRIPTION) == 0


def test_a_push_given_up_counts_dead_lettered_or_dropped(services, counts):
    subscription, message = subscribed(services, dlq=True)
    permanent = Outcome(False, permanent=True)
    first_attempt(services, counts, permanent, dead_letters(services, counts)).attempt(subscription, message)
    assert counted(counts, PUSHES_FAILED, SUBSCRIPTION) == 1
    assert counted(counts, PUSHES_DEAD_LETTERED, SUBSCRIPTION) == 1
    assert counted(counts, MESSAGES_SENT, queue("news-dlq")) == 0  # a dead letter is no send
    refusing = dead_letters(services, counts, RefusingDeadLetterQueues())  # the dead-letter queue is gone: a drop
    first_attempt(services, counts, permanent, refusing).attempt(subscription, message)
    assert counted(counts, PUSHES_DROPPED, SUBSCRIPTION) == 1
    assert counted(counts, PUSHES_DEAD_LETTERED, SUBSCRIPTION) == 1


@pytest.mark.parametrize("outcome, answer", [(Outcome(True, 200), "succeed"), (Outcome(False, 500), "fail")])
def test_a_retry_counts_its_result(services, counts, outcome, answer):
    subscription, message = subscribed(services)
    workflow = RecordingWorkflow()
    records = PushRecords(services.storage.log, services.clock, services.settings.region)
    worker = RetryWorker(
        services.topics,
        services.storage.topic_messages,
        ScriptedDeliverer(outcome),  # type: ignore[arg-type]
        workflow,
        dead_letters(services, counts),
        records,
        services.clock,
        counts,
    )
    worker.handle_task({"delivery": delivery_reference(subscription, message), "token": "t", "retry": 1})
    assert workflow.answers == [answer]
    delivered, failed = (1, 0) if outcome.delivered else (0, 1)
    assert counted(counts, PUSHES_DELIVERED, SUBSCRIPTION) == delivered
    assert counted(counts, PUSHES_FAILED, SUBSCRIPTION) == failed


def test_a_push_to_a_queue_endpoint_is_a_send_to_that_queue(services, counts):
    services.queues.create_queue(ACCOUNT, "inbox")
    subscription, message = subscribed(services, f"acs:mns:cn-hangzhou:{ACCOUNT}:queues/inbox")
    assert (
        Deliverer(services.settings, QueueEndpoints(services.addresses, services.messages), lambda name: None)
        .deliver(subscription, message)
        .delivered
    )
    assert counted(counts, MESSAGES_SENT, queue("inbox")) == 1
    assert counted(counts, SENT_MESSAGE_SIZE, queue("inbox")) > 0
