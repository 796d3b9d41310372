"""Fixtures shared by every test layer."""

import pytest

from tests.push_receiver import HangingEndpoint, PushEndpoint

# What boto3 finds under moto: placeholder keys and a region, so no client made in a test signs with a
# developer's own keys or asks for a region.
AWS_TEST_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placeholder AWS keys and a region in the environment, for the test's duration."""
    for name, value in AWS_TEST_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def push_endpoint():
    endpoint = PushEndpoint()
    yield endpoint
    endpoint.close()


@pytest.fixture
def hanging_endpoint():
    endpoint = HangingEndpoint()
    yield endpoint
    endpoint.close()
