"""Integration fixtures: the services over moto on a clock the test moves (`tests.integration.services`)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

from tests.integration.services import make_service
from tests.support.clocks import ManualClock
from tests.support.push import Push


@pytest.fixture
def aws_env(aws_credentials):
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws_env):
    return boto3.client("dynamodb", region_name="us-east-1")


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def make(dynamodb, clock):
    return lambda **overrides: make_service(dynamodb, clock, **overrides)


@pytest.fixture
def service(make):
    return make()


# Push delivery over moto with the retry workflow running (`test_push.py`, `test_push_dead_letters.py`).
@pytest.fixture
def moto(monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


@pytest.fixture
def push(moto, push_endpoint):
    harness = Push(push_endpoint)
    yield harness
    harness.worker.stop()


@pytest.fixture
def recorded_waits(monkeypatch):
    """moto's waits (Wait states and Retry intervals), recorded instead of slept."""
    waits: list[tuple[str, float]] = []

    class Time:
        @staticmethod
        def sleep(seconds: float) -> None:
            waits.append(("retry", seconds))

    monkeypatch.setattr(retrier_decl, "time", Time)
    monkeypatch.setattr(
        WaitFunction, "_wait_interval", lambda self, env, wait_seconds: waits.append(("wait", wait_seconds))
    )
    return waits
