"""The template's live metrics: the sampler's schedule, function and grants, the alarm-name prefix its role is held
to, the stack default of MetricsEnabled every function reads, the sampler's own alarm and the dashboard."""

from __future__ import annotations

import json
import re
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from infra.grants import GRANTS
from infra.metrics import MAX_EVENT_AGE, TOP
from infra.stack import MnsStack
from mnsd.metrics import (
    MESSAGES_DEAD_LETTERED,
    MESSAGES_PUBLISHED,
    MESSAGES_SENT,
    MESSAGES_VISIBLE,
    NAMESPACE,
    OLDEST_MESSAGE_AGE,
    PUSHES_FAILED,
)
from tests.support.stack import TEST_CONTEXT, logical_id, role_statements, table_access
from tests.support.stack import synthesized as shared_synth


@pytest.fixture(scope="module")
def synthesized() -> tuple[MnsStack, Template]:
    stack, template, _ = shared_synth()  # (fails on any cdk-nag finding not reviewed)
    return stack, template


@pytest.fixture(scope="module")
def template(synthesized: tuple[MnsStack, Template]) -> Template:
    return synthesized[1]


def sampler(template: Template) -> tuple[str, dict]:
    (found,) = template.find_resources(
        "AWS::Lambda::Function", {"Properties": {"Handler": "sample_metrics.handler"}}
    ).items()
    return found


def test_a_rule_runs_the_sampler_every_minute_once_never_retried(template: Template) -> None:
    name, _ = sampler(template)
    rules = template.find_resources("AWS::Events::Rule", {"Properties": {"ScheduleExpression": "rate(1 minute)"}})
    (rule,) = rules.values()
    (target,) = rule["Properties"]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [name, "Arn"]}
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60}
    template.has_resource_properties(
        "AWS::Lambda::EventInvokeConfig",
        {"FunctionName": {"Ref": name}, "MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60},
    )
    template.has_resource_properties(
        "AWS::Lambda::Permission",
        {"FunctionName": {"Fn::GetAtt": [name, "Arn"]}, "Principal": "events.amazonaws.com"},
    )
    assert MAX_EVENT_AGE.to_seconds() == 60


def test_a_run_ends_before_the_next_begins_on_a_full_vcpu_without_keys(template: Template) -> None:
    _, function = sampler(template)
    properties = function["Properties"]
    assert properties["Timeout"] < 60 and properties["MemorySize"] == 1769
    assert "ReservedConcurrentExecutions" not in properties
    variables = properties["Environment"]["Variables"]
    assert "MNS_CREDENTIALS_SECRET_ARN" not in variables and "MNS_RECEIPT_SECRET_ARN" not in variables
    topic = logical_id(template, "AWS::SNS::Topic", "Mns/Alarms/Topic/Resource")
    assert variables["MNS_ALARM_TOPIC_ARN"] == {"Ref": topic}
    assert variables["MNS_ALARM_PREFIX"] == "Mns-queue-alarm/"
    assert variables["MNS_METRICS_DEFAULT"] == "true"


def test_the_sampler_reads_the_meta_and_message_tables_and_writes_neither(template: Template) -> None:
    meta = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Meta/Resource")
    messages = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Messages/Resource")
    access = table_access(template, "sample_metrics")
    assert set(access) == {meta, messages} and set(GRANTS["sample_metrics"]) == {"meta.read", "messages.read"}
    for actions in access.values():
        assert {"dynamodb:GetItem", "dynamodb:Query"} <= actions
        assert (
            not {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"} & actions
        )


def test_the_sampler_may_only_touch_alarms_of_its_prefix_that_notify_sns(template: Template) -> None:
    statements = [s for s in role_statements(template, "sample_metrics") if "cloudwatch" in json.dumps(s["Action"])]
    by_action = {json.dumps(s["Action"]): s for s in statements}
    assert set(by_action) == {'"cloudwatch:PutMetricAlarm"', '["cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms"]'}
    for statement in statements:
        resource = json.dumps(statement["Resource"])
        assert ":cloudwatch:" in resource and ":alarm:Mns-queue-alarm/*" in resource
    put = by_action['"cloudwatch:PutMetricAlarm"']
    condition = put["Condition"]["ForAllValues:StringLike"]["cloudwatch:AlarmActions"]
    assert ":sns:*" in json.dumps(condition)


def test_the_sampler_may_only_list_the_executions_of_the_push_retry_state_machine(template: Template) -> None:
    machine = logical_id(template, "AWS::StepFunctions::StateMachine", "Mns/Push/Retries/Resource")
    statements = [s for s in role_statements(template, "sample_metrics") if "states:" in json.dumps(s["Action"])]
    assert statements == [{"Action": "states:ListExecutions", "Effect": "Allow", "Resource": {"Ref": machine}}]
    _, function = sampler(template)
    assert function["Properties"]["Environment"]["Variables"]["MNS_PUSH_STATE_MACHINE_ARN"] == {"Ref": machine}


def test_every_function_reads_the_stack_default_of_metrics_enabled(template: Template) -> None:
    for function in template.find_resources("AWS::Lambda::Function").values():
        if function["Properties"]["Handler"] in ("console.handler",):
            continue
        assert function["Properties"]["Environment"]["Variables"]["MNS_METRICS_DEFAULT"] == "true"


@pytest.mark.parametrize(("value", "text"), [(False, "false"), ("false", "false"), ("TRUE", "true"), (True, "true")])
def test_metrics_default_is_a_context_switch(tmp_path: Path, value: object, text: str) -> None:
    app = cdk.App(context={**TEST_CONTEXT, "metricsDefault": value}, outdir=str(tmp_path))
    template = Template.from_stack(MnsStack(app, "Mns", env=cdk.Environment(region="us-east-1")))
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {"Handler": "post_messages.handler", "Environment": {"Variables": {"MNS_METRICS_DEFAULT": text}}},
    )


def test_a_metrics_default_that_is_not_true_or_false_is_refused(tmp_path: Path) -> None:
    app = cdk.App(context={**TEST_CONTEXT, "metricsDefault": "sometimes"}, outdir=str(tmp_path))
    with pytest.raises(ValueError, match="metricsDefault"):
        MnsStack(app, "Mns", env=cdk.Environment(region="us-east-1"))


def test_an_unsampled_queue_raises_the_samplers_alarm(template: Template) -> None:
    topic = logical_id(template, "AWS::SNS::Topic", "Mns/Alarms/Topic/Resource")
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Namespace": NAMESPACE,
            "MetricName": "QueuesNotSampled",
            "Dimensions": [{"Name": "service", "Value": "mns"}],
            "Threshold": 1,
            "AlarmActions": [{"Ref": topic}],
        },
    )


def dashboard_body(template: Template) -> dict:
    """The dashboard's JSON, the Region token read as `REGION`."""
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    return json.loads("".join(part if isinstance(part, str) else "REGION" for part in parts))


def test_the_dashboard_shows_the_top_queues_and_topics_by_search_over_the_namespace(template: Template) -> None:
    body = dashboard_body(template)
    expressions = {
        widget["properties"]["title"]: metric[0]["expression"]
        for widget in body["widgets"]
        for metric in widget["properties"]["metrics"]
        if isinstance(metric[0], dict) and "expression" in metric[0]
    }
    shown = {}
    for expression in expressions.values():
        found = re.fullmatch(
            r"SORT\(SEARCH\('\{(?P<ns>\w+),(?P<dims>[\w,]+)\} MetricName=\"(?P<metric>\w+)\"', '(?P<stat>\w+)', 60\), "
            r"(?P<order>SUM|MAX), DESC, (?P<top>\d+)\)",
            expression,
        )
        assert found, expression
        assert found["ns"] == NAMESPACE and int(found["top"]) == TOP
        assert found["order"] == ("SUM" if found["stat"] == "Sum" else "MAX")
        shown[found["metric"]] = (found["dims"], found["stat"])
    queue = "AccountId,QueueName"
    assert shown[MESSAGES_SENT.name] == (queue, "Sum")
    assert shown[MESSAGES_VISIBLE.name] == (queue, "Maximum")
    assert shown[OLDEST_MESSAGE_AGE.name] == (queue, "Maximum")
    assert shown[MESSAGES_DEAD_LETTERED.name] == (queue, "Sum")
    assert shown[MESSAGES_PUBLISHED.name] == ("AccountId,TopicName", "Sum")
    assert shown[PUSHES_FAILED.name] == ("AccountId,TopicName,SubscriptionName", "Sum")
    sampler_health = [w for w in body["widgets"] if "sampler" in w["properties"]["title"]]
    assert sampler_health and all(w["properties"]["region"] == "REGION" for w in body["widgets"])
