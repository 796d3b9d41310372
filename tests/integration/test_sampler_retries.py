"""The retries pending on moto (DynamoDB and Step Functions), through the sampler's Lambda handler: running executions
of the push retry state machine, named as the first attempt names them, counted per subscription of a monitored topic
and printed as the `NumberOfNotificationRetriesPending` gauge (0 for a subscription with none; no line for a topic
that is not monitored), in an account that has topics and no queue; a listing stopped by its bound prints what it
counted and says so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache

import boto3
import pytest
from moto import mock_aws

from local_runtime.dispatch import LocalContext
from local_runtime.push import create_push_workflow
from local_runtime.tables import create_tables
from mnsd.entry.monitoring import Monitor, NoKeys, make_sampler_handler
from mnsd.ground.settings import Settings
from mnsd.metrics.emf import EmfMetrics
from mnsd.model.inputs import PublishInput
from mnsd.model.topics import SubscriptionInput, TopicAttributeChanges
from mnsd.monitoring.alarms import AlarmReconciler, CloudWatchAlarms
from mnsd.monitoring.retries import PendingRetries, RetryLimits
from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits
from mnsd.push.stepfunctions import StepFunctionsWorkflow
from mnsd.push.workflow import delivery_reference, execution_input, execution_name
from mnsd.services import Services, build_services
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
PREFIX = "Mns-queue-alarm/"
PENDING = "NumberOfNotificationRetriesPending"


class World:
    def __init__(self, services: Services, clients, arn: str, clock: ManualClock, limits: RetryLimits) -> None:
        self.services = services
        self.clients = clients
        self.workflow = StepFunctionsWorkflow(clients("stepfunctions"), arn)
        sink = EmfMetrics(default=True)
        sampler = BacklogSampler(services.queues, sink, clock, SamplerLimits(workers=2))
        reconciler = AlarmReconciler(CloudWatchAlarms(clients("cloudwatch"), PREFIX), PREFIX, "", clock)
        self.made = 0
        self.retries = PendingRetries(services.catalog, self._stepfunctions, arn, sink, clock, limits)
        self.handler = make_sampler_handler(lambda: Monitor(services, sampler, reconciler, self.retries))

    def _stepfunctions(self):
        self.made += 1  # the client is asked for at each count (the factory makes it once)
        return self.clients("stepfunctions")

    def run(self) -> dict:
        return self.handler({"source": "aws.events"}, LocalContext())

    def topic(self, name: str, metrics: str | None = None, *subscriptions: str) -> None:
        self.services.topics.create_topic(ACCOUNT, name, TopicAttributeChanges(metrics_enabled=metrics))
        for subscription in subscriptions:
            endpoint = SubscriptionInput(endpoint=f"http://example.com/{subscription}")
            self.services.topics.subscribe(ACCOUNT, name, subscription, endpoint)

    def failed_first_attempts(self, topic: str, subscription: str, count: int) -> list[str]:
        """Start the retries of `count` messages, as the first attempt does when it fails; their execution names."""
        found = self.services.topics.get_subscription(ACCOUNT, topic, subscription)
        names = []
        for n in range(count):
            message = self.services.topics.publish(ACCOUNT, topic, PublishInput(body=f"m{n}"))
            name = execution_name(found, message)
            reference = delivery_reference(found, message)
            assert self.workflow.start(name, execution_input(found.attributes.notify_strategy, reference))
            names.append(name)
        return names


def make_world(limits: RetryLimits) -> Iterator[World]:
    clock = ManualClock()
    with mock_aws():
        clients = lru_cache(maxsize=None)(lambda name: boto3.client(name, region_name="us-east-1"))
        arn, _ = create_push_workflow(clients)
        settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", metrics_default=True, push_state_machine_arn=arn)
        create_tables(clients("dynamodb"), settings)
        services = build_services(
            settings, dynamodb=clients("dynamodb"), clock=clock, keys=NoKeys(), clients=clients, metrics=EmfMetrics()
        )
        # No queue: an account that only publishes to HTTP endpoints is found by its subscriptions.
        yield World(services, clients, arn, clock, limits)


@pytest.fixture
def world(aws_credentials) -> Iterator[World]:
    yield from make_world(RetryLimits())


@pytest.fixture
def bounded(aws_credentials) -> Iterator[World]:
    yield from make_world(RetryLimits(pages=2, page_size=2))


def pending_lines(text: str) -> list[dict]:
    """The EMF lines that carry the retries pending, as printed."""
    lines = [json.loads(line) for line in text.splitlines() if line.startswith('{"_aws"')]
    return [line for line in lines if PENDING in line]


def pending_line(topic: str, subscription: str, value: float) -> dict:
    """The EMF line of one subscription's gauge, as the sampler prints it (but its timestamp)."""
    return {
        "_aws": {
            "CloudWatchMetrics": [
                {
                    "Namespace": "MNS",
                    "Dimensions": [["AccountId", "TopicName", "SubscriptionName"]],
                    "Metrics": [{"Name": PENDING, "Unit": "Count"}],
                }
            ]
        },
        "AccountId": ACCOUNT,
        "TopicName": topic,
        "SubscriptionName": subscription,
        PENDING: [float(value)],
    }


def by_subscription(lines: list[dict]) -> dict[tuple[str, str], object]:
    return {(line["TopicName"], line["SubscriptionName"]): line[PENDING] for line in lines}


def test_each_subscription_of_a_monitored_topic_gets_its_running_retries_and_zero_without(world, capsys):
    world.topic("orders", None, "billing", "shipping", "audit")  # monitored by the stack's default
    world.topic("private", "False", "hidden")
    world.failed_first_attempts("orders", "billing", 3)
    stopped = world.failed_first_attempts("orders", "shipping", 2)
    world.failed_first_attempts("private", "hidden", 4)
    execution = world.workflow.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + stopped[0]
    world.clients("stepfunctions").stop_execution(executionArn=execution)  # no longer RUNNING: not pending
    capsys.readouterr()
    answer = world.run()
    assert answer["retries"] == {"subscriptions": 3, "pending": 1 + 3 + 4, "truncated": False}
    lines = pending_lines(capsys.readouterr().out)
    for line in lines:
        del line["_aws"]["Timestamp"]
    assert lines == [
        pending_line("orders", name, value) for name, value in (("audit", 0), ("billing", 3), ("shipping", 1))
    ]
    assert world.made == 1


def test_the_bound_stops_the_listing_prints_what_it_counted_and_says_so(bounded, capsys):
    bounded.topic("orders", "True", "billing")
    bounded.failed_first_attempts("orders", "billing", 5)  # 3 pages of 2: the bound reads 2
    capsys.readouterr()
    answer = bounded.run()
    assert answer["retries"] == {"subscriptions": 1, "pending": 4, "truncated": True}
    out = capsys.readouterr().out
    assert by_subscription(pending_lines(out)) == {("orders", "billing"): [4]}
    health = [json.loads(line) for line in out.splitlines() if '"RetriesNotAllCounted"' in line]
    assert [line["RetriesNotAllCounted"] for line in health] == [[1.0]]


def test_without_a_monitored_topic_no_execution_is_listed(world, capsys):
    world.topic("private", "False", "hidden")
    world.failed_first_attempts("private", "hidden", 1)
    capsys.readouterr()
    assert world.run()["retries"] == {"subscriptions": 0, "pending": 0, "truncated": False}
    assert pending_lines(capsys.readouterr().out) == [] and world.made == 0
