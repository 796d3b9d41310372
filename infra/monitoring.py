"""Alarms, all notifying one SNS topic: function errors and throttles, table throttles, API 5xx, dropped pushes."""

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from infra.encryption import Encryption
from mnsd.metrics import NAMESPACE

PERIOD = Duration.minutes(5)


def _health(name: str) -> cloudwatch.Metric:
    """A count the service prints about itself (Powertools metrics: namespace MNS, default dimension service=mns)."""
    return cloudwatch.Metric(
        namespace=NAMESPACE, metric_name=name, dimensions_map={"service": "mns"}, statistic="Sum", period=PERIOD
    )


DROPPED_DELIVERIES = _health("DroppedDeliveries")  # the push code's
SAMPLER_BEHIND = _health("QueuesNotSampled")  # the metrics sampler's (`mnsd.entry.monitoring`): queues left unsampled


class Alarms(Construct):
    """Any error, throttle, 5xx answer or dropped delivery within five minutes raises its alarm."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        functions: Mapping[str, lambda_.IFunction],
        tables: Mapping[str, dynamodb.ITable],
        http_api: apigw.IHttpApi,
        email: str | None = None,
        encryption: Encryption | None = None,
    ) -> None:
        super().__init__(scope, id)
        self.topic = sns.Topic(self, "Topic", display_name="MNS alarms", enforce_ssl=True)
        (encryption or Encryption()).encrypt_topic(self.topic)
        # The TLS-only topic policy replaces the default one: CloudWatch needs its own statement.
        self.topic.grant_publish(iam.ServicePrincipal("cloudwatch.amazonaws.com"))
        if email:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for name, function in functions.items():
            errors = {
                "errors": function.metric_errors(period=PERIOD),
                "throttles": function.metric_throttles(period=PERIOD),
            }
            self.add(f"Function-{name}", _sum(f"{name} errors and throttles", errors))
        for name, table in tables.items():
            throttled = {
                "reads": table.metric("ReadThrottleEvents", statistic="Sum", period=PERIOD),
                "writes": table.metric("WriteThrottleEvents", statistic="Sum", period=PERIOD),
            }
            self.add(f"Table-{name}", _sum(f"{name} throttled requests", throttled))
        self.add("Api5xx", http_api.metric_server_error(period=PERIOD, statistic="Sum"))
        self.add("DroppedDeliveries", DROPPED_DELIVERIES)

    def add(self, id: str, metric: cloudwatch.IMetric) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            id,
            metric=metric,
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms[id] = alarm
        return alarm


def _sum(label: str, metrics: Mapping[str, cloudwatch.IMetric]) -> cloudwatch.MathExpression:
    """The sum of `metrics` over each period (their names joined by +, in order)."""
    return cloudwatch.MathExpression(
        expression=" + ".join(metrics), using_metrics=dict(metrics), period=PERIOD, label=label
    )
