"""The Lambda functions and EventBridge buses subscriptions may push to (`-c pushLambdaArns=...`, `-c
pushEventBusArns=...`, infra/push.py `PushTargets`): none by default, and then no function may invoke or put events
anywhere; listed, the three push functions may invoke exactly the listed functions and put events on exactly the
listed buses, cdk-nag clean; every function's environment carries the lists Subscribe and each attempt check."""

from pathlib import Path

import pytest
from aws_cdk.assertions import Template

from infra.lint import findings
from infra.push import PushTargets
from infra.stack import MnsStack
from mnsd.ground import settings
from tests.support.stack import role_statements
from tests.support.stack import synthesized as shared_synth

FUNCTIONS = (
    "arn:aws:lambda:us-east-1:123456789012:function:orders",
    "arn:aws:lambda:us-east-1:210987654321:function:audit:*",
)
BUSES = ("arn:aws:events:us-east-1:123456789012:event-bus/orders",)
PUSH_FUNCTIONS = ("fanout", "first_attempt", "push_worker")
TARGET_ACTIONS = {"lambda:InvokeFunction", "events:PutEvents"}


@pytest.fixture(scope="module")
def synthesized() -> tuple[MnsStack, Template, Path]:
    return shared_synth(pushLambdaArns=" , ".join(FUNCTIONS), pushEventBusArns=BUSES[0])


def actions_of(statement: dict) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]


def target_statements(template: Template, name: str) -> dict[str, list[str]]:
    """Action -> resources, of `name`'s statements that invoke a function or put events."""
    found: dict[str, list[str]] = {}
    for statement in role_statements(template, name):
        for action in set(actions_of(statement)) & TARGET_ACTIONS:
            resources = statement["Resource"]
            found[action] = resources if isinstance(resources, list) else [resources]
    return found


def test_with_targets_listed_synth_passes_cdk_nag_and_cfn_lint(synthesized) -> None:
    _, _, outdir = synthesized  # (the synth itself fails on an unreviewed cdk-nag finding: the `:*` pattern)
    assert findings(outdir / "Mns.template.json") == []


@pytest.mark.parametrize("name", PUSH_FUNCTIONS)
def test_the_push_functions_may_invoke_and_put_events_on_exactly_the_listed_targets(synthesized, name) -> None:
    _, template, _ = synthesized
    assert target_statements(template, name) == {
        "lambda:InvokeFunction": list(FUNCTIONS),
        "events:PutEvents": list(BUSES),
    }


def test_no_other_function_may_invoke_or_put_events_and_every_one_knows_the_lists(synthesized) -> None:
    stack, template, _ = synthesized
    for name, function in stack.functions.functions.items():
        if name not in PUSH_FUNCTIONS and function.role is not None and name != "signing_setup":
            assert target_statements(template, name) == {}, name
    for resource in template.find_resources("AWS::Lambda::Function").values():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        if settings.META_TABLE in variables:  # the service's functions (not CDK's own helpers)
            assert variables[settings.PUSH_LAMBDA_ARNS] == ",".join(FUNCTIONS)
            assert variables[settings.PUSH_EVENT_BUS_ARNS] == ",".join(BUSES)


def test_by_default_no_function_may_invoke_or_put_events_anywhere() -> None:
    stack, template, _ = shared_synth()
    for name in stack.functions.functions:
        if name != "signing_setup":
            assert target_statements(template, name) == {}, name
    for resource in template.find_resources("AWS::Lambda::Function").values():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        if settings.META_TABLE in variables:
            assert variables[settings.PUSH_LAMBDA_ARNS] == "" and variables[settings.PUSH_EVENT_BUS_ARNS] == ""


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("pushLambdaArns", "*"),
        ("pushLambdaArns", "arn:aws:lambda:*:*:function:*"),  # another account or region by wildcard
        ("pushLambdaArns", "arn:aws:lambda:us-east-1:123456789012:*"),  # any resource type of the service
        ("pushLambdaArns", "arn:aws:sqs:us-east-1:123456789012:orders"),
        ("pushLambdaArns", "arn:aws:events:us-east-1:123456789012:event-bus/orders"),
        ("pushEventBusArns", "arn:aws:events:us-east-1:123456789012:rule/orders"),
        ("pushEventBusArns", "arn:*:events:us-east-1:123456789012:event-bus/orders"),
    ],
)
def test_an_entry_that_is_not_a_function_or_bus_arn_stops_the_synth(name: str, entry: str) -> None:
    with pytest.raises(ValueError, match=name):
        PushTargets.from_context({name: entry}.get)
