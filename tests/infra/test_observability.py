"""What the stack logs and traces (`infra.observability`): the defaults chosen for a busy estate, pinned in the
synthesized template, and the context that brings the rest back."""

import json

import pytest

from infra.api import ACCESS_LOG_FORMATS
from infra.observability import LogSettings
from tests.support.stack import synthesized


def synth(**context: object) -> dict:
    """As `cdk synth` (cdk-nag's validation fails it on any unreviewed finding): the template."""
    template: dict = synthesized(**context).template.to_json()
    return template


@pytest.fixture(scope="module")
def default() -> dict:
    return synth()


@pytest.fixture(scope="module")
def chosen() -> dict:
    return synth(tracing="active", functionLogs="verbose", accessLogFields="full")


def resources(template: dict, kind: str) -> list[dict]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == kind]


def functions(template: dict) -> list[dict]:
    found = resources(template, "AWS::Lambda::Function")
    assert len(found) > 30
    return found


def test_functions_log_json_without_platform_lines_or_a_line_per_request_and_trace_nothing(default: dict) -> None:
    ours = [f for f in functions(default) if "LogGroup" in f.get("LoggingConfig", {})]  # (not CDK's providers)
    assert len(ours) > 30
    for function in ours:
        config = function["LoggingConfig"]
        assert (config["LogFormat"], config["SystemLogLevel"], config["ApplicationLogLevel"]) == (
            "JSON",
            "WARN",
            "INFO",
        )
        assert function.get("TracingConfig", {}).get("Mode") != "Active", function["Handler"]
        variables = function["Environment"]["Variables"]
        assert variables["POWERTOOLS_LOG_LEVEL"] == "WARNING"
        assert variables["POWERTOOLS_TRACE_DISABLED"] == "true"
    (machine,) = resources(default, "AWS::StepFunctions::StateMachine")
    assert not machine.get("TracingConfiguration", {}).get("Enabled", False)


def test_the_access_log_is_trimmed(default: dict) -> None:
    (stage,) = resources(default, "AWS::ApiGatewayV2::Stage")
    assert json.loads(stage["AccessLogSettings"]["Format"]) == ACCESS_LOG_FORMATS["trimmed"]
    assert len(ACCESS_LOG_FORMATS["trimmed"]) < len(ACCESS_LOG_FORMATS["full"])


def test_context_brings_tracing_platform_lines_and_the_full_access_log_back(chosen: dict) -> None:
    routes = [f for f in functions(chosen) if f.get("Handler") == "post_messages.handler"]
    (send,) = routes
    assert send["LoggingConfig"]["SystemLogLevel"] == "INFO"
    assert send["TracingConfig"] == {"Mode": "Active"}
    assert send["Environment"]["Variables"]["POWERTOOLS_LOG_LEVEL"] == "INFO"
    assert "POWERTOOLS_TRACE_DISABLED" not in send["Environment"]["Variables"]
    (machine,) = resources(chosen, "AWS::StepFunctions::StateMachine")
    assert machine["TracingConfiguration"] == {"Enabled": True}
    (stage,) = resources(chosen, "AWS::ApiGatewayV2::Stage")
    assert json.loads(stage["AccessLogSettings"]["Format"]) == ACCESS_LOG_FORMATS["full"]


def test_unknown_choices_are_refused() -> None:
    context = {"tracing": "sometimes"}
    with pytest.raises(ValueError, match="tracing must be one of off, active"):
        LogSettings.from_context(context.get)
    assert LogSettings.from_context({}.get) == LogSettings()
