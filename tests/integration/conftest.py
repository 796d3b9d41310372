from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from bench.by_name import QueuesByName
from local_runtime.tables import create_tables
from mnsd.services import build_services
from mnsd.settings import Settings
from tests.clocks import ManualClock

ACCOUNT = "1000000000000001"


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


def make_service(dynamodb, clock, **overrides):
    overrides.setdefault("poll_interval_ms", 200)
    overrides.setdefault("credentials", f"{ACCOUNT}:KEYID:SECRET")
    settings = Settings(**overrides)
    create_tables(dynamodb, settings)
    return QueuesByName(build_services(settings, dynamodb=dynamodb, clock=clock))


@pytest.fixture
def make(dynamodb, clock):
    return lambda **overrides: make_service(dynamodb, clock, **overrides)


@pytest.fixture
def service(make):
    return make()
