"""The sampler on moto (DynamoDB and CloudWatch), through its Lambda handler: the gauges it prints as EMF for every
monitored queue and receiver, against each queue's own GetQueueAttributes counts, the age of the oldest message to
the second of an injected clock; and the alarms queues ask for, put, changed and deleted in CloudWatch."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from local_runtime.dispatch import LocalContext
from local_runtime.tables import create_tables
from mnsd.entry.monitoring import Monitor, NoKeys, make_sampler_handler
from mnsd.ground.settings import Settings
from mnsd.metrics.emf import EmfMetrics
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges
from mnsd.monitoring.alarms import AlarmReconciler, CloudWatchAlarms
from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits
from mnsd.queues.receivers import ReceiverInput
from mnsd.services import Services, build_services
from tests.support.by_name import QueuesByName
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
PREFIX = "Mns-queue-alarm/"
STACK_TOPIC = "arn:aws:sns:us-east-1:123456789012:mns-alarms"
OWN_TOPIC = "arn:aws:sns:us-east-1:123456789012:oncall"


class World:
    def __init__(self, services: Services, clock: ManualClock, cloudwatch: object, default: bool) -> None:
        self.services = services
        self.clock = clock
        self.cloudwatch = cloudwatch
        # The gauges' own sink: the calls the tests make count into the services' (and print at their own flush).
        sampler = BacklogSampler(services.queues, EmfMetrics(default=default), clock, SamplerLimits(workers=4))
        self.reconciler = AlarmReconciler(CloudWatchAlarms(cloudwatch, PREFIX), PREFIX, STACK_TOPIC, clock)
        self.handler = make_sampler_handler(lambda: Monitor(services, sampler, self.reconciler))

    def run(self) -> dict:
        return self.handler({"source": "aws.events"}, LocalContext())

    def alarms(self) -> dict[str, dict]:
        found = self.cloudwatch.describe_alarms(AlarmNamePrefix=PREFIX)["MetricAlarms"]  # type: ignore[attr-defined]
        return {alarm["AlarmName"]: alarm for alarm in found}


def make_world(default: bool) -> Iterator[World]:
    clock = ManualClock()
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", metrics_default=default)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(dynamodb, settings)
        sink = EmfMetrics(default=default)
        services = build_services(settings, dynamodb=dynamodb, clock=clock, keys=NoKeys(), metrics=sink)
        yield World(services, clock, boto3.client("cloudwatch", region_name="us-east-1"), default)


@pytest.fixture
def world(aws_credentials) -> Iterator[World]:
    yield from make_world(default=True)


@pytest.fixture
def opt_in(aws_credentials) -> Iterator[World]:
    yield from make_world(default=False)


def gauge_lines(text: str) -> dict[str, dict]:
    """The sampler's EMF lines, by queue name: each metric's one value (Powertools prints a list of values)."""
    lines = [json.loads(line) for line in text.splitlines() if line.startswith('{"_aws"')]
    found = {}
    for line in lines:
        if "QueueName" in line:
            names = {m["Name"] for m in line["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
            assert all(len(line[n]) == 1 for n in names if isinstance(line[n], list))
            found[line["QueueName"]] = {k: v[0] if k in names and isinstance(v, list) else v for k, v in line.items()}
    return found


def send(services: Services, name: str, *bodies: str, delay: int | None = None) -> None:
    services.messages.send(services.addresses.resolve(ACCOUNT, name), [MessageInput(body, delay, 8) for body in bodies])


def test_the_gauges_of_each_monitored_queue_match_its_own_counts_and_the_age_is_to_the_second(world, capsys):
    queues = QueuesByName(world.services)
    queues.create_queue(ACCOUNT, "orders")
    queues.receivers.create(ACCOUNT, "orders", "audit", ReceiverInput())
    queues.create_queue(ACCOUNT, "quiet", QueueAttributeChanges(metrics_enabled="False"))
    send(world.services, "orders", "first")
    world.clock.advance(40)
    send(world.services, "orders", "a", "b", "c")
    send(world.services, "orders", "later", delay=300)
    send(world.services, "quiet", "x")
    world.clock.advance(20)
    assert len(queues.receive(ACCOUNT, "orders", 2, 0)) == 2  # two in flight
    world.clock.advance(15.25)
    capsys.readouterr()
    answer = world.run()
    assert answer["sampled"] == {"monitored": 2, "sampled": 2, "late": 0, "failed": 0}
    lines = gauge_lines(capsys.readouterr().out)
    assert set(lines) == {"orders", "orders.audit"}  # `quiet` refused its metrics
    for name in ("orders", "orders.audit"):
        queue = queues.get_queue(ACCOUNT, name)
        counts = queues.queue_counts(queue)  # what GetQueueAttributes answers
        line = lines[name]
        assert line["AccountId"] == ACCOUNT
        assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["AccountId", "QueueName"]]
        assert line["ApproximateNumberOfMessagesVisible"] == counts.active
        assert line["ApproximateNumberOfMessagesNotVisible"] == counts.inactive
        assert line["ApproximateNumberOfMessagesDelayed"] == counts.delayed == 1
        assert line["ApproximateAgeOfOldestMessage"] == pytest.approx(40 + 20 + 15.25, abs=1.0)
    assert (
        lines["orders"]["ApproximateNumberOfMessagesVisible"],
        lines["orders"]["ApproximateNumberOfMessagesNotVisible"],
    ) == (2, 2)
    assert lines["orders.audit"]["ApproximateNumberOfMessagesVisible"] == 4
    units = {m["Name"]: m["Unit"] for m in lines["orders"]["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert units["ApproximateAgeOfOldestMessage"] == "Seconds"
    assert units["ApproximateNumberOfMessagesVisible"] == "Count"


def test_an_empty_queue_reads_zeros_and_a_fifo_queue_its_groups_in_flight(world, capsys):
    queues = QueuesByName(world.services)
    queues.create_queue(ACCOUNT, "idle")
    queues.create_queue(ACCOUNT, "jobs", QueueAttributeChanges(queue_type="fifo"))
    queues.send(ACCOUNT, "jobs", [MessageInput(b, None, 8, message_group_id=g) for b, g in (("1", "g1"), ("2", "g2"))])
    assert len(queues.receive(ACCOUNT, "jobs", 2, 0)) == 2
    capsys.readouterr()
    world.run()
    lines = gauge_lines(capsys.readouterr().out)
    idle = {k: lines["idle"][k] for k in lines["idle"] if k.startswith("Approximate")}
    assert idle == {
        "ApproximateNumberOfMessagesVisible": 0,
        "ApproximateNumberOfMessagesNotVisible": 0,
        "ApproximateNumberOfMessagesDelayed": 0,
        "ApproximateAgeOfOldestMessage": 0,
    }
    assert lines["jobs"]["ApproximateNumberOfGroupsWithInflightMessages"] == 2
    assert "ApproximateNumberOfGroupsWithInflightMessages" not in lines["idle"]


def test_with_the_default_off_only_the_queues_that_chose_metrics_or_alarms_are_sampled(opt_in, capsys):
    queues = QueuesByName(opt_in.services)
    queues.create_queue(ACCOUNT, "plain")
    queues.create_queue(ACCOUNT, "chosen", QueueAttributeChanges(metrics_enabled="True"))
    queues.create_queue(ACCOUNT, "alarmed", QueueAttributeChanges(alarms='{"VisibleMessages": 10}'))
    capsys.readouterr()
    opt_in.run()
    assert set(gauge_lines(capsys.readouterr().out)) == {"chosen", "alarmed"}


# --- alarms ------------------------------------------------------------------------------------------------------


def set_alarms(world: World, name: str, alarms: str) -> None:
    world.services.queues.set_queue_attributes(ACCOUNT, name, QueueAttributeChanges(alarms=alarms))


def test_a_queue_gets_the_alarms_it_asks_for_on_its_metrics(world):
    queues = QueuesByName(world.services)
    queues.create_queue(ACCOUNT, "orders-dlq")
    policy = DlqPolicyInput("true", "orders-dlq", "3")
    alarms = f'{{"OldestMessageAge": 600, "VisibleMessages": 1000, "DeadLetters": true, "TopicArn": "{OWN_TOPIC}"}}'
    queues.create_queue(ACCOUNT, "orders", QueueAttributeChanges(dlq_policy=policy, alarms=alarms))
    queues.create_queue(ACCOUNT, "billing", QueueAttributeChanges(alarms='{"OldestMessageAge": 60, "Minutes": 2}'))
    assert world.run()["alarms"] == {"full": True, "put": 4, "deleted": 0, "pending": 0}
    found = world.alarms()
    age = found[f"{PREFIX}{ACCOUNT}/orders/OldestMessageAge"]
    assert age["Namespace"] == "MNS" and age["MetricName"] == "ApproximateAgeOfOldestMessage"
    assert sorted((d["Name"], d["Value"]) for d in age["Dimensions"]) == [
        ("AccountId", ACCOUNT),
        ("QueueName", "orders"),
    ]
    assert (age["Statistic"], age["Period"], age["EvaluationPeriods"], age["Threshold"]) == ("Maximum", 60, 5, 600)
    assert age["ComparisonOperator"] == "GreaterThanOrEqualToThreshold" and age["AlarmActions"] == [OWN_TOPIC]
    depth = found[f"{PREFIX}{ACCOUNT}/orders/VisibleMessages"]
    assert (depth["MetricName"], depth["Threshold"]) == ("ApproximateNumberOfMessagesVisible", 1000)
    dead = found[f"{PREFIX}{ACCOUNT}/orders/DeadLetters"]
    assert (dead["MetricName"], dead["Statistic"], dead["Threshold"], dead["EvaluationPeriods"]) == (
        "NumberOfMessagesDeadLettered",
        "Sum",
        1,
        1,
    )
    assert dead["TreatMissingData"] == "notBreaching"
    billing = found[f"{PREFIX}{ACCOUNT}/billing/OldestMessageAge"]
    assert billing["AlarmActions"] == [STACK_TOPIC] and billing["EvaluationPeriods"] == 2
    world.clock.advance(60)
    assert world.run()["alarms"] == {"full": False, "put": 0, "deleted": 0, "pending": 0}  # nothing changed


def test_a_changed_or_removed_attribute_changes_or_deletes_the_alarms_within_a_run(world):
    queues = QueuesByName(world.services)
    queues.create_queue(ACCOUNT, "orders", QueueAttributeChanges(alarms='{"OldestMessageAge": 600}'))
    world.run()
    world.clock.advance(60)
    set_alarms(world, "orders", '{"OldestMessageAge": 120, "VisibleMessages": 50}')
    assert world.run()["alarms"] == {"full": False, "put": 2, "deleted": 0, "pending": 0}
    assert world.alarms()[f"{PREFIX}{ACCOUNT}/orders/OldestMessageAge"]["Threshold"] == 120
    world.clock.advance(60)
    set_alarms(world, "orders", '{"VisibleMessages": 50}')
    assert world.run()["alarms"]["deleted"] == 1
    assert set(world.alarms()) == {f"{PREFIX}{ACCOUNT}/orders/VisibleMessages"}
    world.clock.advance(60)
    set_alarms(world, "orders", "")
    world.run()
    assert world.alarms() == {}


def test_a_deleted_queues_alarms_go_at_the_next_full_pass_and_others_alarms_are_never_touched(world):
    queues = QueuesByName(world.services)
    queues.create_queue(ACCOUNT, "gone", QueueAttributeChanges(alarms='{"VisibleMessages": 5}'))
    world.cloudwatch.put_metric_alarm(  # type: ignore[attr-defined]
        AlarmName="someone-elses",
        MetricName="Errors",
        Namespace="AWS/Lambda",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
    )
    world.run()
    queues.delete_queue(ACCOUNT, "gone")
    world.clock.advance(60)
    world.run()
    assert set(world.alarms()) == {f"{PREFIX}{ACCOUNT}/gone/VisibleMessages"}  # a recent pass cannot see a deletion
    top_of_hour = (int(world.clock.now()) // 3600 + 1) * 3600
    world.clock.advance(top_of_hour - world.clock.now())
    assert world.run()["alarms"] == {"full": True, "put": 0, "deleted": 1, "pending": 0}
    assert world.alarms() == {}
    names = [a["AlarmName"] for a in world.cloudwatch.describe_alarms()["MetricAlarms"]]  # type: ignore[attr-defined]
    assert names == ["someone-elses"]


def test_more_changes_than_a_run_makes_go_on_in_the_next_runs(world):
    world.reconciler.max_writes = 3
    for i in range(5):
        world.services.queues.create_queue(ACCOUNT, f"q{i}", QueueAttributeChanges(alarms='{"VisibleMessages": 9}'))
    assert world.run()["alarms"] == {"full": True, "put": 3, "deleted": 0, "pending": 2}
    world.clock.advance(3600)  # long after the changes: only a full pass finds them
    assert world.run()["alarms"] == {"full": True, "put": 2, "deleted": 0, "pending": 0}
    assert len(world.alarms()) == 5
