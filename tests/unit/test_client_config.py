"""AWS clients carry botocore's retries and timeouts that end within a function's timeout."""

import pytest

from mnsd.ground.settings import Settings
from mnsd.services import CLIENT_RETRIES, CLIENT_TIMEOUTS, ENGINE_RETRIES, boto3_clients, resolve_secrets

SHORTEST_FUNCTION_TIMEOUT_SECONDS = 10  # infra/api.py: every route but the long poll

pytestmark = pytest.mark.usefixtures("aws_credentials")


@pytest.mark.parametrize("service", ["stepfunctions", "ses", "sns", "secretsmanager"])
def test_each_client_is_made_once_with_adaptive_retries_and_short_timeouts(service: str) -> None:
    clients = boto3_clients()
    client = clients(service)
    assert clients(service) is client
    config = client.meta.config
    assert config.retries == {"mode": "adaptive", "total_max_attempts": 3}
    assert (config.connect_timeout, config.read_timeout) == (1, 2)


def test_the_dynamodb_client_tries_each_call_once_the_engine_retrying_by_the_outcome_within_the_budget() -> None:
    config = boto3_clients()("dynamodb").meta.config
    assert config.retries == {"mode": "standard", "total_max_attempts": 1} == ENGINE_RETRIES
    assert (config.connect_timeout, config.read_timeout) == (1, 2)


def test_every_attempt_of_a_call_ends_within_the_shortest_function_timeout() -> None:
    per_attempt = CLIENT_TIMEOUTS["connect_timeout"] + CLIENT_TIMEOUTS["read_timeout"]
    assert CLIENT_RETRIES["total_max_attempts"] * per_attempt < SHORTEST_FUNCTION_TIMEOUT_SECONDS


def test_the_secrets_read_at_cold_start_use_the_same_configuration(monkeypatch) -> None:
    made = []

    class Client:
        def get_secret_value(self, SecretId: str) -> dict:  # noqa: N803
            return {"SecretString": f"value of {SecretId}"}

    import boto3

    monkeypatch.setattr(boto3, "client", lambda name, config=None: made.append((name, config)) or Client())
    settings = resolve_secrets(Settings(receipt_secret_arn="arn-of-receipt"))
    assert settings.receipt_secret == "value of arn-of-receipt"
    ((name, config),) = made
    assert name == "secretsmanager" and config.retries == dict(CLIENT_RETRIES) and config.read_timeout == 2
