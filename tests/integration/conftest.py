from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from local_runtime.tables import create_tables
from mnsd.services import build_services
from mnsd.settings import Settings

ACCOUNT = "1000000000000001"


class FakeClock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start
        self.slept = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.t += seconds
            self.slept += seconds

    def advance(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def aws_env(aws_credentials):
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws_env):
    return boto3.client("dynamodb", region_name="us-east-1")


@pytest.fixture
def clock():
    return FakeClock()


def make_service(dynamodb, clock, **overrides):
    overrides.setdefault("poll_interval_ms", 200)
    overrides.setdefault("credentials", f"{ACCOUNT}:KEYID:SECRET")
    settings = Settings(**overrides)
    create_tables(dynamodb, settings)
    return build_services(settings, dynamodb=dynamodb, clock=clock).queues


@pytest.fixture
def make(dynamodb, clock):
    return lambda **overrides: make_service(dynamodb, clock, **overrides)


@pytest.fixture
def service(make):
    return make()
