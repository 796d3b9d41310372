"""Which queues and topics are monitored: `MetricsEnabled` (True, False, unset) against the stack's default, decided
from the records the services hold. The EMF sink (AWS) prints lines only for monitored ones; the local counters
count every queue and topic whatever they chose. Services over the embedded engine in memory."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.metrics import MESSAGES_PUBLISHED, MESSAGES_SENT, MetricsSink, monitored, queue_labels, topic_labels
from mnsd.metrics.emf import EmfMetrics
from mnsd.metrics.process import ProcessMetrics
from mnsd.model.inputs import MessageInput, PublishInput
from mnsd.model.queues import QueueAttributeChanges, QueueAttributes
from mnsd.model.topics import SubscriptionInput, TopicAttributeChanges
from mnsd.push.dead_letters import DeadLetters
from mnsd.push.delivery import Outcome
from mnsd.push.first_attempt import FirstAttempt
from mnsd.push.records import PushCounters, PushRecords
from mnsd.queues.receivers import ReceiverInput
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"


def emf_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"_aws"')]


def named(lines: list[dict]) -> set[str]:
    """The queue, topic or subscription each line is about."""
    return {line.get("QueueName") or line.get("SubscriptionName") or line["TopicName"] for line in lines}


def services_over(sink: MetricsSink) -> Iterator[Services]:
    storage = sqlite_storage(":memory:")
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET")
    yield build_services(settings, storage=storage, clock=ManualClock(), metrics=sink)
    storage.database.close()


def choosing(services: Services) -> None:
    """Queues `on`, `off` and `unset` (with a receiver `audit`), topics likewise, and one message sent to each."""
    for name, chosen in (("on", "True"), ("off", "False"), ("unset", None)):
        services.queues.create_queue(ACCOUNT, name, QueueAttributeChanges(metrics_enabled=chosen))
        services.topics.create_topic(ACCOUNT, name, TopicAttributeChanges(metrics_enabled=chosen))
    services.receivers.create(ACCOUNT, "unset", "audit", ReceiverInput())
    for name in ("on", "off", "unset"):
        services.messages.send(services.addresses.resolve(ACCOUNT, name), [MessageInput("m", None, 8)])
        services.topics.publish(ACCOUNT, name, PublishInput(body="hi"))


@pytest.mark.parametrize(
    "default, printed",
    [(True, {"on", "unset", "unset.audit"}), (False, {"on"})],
)
def test_emf_prints_the_monitored_queues_and_topics_only(capsys, default, printed):
    sink = EmfMetrics(default=default)
    for services in services_over(sink):
        choosing(services)
        sink.flush()
        lines = emf_lines(capsys.readouterr().out)
        queues = [line for line in lines if "QueueName" in line]
        topics = [line for line in lines if "TopicName" in line]
        assert named(queues) == printed
        assert named(topics) == printed - {"unset.audit"}


def test_the_local_counters_count_every_queue_and_topic_whatever_they_chose():
    counts = ProcessMetrics()
    for services in services_over(counts):
        choosing(services)
    for name in ("on", "off", "unset", "unset.audit"):
        assert counts.counts()[(MESSAGES_SENT, queue_labels(ACCOUNT, name))] == 1
    for name in ("on", "off", "unset"):
        assert counts.counts()[(MESSAGES_PUBLISHED, topic_labels(ACCOUNT, name))] == 1


@pytest.mark.parametrize("default", [True, False])
def test_a_topics_push_results_follow_its_choice_when_the_message_was_published(capsys, default):
    sink = EmfMetrics(default=default)
    for services in services_over(sink):
        services.topics.create_topic(ACCOUNT, "news", TopicAttributeChanges(metrics_enabled="False"))
        services.topics.subscribe(ACCOUNT, "news", "sub", SubscriptionInput(endpoint="http://example.com/n"))
        message = services.topics.publish(ACCOUNT, "news", PublishInput(body="hi"))
        services.topics.set_topic_attributes(ACCOUNT, "news", TopicAttributeChanges(metrics_enabled=""))
        later = services.topics.publish(ACCOUNT, "news", PublishInput(body="hi"))
        subscription = services.topics.get_subscription(ACCOUNT, "news", "sub")
        records = PushRecords(services.storage.log, services.clock, services.settings.region)
        letters = DeadLetters(services.dead_letters, records, PushCounters(), services.settings.region, sink)
        delivered = type("Delivered", (), {"deliver": lambda self, s, m: Outcome(True, 200)})()
        attempt = FirstAttempt(delivered, None, letters, records, PushCounters(), sink)  # type: ignore[arg-type]
        attempt.attempt(subscription, message)  # published while the topic refused its metrics
        sink.flush()
        assert not [line for line in emf_lines(capsys.readouterr().out) if "SubscriptionName" in line]
        attempt.attempt(subscription, later)  # published once it followed the default again
        sink.flush()
        pushes = [line for line in emf_lines(capsys.readouterr().out) if "SubscriptionName" in line]
        assert len(pushes) == (1 if default else 0)


def test_metrics_enabled_is_true_false_or_unset_and_alarms_need_the_metrics():
    on = QueueAttributes().updated_from(QueueAttributeChanges(metrics_enabled="true"))
    assert on.metrics_enabled is True
    assert on.updated_from(QueueAttributeChanges(metrics_enabled="")).metrics_enabled is None  # the default again
    assert on.updated_from(QueueAttributeChanges(delay_seconds="1")).metrics_enabled is True  # kept
    with pytest.raises(errors.InvalidArgument):
        QueueAttributes().updated_from(QueueAttributeChanges(metrics_enabled="yes"))
    alarmed = QueueAttributes().updated_from(QueueAttributeChanges(alarms='{"DeadLetters": true}'))
    assert alarmed.metrics_chosen is True and monitored(alarmed.metrics_chosen, False)
    with pytest.raises(errors.InvalidArgument, match="MetricsEnabled"):
        alarmed.updated_from(QueueAttributeChanges(metrics_enabled="False"))
    with pytest.raises(errors.InvalidArgument, match="MetricsEnabled"):
        QueueAttributes().updated_from(QueueAttributeChanges(metrics_enabled="False", alarms='{"DeadLetters":true}'))
    assert monitored(None, True) and not monitored(None, False) and not monitored(False, True)
