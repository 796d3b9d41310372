"""What the Lambda entry points' tests share: the functions' environment and keys, a moto backend with the
tables, a Lambda context, and a route's function invoked with an event."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from pathlib import Path

import boto3
from moto import mock_aws

from local_runtime.tables import create_tables
from mnsd import services
from mnsd.ground.settings import Settings

EVENTS = Path(__file__).resolve().parent.parent / "events"
ACCOUNT, KEY_ID, SECRET = "1000000000000001", "EVENTKEY", "EVENTSECRET"
# The functions' environment (keys and receipt secret in plain variables, as locally).
ENVIRONMENT = {
    "MNS_CREDENTIALS": f"{ACCOUNT}:{KEY_ID}:{SECRET}",
    "MNS_RECEIPT_SECRET": "event-test-secret",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "MNS",
}


class Context:
    function_name = "mns-test"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-test"
    aws_request_id = "test"


@contextlib.contextmanager
def lambda_backend() -> Iterator[None]:
    """A moto backend with the tables, and the functions' services made afresh from the environment."""
    services.default_services.cache_clear()
    services.get_settings.cache_clear()
    with mock_aws():
        create_tables(boto3.client("dynamodb"), Settings())
        yield
    services.default_services.cache_clear()
    services.get_settings.cache_clear()


def invoke(route: str, event: dict) -> dict:
    return importlib.import_module(f"functions.{route}").handler(event, Context())
