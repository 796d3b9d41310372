"""Live metrics on AWS beside the request path's EMF lines: the sampler (one function a minute: every monitored queue's
gauges, and the alarms queues ask for) and the dashboard of the account's busiest queues and topics.

    EventBridge rule, every minute --> sample_metrics --(EMF)--> CloudWatch metrics (namespace MNS)
                                                      --(PutMetricAlarm / DeleteAlarms, its prefix only)--> alarms
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.functions import Functions
from mnsd.ground import settings
from mnsd.metrics import (
    EMPTY_RECEIVES,
    MESSAGES_DEAD_LETTERED,
    MESSAGES_PUBLISHED,
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    MESSAGES_VISIBLE,
    NAMESPACE,
    OLDEST_MESSAGE_AGE,
    PUSHES_DELIVERED,
    PUSHES_FAILED,
    Metric,
)
from mnsd.metrics.emf import DIMENSIONS

SCHEDULE = events.Schedule.rate(Duration.minutes(1))
# A run's reads stop at the sampler's budget; then the alarms (at most 30 writes, ~10 s) and the last flush. A run
# ends before the next one starts: no reservation is needed to keep two from overlapping.
SAMPLER_TIMEOUT = Duration.seconds(58)
SAMPLER_MEMORY_MB = 1769  # one full vCPU: the sampler's reading is CPU-bound (boto3, the engine's tally)
MAX_EVENT_AGE = Duration.seconds(60)  # a run not started within its minute is dropped: the next one comes
TOP = 10  # queues or topics per dashboard graph
GRAPH_PERIOD = Duration.minutes(1)

QUEUE_DIMENSIONS = (DIMENSIONS["account"], DIMENSIONS["queue"])
TOPIC_DIMENSIONS = (DIMENSIONS["account"], DIMENSIONS["topic"])
SUBSCRIPTION_DIMENSIONS = (DIMENSIONS["account"], DIMENSIONS["topic"], DIMENSIONS["subscription"])


def alarm_prefix(stack: Stack) -> str:
    """The names of the alarms queues ask for start with it: the sampler's role reaches those alarms only."""
    return f"{stack.stack_name}-queue-alarm/"


class MetricsSampler(Construct):
    """The scheduled sampler: reads the meta and message tables (nothing else of them), lists the push retry state
    machine's executions (`push_retries`: the retries pending), prints EMF, and creates,
    reads and deletes the CloudWatch alarms of its prefix, notifying SNS topics only. `alarm_topic` (the stack's)
    is set with `notify`, once the alarms exist."""

    def __init__(
        self, scope: Construct, id: str, *, functions: Functions, push_retries: sfn.IStateMachine | None = None
    ) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        self.prefix = alarm_prefix(stack)
        self.function = functions.add(
            "sample_metrics",
            timeout=SAMPLER_TIMEOUT,
            memory_size=SAMPLER_MEMORY_MB,
            shared_secrets=False,  # it serves no MNS call: no access key, no receipt secret
            environment={settings.ALARM_PREFIX: self.prefix},
        )
        if push_retries is not None:
            # The retries pending: the push retry state machine's running executions, listed (nothing else of them).
            self.function.add_environment(settings.PUSH_STATE_MACHINE_ARN, push_retries.state_machine_arn)
            self.function.add_to_role_policy(
                iam.PolicyStatement(actions=["states:ListExecutions"], resources=[push_retries.state_machine_arn])
            )
        self.function.configure_async_invoke(retry_attempts=0, max_event_age=MAX_EVENT_AGE)
        self.rule = events.Rule(self, "Schedule", schedule=SCHEDULE, description="MNS metrics sampler, every minute")
        self.rule.add_target(targets.LambdaFunction(self.function, retry_attempts=0, max_event_age=MAX_EVENT_AGE))
        alarms = stack.format_arn(
            service="cloudwatch",
            resource="alarm",
            resource_name=f"{self.prefix}*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["cloudwatch:PutMetricAlarm"],
                resources=[alarms],
                # An alarm it makes may notify SNS topics, nothing else (no EC2 or Systems Manager action).
                conditions={"ForAllValues:StringLike": {"cloudwatch:AlarmActions": [f"arn:{stack.partition}:sns:*"]}},
            )
        )
        # DescribeAlarms (called with AlarmNamePrefix) on the prefix's alarms, not "*": the service authorization
        # reference gives the action the `alarm` resource type (its aws:ResourceTag key applies to it), and the API
        # reference asks for "*" only to list composite alarms, which the sampler neither makes nor lists.
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms"], resources=[alarms])
        )

    def notify(self, topic_arn: str) -> None:
        """Alarms of queues that name no topic of their own notify `topic_arn`."""
        self.function.add_environment(settings.ALARM_TOPIC_ARN, topic_arn)


def top(metric: Metric, dimensions: tuple[str, ...], statistic: str, label: str) -> cloudwatch.MathExpression:
    """The `TOP` series of `metric` with the most (their sum over the graph's range for counts, their maximum for
    gauges), found by a search over the namespace: every queue's (or topic's) series, whatever its account."""
    search = f"SEARCH('{{{NAMESPACE},{','.join(dimensions)}}} MetricName=\"{metric.name}\"', '{statistic}', 60)"
    order = "SUM" if statistic == "Sum" else "MAX"
    return cloudwatch.MathExpression(
        expression=f"SORT({search}, {order}, DESC, {TOP})", using_metrics={}, label=label, period=GRAPH_PERIOD
    )


def graph(title: str, metric: cloudwatch.IMetric, width: int = 12) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(
        title=title, left=[metric], width=width, height=6, legend_position=cloudwatch.LegendPosition.RIGHT
    )


# (title, metric, dimensions, statistic) of each graph, by row.
QUEUE_GRAPHS = (
    (
        ("Busiest queues: messages sent", MESSAGES_SENT, "Sum"),
        ("Busiest queues: messages received", MESSAGES_RECEIVED, "Sum"),
    ),
    (
        ("Deepest queues: visible messages", MESSAGES_VISIBLE, "Maximum"),
        ("Oldest messages: age in seconds", OLDEST_MESSAGE_AGE, "Maximum"),
    ),
    (
        ("Dead letters moved", MESSAGES_DEAD_LETTERED, "Sum"),
        ("Empty receives", EMPTY_RECEIVES, "Sum"),
    ),
)
TOPIC_GRAPHS = (
    ("Busiest topics: messages published", MESSAGES_PUBLISHED, TOPIC_DIMENSIONS),
    ("Subscriptions: pushes delivered", PUSHES_DELIVERED, SUBSCRIPTION_DIMENSIONS),
    ("Subscriptions: push attempts failed", PUSHES_FAILED, SUBSCRIPTION_DIMENSIONS),
)


class Dashboard(Construct):
    """The account's busiest queues and topics, top `TOP` by each measure, and the sampler's own health."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", default_interval=Duration.hours(3))
        for row in QUEUE_GRAPHS:
            self.dashboard.add_widgets(
                *(graph(title, top(metric, QUEUE_DIMENSIONS, stat, "")) for title, metric, stat in row)
            )
        self.dashboard.add_widgets(
            *(graph(title, top(metric, dims, "Sum", ""), width=8) for title, metric, dims in TOPIC_GRAPHS)
        )
        health = [
            cloudwatch.Metric(
                namespace=NAMESPACE,
                metric_name=name,
                dimensions_map={"service": "mns"},
                statistic="Sum",
                period=GRAPH_PERIOD,
            )
            for name in ("QueuesSampled", "QueuesNotSampled")
        ]
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Metrics sampler: queues sampled and not", left=health, width=24, height=4)
        )
