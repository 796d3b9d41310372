"""The Lambda entry points of `functions/`, fed API Gateway (HTTP API 2.0) events as AWS delivers them."""

import base64
import hashlib
import importlib
import json
from email.utils import formatdate
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from local_runtime.tables import create_tables
from mnsd import services
from mnsd.auth import sign, string_to_sign
from mnsd.lambda_handler import request_from_event
from mnsd.settings import Settings

EVENTS = Path(__file__).resolve().parent.parent / "events"
ACCOUNT, KEY_ID, SECRET = "1000000000000001", "EVENTKEY", "EVENTSECRET"


class Context:
    function_name = "mns-test"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-test"
    aws_request_id = "test"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch):
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "MNS_CREDENTIALS": f"{ACCOUNT}:{KEY_ID}:{SECRET}",
        "MNS_RECEIPT_SECRET": "event-test-secret",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "MNS",
    }.items():
        monkeypatch.setenv(name, value)
    services.default_services.cache_clear()
    services.get_settings.cache_clear()
    with mock_aws():
        create_tables(boto3.client("dynamodb"), Settings())
        yield
    services.default_services.cache_clear()
    services.get_settings.cache_clear()


def signed_event(name: str) -> dict:
    event = json.loads((EVENTS / f"{name}.json").read_text())
    body = request_from_event(event).body
    headers = event["headers"]
    headers["date"] = formatdate(usegmt=True)
    if body:
        headers["content-md5"] = base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()
    request = request_from_event(event)
    headers["authorization"] = f"MNS {KEY_ID}:{sign(SECRET, string_to_sign(request, headers['date']))}"
    return event


def invoke(route: str, event: dict) -> dict:
    return importlib.import_module(f"functions.{route}").handler(event, Context())


def test_recorded_events_drive_the_route_functions(aws) -> None:
    created = invoke("put_queue", signed_event("create_queue"))
    assert created["statusCode"] == 201
    assert created["headers"]["Location"] == "https://1000000000000001.mns.cn-hangzhou.aliyuncs.com/queues/orders"
    assert created["headers"]["x-mns-request-id"]

    sent = invoke("post_messages", signed_event("send_message"))
    assert sent["statusCode"] == 201
    expected_md5 = hashlib.md5(b"aGVsbG8=").hexdigest().upper()
    assert f"<MessageBodyMD5>{expected_md5}</MessageBodyMD5>" in sent["body"]

    received = invoke("get_messages", signed_event("receive_message"))
    assert received["statusCode"] == 200
    assert "<MessageBody>aGVsbG8=</MessageBody>" in received["body"]
    assert "<Priority>3</Priority>" in received["body"]


def test_a_tampered_event_is_refused_in_the_mns_error_shape(aws) -> None:
    event = signed_event("create_queue")
    event["rawPath"] = "/queues/other"
    answer = invoke("put_queue", event)
    assert answer["statusCode"] == 403
    assert '<Error xmlns="http://mns.aliyuncs.com/doc/v1/">' in answer["body"]
    assert "<Code>SignatureDoesNotMatch</Code>" in answer["body"]


def test_unrouted_requests_get_an_mns_error_from_the_default_route(aws) -> None:
    event = signed_event("receive_message")
    event["routeKey"] = "$default"
    answer = invoke("not_found", event)
    assert answer["statusCode"] == 400
    assert "<Code>InvalidRequestURL</Code>" in answer["body"]
