"""Hostile input on each plane, signed so it gets past authentication: JSON of any depth wherever the server parses
JSON from a request (a JSON-plane body, a message body in it, DirectMail/DM/DirectSMS/DYSMS, an OpenAPI DlqPolicy or
TenantRateLimitPolicy), and XML of hostile depth and entities, each answered with a 4xx in the plane's error shape,
on each engine."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.e2e.mns_open_clients import v1_call
from tests.support.hostile import JSON_VERSION, made
from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A

DEEP = 5000  # far past Python's recursion limit (1000), well within a request's size


def deep(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int = DEEP) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.fixture(scope="module")
def json_plane(endpoint) -> RawClient:
    return RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region="cn-hangzhou")


def json_call(client: RawClient, method: str, path: str, body: str | bytes):
    answer = client.request(
        method, path, body, headers={"x-mns-version": JSON_VERSION}, content_type="application/json;charset=utf-8"
    )
    return answer.status, json.loads(answer.body) if answer.body else {}


@pytest.fixture
def qname_made(raw_a):
    with made(raw_a, "queue") as name:
        yield name


@pytest.fixture
def tname_made(raw_a):
    with made(raw_a, "topic") as name:
        yield name


@pytest.mark.parametrize(
    "body",
    [deep(), deep_object(), '{"MessageBody": ' + deep() + "}", '{"Messages": [' + deep_object() + "]}"],
    ids=["array", "object", "message-body", "batch-entry"],
)
def test_deep_json_on_the_json_plane_is_an_invalid_argument(json_plane, qname_made, body):
    path = f"/queues/{qname_made}/messages"
    status, answer = json_call(json_plane, "POST", path, body)
    assert (status, answer.get("Code")) == (400, "InvalidArgument"), answer
    assert "nested deeper" in answer["Message"]


@pytest.mark.parametrize("attribute", ["DirectMail", "DM", "DirectSMS", "DYSMS"])
def test_deep_json_in_a_message_attribute_is_an_invalid_argument_on_both_planes(
    raw_a, json_plane, tname_made, mns_error, attribute
):
    path = f"/topics/{tname_made}/messages"
    xml = f"<Message><MessageBody>hi</MessageBody><MessageAttributes><{attribute}>{deep()}</{attribute}>"
    xml += "</MessageAttributes></Message>"
    mns_error(raw_a.request("POST", path, xml), 400, "InvalidArgument")
    as_text = json.dumps({"MessageBody": "hi", "MessageAttributes": {attribute: deep()}})
    status, answer = json_call(json_plane, "POST", path, as_text)
    assert (status, answer.get("Code")) == (400, "InvalidArgument"), answer


def test_xml_of_hostile_depth_and_entities_is_malformed(raw_a, qname_made, mns_error):
    path = f"/queues/{qname_made}/messages"
    nested = "<Message><MessageBody>x</MessageBody>" + "<a>" * 20000 + "</a>" * 20000 + "</Message>"
    assert raw_a.request("POST", path, nested).status < 500
    bomb = '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;">]>'
    mns_error(
        raw_a.request("POST", path, bomb + "<Message><MessageBody>&b;</MessageBody></Message>"), 400, "MalformedXML"
    )
    external = '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
    mns_error(
        raw_a.request("POST", path, external + "<Message><MessageBody>&e;</MessageBody></Message>"), 400, "MalformedXML"
    )


@pytest.mark.parametrize("parameter", ["DlqPolicy", "TenantRateLimitPolicy"])
def test_deep_json_in_an_openapi_parameter_is_an_invalid_argument(endpoint, parameter):
    name = f"hostile-{uuid.uuid4().hex[:10]}"
    status, answer = v1_call(
        endpoint, ACCOUNT_A[1], ACCOUNT_A[2], "CreateQueue", {"QueueName": name, parameter: deep_object()}
    )
    assert (status, answer.get("Code")) == (400, "InvalidArgument"), answer
    status, _ = v1_call(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], "GetQueueAttributes", {"QueueName": name})
    assert status == 404  # refused whole: no queue made


@pytest.mark.parametrize("element", ["Policy", "Alarms", "TenantRateLimitPolicy", "DlqPolicy"])
def test_deep_json_in_a_queue_attribute_on_the_xml_plane_is_an_invalid_argument(raw_a, qname_made, mns_error, element):
    body = f"<Queue><{element}>{deep_object()}</{element}></Queue>"
    mns_error(raw_a.request("PUT", f"/queues/{qname_made}?metaoverride=true", body), 400, "InvalidArgument")
