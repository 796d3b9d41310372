"""The Mns-open OpenAPI's authorization, action by action, over `mnsd.request.api.handle` and a fresh embedded engine:
each action is `mns:{Action}` on the resource the API documents, decided by the same policies as the XML API; and
its signatures' refusals (signed by Alibaba's own signers: the core SDK's v1 composer, the Tea client's ACS3)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest

from local_runtime.dispatch import match_route
from mnsd.access.keys import AccessKey
from mnsd.access.signature_rpc import v1_signature, v1_string_to_sign
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.request import api
from tests.support.openapi_calls import handle, now_iso, v1
from tests.support.signers import openapi_acs3_headers, openapi_v1_query
from tests.unit.access_calls import ACCOUNT, OTHER, ROOT, ROUTES, World, policy, resource

# action -> (its parameters in the world, the resource path it is authorized on)
ACTIONS = {
    "CreateQueue": ({"QueueName": "q2"}, "/queues/q2"),
    "DeleteQueue": ({"QueueName": "q2"}, "/queues/q2"),
    "SetQueueAttributes": ({"QueueName": "q", "DelaySeconds": "1"}, "/queues/q"),
    "GetQueueAttributes": ({"QueueName": "q"}, "/queues/q"),
    "ListQueue": ({}, "/queues"),
    "CreateTopic": ({"TopicName": "t2"}, "/topics/t2"),
    "DeleteTopic": ({"TopicName": "t2"}, "/topics/t2"),
    "SetTopicAttributes": ({"TopicName": "t", "MaxMessageSize": "2048"}, "/topics/t"),
    "GetTopicAttributes": ({"TopicName": "t"}, "/topics/t"),
    "ListTopic": ({}, "/topics"),
    "Subscribe": (
        {"TopicName": "t", "SubscriptionName": "s2", "PushType": "queue", "Endpoint": "q"},
        "/topics/t/subscriptions/s2",
    ),
    "Unsubscribe": ({"TopicName": "t", "SubscriptionName": "s2"}, "/topics/t/subscriptions/s2"),
    "SetSubscriptionAttributes": (
        {"TopicName": "t", "SubscriptionName": "s", "NotifyStrategy": "BACKOFF_RETRY"},
        "/topics/t/subscriptions/s",
    ),
    "GetSubscriptionAttributes": ({"TopicName": "t", "SubscriptionName": "s"}, "/topics/t/subscriptions/s"),
    "ListSubscriptionByTopic": ({"TopicName": "t"}, "/topics/t/subscriptions"),
    "TagResources": ({"ResourceType": "queue", "ResourceId.1": "q", "Tag.1.Key": "k", "Tag.1.Value": "v"}, "/queues/q"),
    "UntagResources": ({"ResourceType": "topic", "ResourceId.1": "t", "TagKey.1": "k"}, "/topics/t"),
    "GetAccountAttributes": ({}, "/"),
    "SetAccountAttributes": ({"LogEnabled": "false"}, "/"),
    "GetEndpointAttribute": ({"EndpointType": "public"}, "/"),
    "EnableEndpoint": ({"EndpointType": "public"}, "/"),
    "AuthorizeEndpointAcl": ({"EndpointType": "public", "AclStrategy": "allow", "CidrList": "0.0.0.0/0"}, "/"),
    "RevokeEndpointAcl": ({"EndpointType": "public", "AclStrategy": "allow", "CidrList": "0.0.0.0/0"}, "/"),
}


def acs3(
    world: World,
    key: AccessKey,
    action: str,
    query: dict[str, str],
    body: bytes = b"",
    leave_out: tuple[str, ...] = (),
    **changed: str,
) -> tuple[int, dict]:
    """A POST signed ACS3-HMAC-SHA256 by the Tea client's `get_authorization`; the headers in `leave_out` left out of
    the signature, `changed` headers set after signing."""
    headers = openapi_acs3_headers(
        (key.key_id, key.secret), "127.0.0.1:8080", action, query, body, leave_out, **{"x-acs-date": now_iso(world)}
    )
    sent = {name.lower(): value for name, value in {**headers, **changed}.items()}  # as the front end gives them
    return handle(world, HttpRequest("POST", "/", urlencode(query), sent, body))


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_each_action_is_its_ram_action_on_its_documented_resource(world, action):
    params, path = ACTIONS[action]
    allowed = world.key(f"ALLOW{action.upper()}", policy(("Allow", [f"mns:{action}"], [resource(path)])))
    status, body = v1(world, allowed, action, params)
    assert status == 200, body
    elsewhere = world.key(f"ELSE{action.upper()}", policy(("Allow", [f"mns:{action}"], [resource("/queues/other")])))
    status, body = v1(world, elsewhere, action, params)
    assert (status, body["Code"]) == (403, "Forbidden.RAM")
    assert f"mns:{action} on resource {resource(path)}" in body["Message"]
    denied = world.key(
        f"DENY{action.upper()}", policy(("Allow", ["mns:*"], ["*"]), ("Deny", [f"mns:{action}"], [resource(path)]))
    )
    assert v1(world, denied, action, params)[1]["Code"] == "Forbidden.RAM"


def test_tagging_two_resources_needs_the_action_on_each(world):
    only_q = world.key("TAGQ", policy(("Allow", ["mns:TagResources"], [resource("/queues/q")])))
    params = {"ResourceType": "queue", "ResourceId.1": "q", "ResourceId.2": "q3", "Tag.1.Key": "a", "Tag.1.Value": "b"}
    status, body = v1(world, only_q, "TagResources", params)
    assert (status, body["Code"]) == (403, "Forbidden.RAM") and "/queues/q3" in body["Message"]


def test_another_account_needs_a_grant_at_the_owners_host(world):
    status, body = v1(
        world,
        world.keys.keys["OTHERROOT"],
        "GetQueueAttributes",
        {"QueueName": "q"},
        host=f"{ACCOUNT}.mns.localhost:8080",
    )
    assert (status, body["Code"]) == (403, "Forbidden.RAM")
    status, body = v1(world, world.keys.keys["OTHERROOT"], "ListQueue", {})
    assert status == 200 and body["Data"]["Total"] == 0  # its own account: empty
    assert OTHER != ACCOUNT


def test_the_v1_signature_is_alibabas_documented_example():
    params = {
        "AccessKeyId": "testid",
        "Action": "DescribeRegions",
        "Format": "XML",
        "SignatureMethod": "HMAC-SHA1",
        "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
        "SignatureVersion": "1.0",
        "Timestamp": "2016-02-23T12:46:24Z",
        "Version": "2014-05-26",
    }
    assert v1_signature("testsecret", v1_string_to_sign("GET", params)) == "OLeaidS1JvxuMvnyHOwuJ+uX5qY="


def test_the_signatures_refusals(world):
    status, body = v1(world, AccessKey(ACCOUNT, ROOT.key_id, "wrong"), "ListQueue", {})
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    status, body = v1(world, AccessKey(ACCOUNT, "NOSUCH", "x"), "ListQueue", {})
    assert (status, body["Code"]) == (404, "InvalidAccessKeyId.NotFound")
    stale = datetime.fromtimestamp(world.clock.now() - 16 * 60, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert v1(world, ROOT, "ListQueue", {}, Timestamp=stale)[1]["Code"] == "InvalidTimeStamp.Expired"
    assert v1(world, ROOT, "ListQueue", {}, Timestamp="yesterday")[1]["Code"] == "InvalidTimeStamp.Format"
    assert v1(world, ROOT, "ListQueue", {}, SignatureNonce="n-1")[0] == 200
    assert v1(world, ROOT, "ListQueue", {}, SignatureNonce="n-1")[1]["Code"] == "SignatureNonceUsed"
    assert (
        v1(world, world.keys.keys["OTHERROOT"], "ListQueue", {}, SignatureNonce="n-1")[0] == 200
    )  # a nonce is per key
    assert acs3(world, ROOT, "ListQueue", {"PageSize": "5"})[0] == 200
    assert acs3(world, ROOT, "ListQueue", {}, **{"x-acs-action": "ListTopic"})[1]["Code"] == "SignatureDoesNotMatch"
    assert acs3(world, ROOT, "ListQueue", {}, **{"x-acs-date": "2020-01-01T00:00:00Z"})[1]["Code"] == (
        "SignatureDoesNotMatch"
    )
    assert acs3(world, ROOT, "NoSuchAction", {})[1]["Code"] == "InvalidAction.NotFound"
    assert acs3(world, ROOT, "ListQueue", {}, **{"x-acs-version": "2015-06-06"})[1]["Code"] == "InvalidVersion"
    status, body = acs3(world, ROOT, "CreateEventRule", {"ProductName": "oss", "RuleName": "r"})
    assert (status, body["Code"]) == (400, "OperationNotSupported")


def test_errors_and_answers_are_json_envelopes(world):
    status, body = v1(world, ROOT, "GetQueueAttributes", {"QueueName": "missing"})
    assert (status, body["Code"], body["Success"]) == (404, "QueueNotExist", False) and body["RequestId"]
    status, body = v1(
        world, ROOT, "GetQueueAttributes", {"QueueName": "q", "RegionId": "cn-hangzhou", "ClientToken": "x"}
    )
    assert (status, body["Code"], body["Success"], body["Status"]) == (200, 200, True, "Success")
    assert body["Data"]["DlqPolicy"]["MaxReceiveCount"] == "0"
    status, body = v1(world, ROOT, "CreateQueue", {"QueueName": "q4", "EnableSSE": "true"})
    assert (status, body["Code"]) == (400, "InvalidArgument")
    status, body = v1(world, ROOT, "CreateQueue", {})
    assert (status, body["Code"]) == (400, "MissingParameter")
    status, body = v1(world, ROOT, "CreateQueue", {"QueueName": "q5", "DlqPolicy": "{not json"})
    assert (status, body["Code"]) == (400, "InvalidArgument")


def test_the_allow_list_admits_by_source_address_on_both_apis():
    world = World()
    acl = {"EndpointType": "public", "AclStrategy": "allow", "CidrList": "192.0.2.0/24,2001:db8::/32"}
    assert v1(world, ROOT, "AuthorizeEndpointAcl", acl)[0] == 200
    assert v1(world, ROOT, "ListQueue", {})[0] == 200  # from 192.0.2.10
    xml = world.call(ROOT, "GET", "/queues")  # no source address known: refused while a list stands
    assert (xml.status, xml.code) == (403, "AccessDenied")
    other = world.call(world.keys.keys["OTHERROOT"], "GET", "/queues")  # another account's endpoint is its own
    assert other.status == 200
    assert v1(world, ROOT, "RevokeEndpointAcl", acl)[0] == 200
    assert world.call(ROOT, "GET", "/queues").status == 200
    assert v1(world, ROOT, "DisableEndpoint", {"EndpointType": "public"})[0] == 200
    assert v1(world, ROOT, "ListTopic", {})[1]["Code"] == "AccessDenied"
    assert v1(world, ROOT, "GetEndpointAttribute", {"EndpointType": "public"})[1]["Data"]["EndpointEnabled"] is False
    assert v1(world, ROOT, "EnableEndpoint", {"EndpointType": "public"})[0] == 200
    assert v1(world, ROOT, "ListTopic", {})[0] == 200


def test_the_endpoint_state_matches_addresses():
    from mnsd.control.endpoint_acl import AclEntry, EndpointState

    state = EndpointState(True, (AclEntry("10.0.0.0/8", "allow", 0), AclEntry("2001:db8::/32", "allow", 0)))
    assert state.admits("10.1.2.3") and state.admits("::ffff:10.1.2.3") and state.admits("2001:db8::1")
    assert not state.admits("11.0.0.1") and not state.admits(None) and not state.admits("not an address")
    assert EndpointState(True, ()).admits(None)
    assert not EndpointState(False, ()).admits("10.1.2.3")


def test_a_queues_policy_shares_it_with_another_account_as_on_the_xml_api():
    world = World()
    grant = {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"RAM": [f"acs:ram::{OTHER}:root"]},
                "Action": ["mns:GetQueueAttributes"],
                "Resource": [resource("/queues/q")],
            }
        ],
    }
    body = f"<Queue><Policy>{json.dumps(grant)}</Policy></Queue>"
    assert world.call(ROOT, "PUT", "/queues/q?metaoverride=true", body=body).status == 204
    other, owner_host = world.keys.keys["OTHERROOT"], f"{ACCOUNT}.mns.localhost:8080"
    status, answer = v1(world, other, "GetQueueAttributes", {"QueueName": "q"}, host=owner_host)
    assert status == 200 and answer["Data"]["QueueName"] == "q"
    assert v1(world, other, "SetQueueAttributes", {"QueueName": "q"}, host=owner_host)[1]["Code"] == "Forbidden.RAM"
    assert v1(world, other, "ListQueue", {}, host=owner_host)[1]["Code"] == "Forbidden.RAM"
    xml = world.call(other, "GET", "/queues/q", host=owner_host)  # the XML API decides alike
    assert xml.status == 200


def test_an_openapi_call_by_get_is_refused_in_json(world):
    query = openapi_v1_query((ROOT.key_id, ROOT.secret), "ListQueue", {}, Timestamp=now_iso(world))
    route_name, _, _ = match_route(ROUTES, "GET", "/")
    response = api.handle(
        route_name, HttpRequest("GET", "/", urlencode(query), {"host": "127.0.0.1:8080"}), world.services
    )
    assert (response.status, json.loads(response.body)["Code"]) == (400, "UnsupportedHTTPMethod")
    xml = world.call(ROOT, "GET", "/?accountmeta=true")  # the XML API's GetAccountAttributes is served as before
    assert xml.status == 200


def test_list_filters_by_type_and_tag(world):
    assert v1(world, ROOT, "ListTopic", {"TopicType": "fifo"})[1]["Data"]["Total"] == 0
    assert v1(world, ROOT, "ListTopic", {"TopicType": "normal"})[1]["Data"]["Total"] >= 1
    assert v1(world, ROOT, "ListQueue", {"QueueType": "fifo"})[1]["Data"]["Total"] == 0
    assert v1(world, ROOT, "ListQueue", {"Tag.1.Key": "no-such", "Tag.1.Value": "x"})[1]["Data"]["Total"] == 0


def _queue_is_there(world: World) -> bool:
    return v1(world, ROOT, "GetQueueAttributes", {"QueueName": "q"})[0] == 200


def test_an_acs3_signature_must_cover_the_action_the_version_and_the_host():
    """Alibaba's V3 rule: every common header present (`x-acs-*`) and `host` are signed. A signature that leaves
    out the action header cannot have it added: signed to read a queue, it does not delete it."""
    world = World()
    added = {"x-acs-action": "DeleteQueue"}
    status, body = acs3(world, ROOT, "GetQueueAttributes", {"QueueName": "q"}, leave_out=("x-acs-action",), **added)
    assert (status, body["Code"]) == (400, "IncompleteSignature") and "x-acs-action" in body["Message"]
    assert _queue_is_there(world)
    query = {"Action": "GetQueueAttributes", "QueueName": "q"}  # the action signed in the query: the header differs
    status, body = acs3(world, ROOT, "GetQueueAttributes", query, leave_out=("x-acs-action",), **added)
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    assert _queue_is_there(world)
    status, body = acs3(world, ROOT, "ListQueue", {}, leave_out=("host",), host=f"{OTHER}.mns.localhost:8080")
    assert (status, body["Code"]) == (400, "IncompleteSignature") and "host" in body["Message"]
    status, body = acs3(world, ROOT, "ListQueue", {}, leave_out=("x-acs-version",), **{"x-acs-version": "2022-01-19"})
    assert (status, body["Code"]) == (400, "IncompleteSignature") and "x-acs-version" in body["Message"]
    assert acs3(world, ROOT, "ListQueue", {})[0] == 200  # everything signed: served


def test_an_acs3_form_body_is_read_only_under_a_signed_content_type():
    world = World()
    form = b"QueueName=q"
    typed = {"content-type": "application/x-www-form-urlencoded"}
    status, body = acs3(world, ROOT, "GetQueueAttributes", {}, form, **typed)
    assert (status, body["Code"]) == (400, "IncompleteSignature") and "content-type" in body["Message"]
    status, body = acs3(world, ROOT, "GetQueueAttributes", {}, form, **typed, leave_out=("content-type",))
    assert status == 400
    signed = openapi_acs3_headers(
        (ROOT.key_id, ROOT.secret),
        "127.0.0.1:8080",
        "GetQueueAttributes",
        {},
        form,
        **typed,
        **{"x-acs-date": now_iso(world)},
    )
    status, body = handle(world, HttpRequest("POST", "/", "", {k.lower(): v for k, v in signed.items()}, form))
    assert status == 200 and body["Data"]["QueueName"] == "q"


def test_a_v1_action_is_the_signed_parameter_never_the_unsigned_header():
    """v1 signs the parameters: a request signed for GetQueueAttributes with `x-acs-action: DeleteQueue` beside them
    is refused (the SDKs send the header equal to the parameter, which is served), and the queue stays."""
    world = World()
    read = {"QueueName": "q"}
    status, body = v1(world, ROOT, "GetQueueAttributes", read, unsigned={"x-acs-action": "DeleteQueue"})
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch") and "DeleteQueue" in body["Message"]
    assert _queue_is_there(world)
    status, body = v1(world, ROOT, "DeleteQueue", read, leave_out=("Action",), unsigned={"x-acs-action": "DeleteQueue"})
    assert (status, body["Code"]) == (400, "MissingParameter") and "Action" in body["Message"]
    assert _queue_is_there(world)
    status, body = v1(world, ROOT, "GetQueueAttributes", read, unsigned={"x-acs-version": "2015-06-06"})
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    sdk_headers = {"x-acs-action": "GetQueueAttributes", "x-acs-version": "2022-01-19"}
    assert v1(world, ROOT, "GetQueueAttributes", read, unsigned=sdk_headers)[0] == 200


def test_an_action_named_twice_differently_is_refused_under_either_signature():
    world = World()
    status, body = acs3(world, ROOT, "GetQueueAttributes", {"Action": "DeleteQueue", "QueueName": "q"})
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    assert _queue_is_there(world)
    assert acs3(world, ROOT, "GetQueueAttributes", {"Action": "GetQueueAttributes", "QueueName": "q"})[0] == 200


@pytest.mark.parametrize("signature", ["%C3%A9t%C3%A9", "%00%FF", "%F0%9F%98%80", "%C3%A9" * 300])
def test_a_v1_signature_of_any_bytes_is_a_signature_that_does_not_match(world, signature):
    query = openapi_v1_query((ROOT.key_id, ROOT.secret), "ListQueue", {}, Timestamp=now_iso(world))
    signed = urlencode(query)
    raw = signed.replace(urlencode({"Signature": query["Signature"]}), f"Signature={signature}")
    assert raw != signed
    status, body = handle(world, HttpRequest("POST", "/", raw, {"host": "127.0.0.1:8080"}))
    assert (status, body["Code"], body["Success"]) == (400, "SignatureDoesNotMatch", False)


def test_a_body_over_the_limit_is_refused_in_json_on_the_openapi_unread():
    """An OpenAPI call (told by its headers and query) whose body passes 256 KB: `InvalidArgument` in the OpenAPI's
    JSON envelope, from the pipeline (API Gateway's path) and from the local front end (before the body is read),
    on ACS3 (action in a header) and v1 (action in the query); an XML call's refusal stays XML."""
    world = World()
    big = b"QueueName=q&Tag=" + b"x" * 256 * 1024
    status, body = acs3(world, ROOT, "ListQueue", {}, big)
    assert (status, body["Code"], body["Success"]) == (400, "InvalidArgument", False) and body["RequestId"]
    query = openapi_v1_query((ROOT.key_id, ROOT.secret), "ListQueue", {}, Timestamp=now_iso(world))
    form = {"host": "127.0.0.1:8080", "content-type": "application/x-www-form-urlencoded"}
    status, body = handle(world, HttpRequest("POST", "/", urlencode(query), form, big))
    assert (status, body["Code"]) == (400, "InvalidArgument")
    refused = api.refuse(errors.InvalidArgument("too large"), "h", {"x-acs-action": "ListQueue"}, "/")
    assert json.loads(refused.body)["Code"] == "InvalidArgument" and refused.status == 400
    refused = api.refuse(errors.InvalidArgument("too large"), "h", form, f"/?{urlencode(query)}")
    assert json.loads(refused.body)["Code"] == "InvalidArgument"
    xml = api.refuse(errors.InvalidArgument("too large"), "h", {"content-type": "text/xml"}, "/?accountmeta=true")
    assert xml.body.startswith(b"<?xml") and xml.status == 400
