"""The push kinds of Alibaba's current API: each delivered where an AWS service stands behind it, the others refused
saying why (`mnsd.rpc.push_kinds`)."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.model.topics import HTTP, MAIL, QUEUE, SMS, parse_endpoint
from mnsd.rpc.push_kinds import endpoint_of
from tests.support.openapi_calls import v1
from tests.unit.access_calls import ROOT, World

REGION, ACCOUNT = "cn-hangzhou", "1000000000000001"


@pytest.mark.parametrize(
    ("push_type", "endpoint", "written", "kind"),
    [
        ("queue", "orders", f"acs:mns:{REGION}:{ACCOUNT}:queues/orders", QUEUE),
        ("http", "https://example.com/hook", "https://example.com/hook", HTTP),
        ("email", "a@example.com", "mail:directmail:a@example.com", MAIL),
        ("dm", "a@example.com", "mail:directmail:a@example.com", MAIL),
        ("alisms", "13800000000", "sms:directsms:13800000000", SMS),
        ("DYSMS", "anonymous", "sms:directsms:anonymous", SMS),
        ("Queue", f"acs:mns:{REGION}:{ACCOUNT}:queues/q", f"acs:mns:{REGION}:{ACCOUNT}:queues/q", QUEUE),  # kept
        ("email", "mail:directmail:a@example.com", "mail:directmail:a@example.com", MAIL),
    ],
)
def test_a_served_push_kind_is_delivered_as_the_xml_plane_s_endpoint(push_type, endpoint, written, kind):
    assert endpoint_of(push_type, endpoint, REGION, ACCOUNT) == written
    assert parse_endpoint(written, REGION, ACCOUNT).kind == kind


@pytest.mark.parametrize("push_type", ["fc", "eventbus", "mpush", "kafka", "carrier-pigeon"])
def test_a_push_kind_no_aws_service_serves_is_refused_saying_why(push_type):
    with pytest.raises(errors.EndpointInvalid) as refused:
        endpoint_of(push_type, "anything", REGION, ACCOUNT)
    assert f"Push kind {push_type} is not served" in refused.value.message


@pytest.mark.parametrize(
    ("endpoint", "instead"),
    [
        (f"acs:fc:{REGION}:{ACCOUNT}:functions/f", "a Lambda function by its ARN"),
        (f"ACS:EventBridge:{REGION}:{ACCOUNT}:eventbus/b", "an Amazon EventBridge bus by its ARN"),
        ("push:1234", "HTTP endpoint"),
    ],
)
def test_their_endpoints_on_the_xml_plane_are_refused_saying_why(endpoint, instead):
    with pytest.raises(errors.EndpointInvalid) as refused:
        parse_endpoint(endpoint, REGION, ACCOUNT)
    assert "is not served" in refused.value.message and instead in refused.value.message


def test_other_invalid_endpoints_keep_the_plain_refusal():
    with pytest.raises(errors.EndpointInvalid) as refused:
        parse_endpoint("just text", REGION, ACCOUNT)
    assert refused.value.message == errors.EndpointInvalid.default_message


@pytest.mark.parametrize(
    ("push_type", "endpoint", "kept"),
    [("dm", "a@example.com", "mail:directmail:a@example.com"), ("dysms", "anonymous", "sms:directsms:anonymous")],
)
def test_the_openapi_s_subscribe_serves_dm_and_dysms_and_refuses_fc_through_the_same_table(push_type, endpoint, kept):
    world = World()
    params = {"TopicName": "t", "SubscriptionName": "s2", "PushType": push_type, "Endpoint": endpoint}
    status, body = v1(world, ROOT, "Subscribe", params)
    assert status == 200, body
    status, body = v1(world, ROOT, "GetSubscriptionAttributes", {"TopicName": "t", "SubscriptionName": "s2"})
    assert body["Data"]["Endpoint"] == endpoint  # read back as given on this plane, delivered to its full form
    assert world.services.topics.get_subscription(ROOT.account_id, "t", "s2").attributes.endpoint == kept
    refused = {**params, "SubscriptionName": "s3", "PushType": "fc", "Endpoint": "acs:fc:cn-hangzhou:1:functions/f"}
    status, body = v1(world, ROOT, "Subscribe", refused)
    assert (status, body["Code"]) == (400, "EndpointInvalid") and "Push kind fc is not served" in body["Message"]
