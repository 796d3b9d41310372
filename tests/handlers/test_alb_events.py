"""The route functions fed Application Load Balancer target-group events (`-c frontDoor=alb`, `mnsd.entry.alb`): the
same pipeline as API Gateway's events, the request as the client sent and signed it, ALB's answer shape."""

import base64
import hashlib
import json
from email.utils import formatdate

import pytest

from local_runtime.alb import alb_event, query_parameters
from local_runtime.dispatch import api_gateway_event, compile_routes
from mnsd.access.authentication import sign, string_to_sign
from mnsd.entry import alb
from mnsd.entry.lambda_handler import routed_request
from tests.handlers.lambda_events import EVENTS, KEY_ID, SECRET, invoke


def set_header(event: dict, name: str, value: str) -> None:
    if "multiValueHeaders" in event:
        event["multiValueHeaders"][name] = [value]
    else:
        event["headers"][name] = value


def alb_signed(name: str, path: str | None = None, query: str | None = None, signed_query: str | None = None) -> dict:
    """A recorded ALB event, signed now (V1, over the path and query the door rebuilds); with `path` or `query` (as
    sent, encoded) instead of the recorded ones, and signed over `signed_query` if given (a tampered request)."""
    event = json.loads((EVENTS / f"alb_{name}.json").read_text())
    if path is not None:
        event["path"] = path
    if query is not None:
        event.pop("queryStringParameters", None)
        event["multiValueQueryStringParameters"] = query_parameters(query)
    date = formatdate(usegmt=True)
    set_header(event, "date", date)
    body = alb.request_from_event(event).body
    if body:
        set_header(event, "content-md5", base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode())
    request = alb.request_from_event(event)
    if signed_query is not None:
        request = request.__class__(request.method, request.path, signed_query, request.headers, request.body)
    set_header(event, "authorization", f"MNS {KEY_ID}:{sign(SECRET, string_to_sign(request, date))}")
    return event


def test_recorded_alb_events_drive_the_route_functions(aws) -> None:
    created = invoke("put_queue", alb_signed("create_queue"))
    assert (created["statusCode"], created["statusDescription"]) == (201, "201 Created")
    # the event came with multi-value headers: the answer's are too (ALB reads no others then)
    assert "headers" not in created and created["multiValueHeaders"]["x-mns-request-id"][0]
    assert created["multiValueHeaders"]["Location"] == [
        "https://1000000000000001.mns.cn-hangzhou.aliyuncs.com/queues/orders"
    ]

    sent = invoke("post_messages", alb_signed("send_message"))  # a base64 body
    assert sent["statusCode"] == 201, sent["body"]

    received = invoke("get_messages", alb_signed("receive_message"))  # single-value headers and parameters
    assert (received["statusCode"], received["statusDescription"]) == (200, "200 OK")
    assert "multiValueHeaders" not in received and received["headers"]["x-mns-request-id"]
    assert "<MessageBody>aGVsbG8=</MessageBody>" in received["body"]


def test_the_signature_sees_the_query_as_sent_never_decoded(aws) -> None:
    invoke("put_queue", alb_signed("create_queue"))
    # `%30` is "0": the client signed the encoded form, and the operation reads the decoded one
    empty = invoke("get_messages", alb_signed("receive_message", query="waitseconds=%30"))
    assert (empty["statusCode"], "<Code>MessageNotExist</Code>" in empty["body"]) == (404, True), empty["body"]
    # signed over the decoded query, sent encoded: not what was signed
    forged = invoke(
        "get_messages", alb_signed("receive_message", query="waitseconds=%30", signed_query="waitseconds=0")
    )
    assert forged["statusCode"] == 403 and "<Code>SignatureDoesNotMatch</Code>" in forged["body"]


def test_the_signature_sees_the_path_as_sent_never_decoded(aws) -> None:
    invoke("put_queue", alb_signed("create_queue"))
    # the path signed as sent, `%64` in it: the queue is "orders" to the operation, "or%64ers" to the signature
    answer = invoke("get_messages", alb_signed("receive_message", path="/queues/or%64ers/messages"))
    assert answer["statusCode"] == 404 and "<Code>MessageNotExist</Code>" in answer["body"], answer["body"]
    forged = alb_signed("receive_message")
    forged["path"] = "/queues/or%64ers/messages"  # the same request, signed over the decoded path
    refused = invoke("get_messages", forged)
    assert refused["statusCode"] == 403 and "<Code>SignatureDoesNotMatch</Code>" in refused["body"]


@pytest.mark.parametrize("path", ["/queues/orders/extra/messages", "/queues//messages", "/queues/orders/messages/"])
def test_a_path_the_rule_takes_that_its_route_does_not_fit_is_answered_as_the_catch_all(aws, path) -> None:
    # ALB's `/queues/*/messages` takes these; API Gateway's `/queues/{queue}/messages` does not (its `$default` does)
    invoke("put_queue", alb_signed("create_queue"))
    invoke("post_messages", alb_signed("send_message"))
    answer = invoke("get_messages", alb_signed("receive_message", path=path))
    assert answer["statusCode"] == 400 and "<Code>InvalidRequestURL</Code>" in answer["body"], answer["body"]
    assert answer["headers"]["x-mns-request-id"]
    still = invoke("get_messages", alb_signed("receive_message"))
    assert still["statusCode"] == 200  # nothing was received by the refused calls


def test_the_client_address_is_the_one_alb_appended() -> None:
    event = json.loads((EVENTS / "alb_send_message.json").read_text())
    assert alb.request_from_event(event).source_ip == "203.0.113.7"  # not the 198.51.100.1 the client claimed


# What a client may send, hostile or not: each reaches the route (or none) the HTTP API would give it, with the
# same path, query, body and path parameters.
TARGETS = [
    ("GET", "/queues/orders/messages?waitseconds=%30&numOfMessages=2"),
    ("GET", "/queues/or%64ers/messages"),
    ("GET", "/queues/../topics/t"),
    ("GET", "/%71ueues/orders"),
    ("PUT", "/queues/a%2Fb"),
    ("GET", "/queues/\u00e9t\u00e9/messages"),
    ("DELETE", "/queues/q/messages?ReceiptHandle=a%2Bb%3D%3D"),
    ("GET", "/queues/q/receivers/messages"),
    ("GET", "/topics/t/subscriptions/messages?metrics=hourly"),
    ("POST", "/?Action=CreateQueue&Signature=a%2Fb%3D"),
    ("PATCH", "/queues/q"),
    ("GET", "/queues/q/messages/"),
    ("GET", "//queues"),
]


@pytest.mark.parametrize(("method", "target"), TARGETS)
@pytest.mark.parametrize("body", [b"", b"<Message/>", b"\xff\x00binary"])
def test_the_alb_door_gives_the_pipeline_what_the_http_api_door_gives(method, target, body) -> None:
    headers = {"host": "1000000000000001.mns.localhost", "x-mns-version": "2015-06-06", "content-type": "text/xml"}
    api_route, api_event = api_gateway_event(method, target, headers, body, compile_routes())
    alb_route, event = alb_event(method, target, list(headers.items()), body)
    by_api, by_alb = routed_request(api_route, api_event), routed_request(alb_route, event)
    assert by_alb[0] == by_api[0]
    fields = ("method", "path", "raw_query", "body", "path_params")
    assert {f: getattr(by_alb[1], f) for f in fields} == {f: getattr(by_api[1], f) for f in fields}
    assert {k: v for k, v in by_alb[1].headers.items() if not k.startswith("x-forwarded-")} == headers
