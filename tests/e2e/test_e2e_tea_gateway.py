"""Alibaba's Tea gateway for MNS (PyPI `alibabacloud-gateway-mns`, which signs V4 only and refuses V2) driving the
data plane through the generic Tea OpenAPI client, on each engine: the V4 path of a real client from PyPI."""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

import pytest
from alibabacloud_tea_openapi.client import Client
from alibabacloud_tea_openapi.models import Config, OpenApiRequest
from alibabacloud_tea_util.models import RuntimeOptions
from Tea.exceptions import TeaException

from tests.e2e.tea_clients import gateway, params
from tests.support.servers import ACCOUNT_A

NS = "{http://mns.aliyuncs.com/doc/v1}"


class TeaMns:
    """Calls as a Tea product SDK makes them: `call_api` with V4 signing and the MNS gateway as its interceptor."""

    def __init__(self, endpoint: str, key_id: str, secret: str, region: str = "cn-hangzhou") -> None:
        host = endpoint.split("://", 1)[1]
        config = Config(
            access_key_id=key_id,
            access_key_secret=secret,
            endpoint=host,
            region_id=region,
            protocol="http",
            signature_version="v4",
        )
        self.client = Client(config)
        self.client._spi = gateway()
        self.client._product_id = "mns"

    def call(self, action: str, method: str, path: str, body: dict | None = None, query: dict | None = None) -> dict:
        request = OpenApiRequest(body=body, query=query or {})
        return self.client.call_api(
            params(action, "2015-06-06", method, path, "xml", "string"), request, RuntimeOptions()
        )


def element(response: dict, tag: str) -> str:
    found = ET.fromstring(response["body"]).find(NS + tag)
    assert found is not None, response["body"]
    return found.text or ""


@pytest.fixture
def tea(endpoint) -> TeaMns:
    return TeaMns(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


def test_the_tea_gateway_sends_receives_and_deletes_signing_v4(tea):
    q = "tea-" + uuid.uuid4().hex[:16]
    assert tea.call("CreateQueue", "PUT", f"/queues/{q}", {"Queue": {"VisibilityTimeout": 30}})["statusCode"] == 201
    sent = tea.call("SendMessage", "POST", f"/queues/{q}/messages", {"Message": {"MessageBody": "hello tea"}})
    assert sent["statusCode"] == 201 and element(sent, "MessageId")
    received = tea.call("ReceiveMessage", "GET", f"/queues/{q}/messages", query={"waitseconds": "1"})
    assert element(received, "MessageBody") == "hello tea"
    handle = element(received, "ReceiptHandle")
    deleted = tea.call("DeleteMessage", "DELETE", f"/queues/{q}/messages", query={"ReceiptHandle": handle})
    assert deleted["statusCode"] == 204
    attributes = tea.call("GetQueueAttributes", "GET", f"/queues/{q}")
    assert element(attributes, "QueueName") == q and element(attributes, "ActiveMessages") == "0"
    assert tea.call("DeleteQueue", "DELETE", f"/queues/{q}")["statusCode"] == 204


def test_the_tea_gateway_publishes_to_a_topic(tea):
    t, q = "teat-" + uuid.uuid4().hex[:16], "teaq-" + uuid.uuid4().hex[:16]
    tea.call("CreateQueue", "PUT", f"/queues/{q}")
    tea.call("CreateTopic", "PUT", f"/topics/{t}")
    endpoint = f"acs:mns:cn-hangzhou:{ACCOUNT_A[0]}:queues/{q}"
    subscription = {"Subscription": {"Endpoint": endpoint, "NotifyContentFormat": "SIMPLIFIED"}}
    assert tea.call("Subscribe", "PUT", f"/topics/{t}/subscriptions/s", subscription)["statusCode"] == 201
    published = tea.call("PublishMessage", "POST", f"/topics/{t}/messages", {"Message": {"MessageBody": "fan out"}})
    assert published["statusCode"] == 201
    received = tea.call("ReceiveMessage", "GET", f"/queues/{q}/messages", query={"waitseconds": "10"})
    assert element(received, "MessageBody") == "fan out"
    tea.call("DeleteTopic", "DELETE", f"/topics/{t}")
    tea.call("DeleteQueue", "DELETE", f"/queues/{q}")


@pytest.mark.parametrize(
    ("key", "path", "code", "status"),
    [
        (ACCOUNT_A[1:], "/queues/no-such-queue-tea/messages", "QueueNotExist", 404),
        ((ACCOUNT_A[1], "WRONG"), "/queues/any/messages", "SignatureDoesNotMatch", 403),
    ],
)
def test_the_tea_gateway_reads_our_errors(endpoint, key, path, code, status):
    """It asks for JSON (`accept: application/json`) and reads an error's `Code` from it."""
    with pytest.raises(TeaException) as refused:
        TeaMns(endpoint, *key).call("ReceiveMessage", "GET", path)
    assert refused.value.code == code
    assert refused.value.data["statusCode"] == status and refused.value.data["RequestId"]


def test_the_tea_gateway_in_another_region_is_refused(endpoint):
    with pytest.raises(TeaException) as refused:
        TeaMns(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region="eu-west-1").call("ListQueue", "GET", "/queues")
    assert refused.value.code == "SignatureDoesNotMatch"
    assert "region eu-west-1" in refused.value.message
