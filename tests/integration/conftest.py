"""Integration fixtures: the services over moto on a clock the test moves (`tests.integration.services`)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from tests.clocks import ManualClock
from tests.integration.services import make_service


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
