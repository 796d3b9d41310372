"""The Lambda entry points' fixtures: the functions' environment, and a moto backend with the tables."""

import pytest

from tests.handlers.lambda_events import ENVIRONMENT, lambda_backend


@pytest.fixture
def aws_environment(aws_credentials: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The functions' environment (keys and receipt secret in plain variables, as locally)."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def aws(aws_environment: None):
    with lambda_backend():
        yield
