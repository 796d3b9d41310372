"""The Lambda entry points of `functions/`, fed API Gateway (HTTP API 2.0) events as AWS delivers them."""

import base64
import hashlib
import http.client
import json
import re
import time
from email.utils import formatdate, parsedate_to_datetime

import pytest

from local_runtime.server import LocalServer
from mnsd.access.authentication import sign, string_to_sign
from mnsd.entry.lambda_handler import request_from_event
from mnsd.ground.settings import Settings
from tests.handlers.lambda_events import ACCOUNT, EVENTS, KEY_ID, SECRET, invoke, lambda_backend
from tests.support.signers import V4Request, V4Signer


def signed_event(
    name: str, query: str | None = None, received_ago: float | None = None, path: str | None = None
) -> dict:
    """A recorded event, signed now; optionally with another query string or path, and stamped by API Gateway
    (`requestContext.timeEpoch`) `received_ago` seconds ago."""
    event = json.loads((EVENTS / f"{name}.json").read_text())
    if query is not None:
        event["rawQueryString"] = query
    if path is not None:
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
    if received_ago is not None:
        event["requestContext"]["timeEpoch"] = int((time.time() - received_ago) * 1000)
    body = request_from_event(event).body
    headers = event["headers"]
    headers["date"] = formatdate(usegmt=True)
    if body:
        headers["content-md5"] = base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()
    request = request_from_event(event)
    headers["authorization"] = f"MNS {KEY_ID}:{sign(SECRET, string_to_sign(request, headers['date']))}"
    return event


def v4_signed_event(name: str, region: str = "cn-hangzhou") -> dict:
    """A recorded event, signed now with V4 (MNS4-HMAC-SHA256) for `region`, as the Java SDK 2.0 signs it."""
    event = json.loads((EVENTS / f"{name}.json").read_text())
    body = request_from_event(event).body
    headers = event["headers"]
    headers["date"] = formatdate(usegmt=True)
    if body:
        headers["content-md5"] = base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()
    query = event.get("rawQueryString")
    resource = event["rawPath"] + (f"?{query}" if query else "")
    signed = V4Request(event["requestContext"]["http"]["method"], resource, parsedate_to_datetime(headers["date"]))
    signed.headers = {k: v for k, v in headers.items() if k != "authorization"}
    headers["authorization"] = V4Signer().authorization(KEY_ID, SECRET, signed, region)
    return event


def changed_after_signing(name: str, **fields: str) -> dict:
    """The recorded event `name`, signed, then with `fields` set at its top level."""
    return {**signed_event(name), **fields}


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


def test_a_poll_reaching_its_function_late_leaves_the_message_visible(aws) -> None:
    # API Gateway stamped the request 28.5 s ago (a cold start's init and secret reads): a message claimed
    # now would be answered after the platform's 30 s, into a 504, and stay invisible.
    invoke("put_queue", signed_event("create_queue"))
    invoke("post_messages", signed_event("send_message"))
    late = invoke("get_messages", signed_event("receive_message", received_ago=28.5))
    assert late["statusCode"] == 404
    assert "<Code>MessageNotExist</Code>" in late["body"]
    on_time = invoke("get_messages", signed_event("receive_message", received_ago=0.1))
    assert on_time["statusCode"] == 200
    assert "<DequeueCount>1</DequeueCount>" in on_time["body"]


def test_the_long_poll_ends_before_api_gateway_gives_up(aws) -> None:
    invoke("put_queue", signed_event("create_queue"))
    started = time.monotonic()
    answer = invoke("get_messages", signed_event("receive_message", query="waitseconds=30", received_ago=27))
    assert answer["statusCode"] == 404
    assert time.monotonic() - started < 3  # 24 s after the request arrived, not 24 s after the function started


def test_v4_signed_events_drive_the_route_functions(aws) -> None:
    """The deployed path (API Gateway's event, the route's function) with V4 signatures: the stack's region only."""
    assert invoke("put_queue", v4_signed_event("create_queue"))["statusCode"] == 201
    assert invoke("post_messages", v4_signed_event("send_message"))["statusCode"] == 201
    received = invoke("get_messages", v4_signed_event("receive_message"))
    assert received["statusCode"] == 200 and "<MessageBody>aGVsbG8=</MessageBody>" in received["body"]
    elsewhere = invoke("get_messages", v4_signed_event("receive_message", region="eu-west-1"))
    assert elsewhere["statusCode"] == 403 and "<Code>SignatureDoesNotMatch</Code>" in elsewhere["body"]


def test_a_tampered_event_is_refused_in_the_mns_error_shape(aws) -> None:
    answer = invoke("put_queue", changed_after_signing("create_queue", rawPath="/queues/other"))
    assert answer["statusCode"] == 403
    assert '<Error xmlns="http://mns.aliyuncs.com/doc/v1">' in answer["body"]
    assert "<Code>SignatureDoesNotMatch</Code>" in answer["body"]
    # HostId names the endpoint with its scheme, as the live service writes it.
    assert "<HostId>https://1000000000000001.mns.cn-hangzhou.aliyuncs.com</HostId>" in answer["body"]


def test_unrouted_requests_get_an_mns_error_from_the_default_route(aws) -> None:
    answer = invoke("not_found", changed_after_signing("receive_message", routeKey="$default"))
    assert answer["statusCode"] == 400
    assert "<Code>InvalidRequestURL</Code>" in answer["body"]


@pytest.mark.parametrize("path", ["//queues/orders/messages", "/queues//orders/messages"])
def test_an_empty_path_segment_is_an_invalid_url_whatever_the_route(aws, path) -> None:
    # Should API Gateway route such a path (signed as sent) to a function, the function refuses it.
    invoke("put_queue", signed_event("create_queue"))
    invoke("post_messages", signed_event("send_message"))
    answer = invoke("get_messages", signed_event("receive_message", path=path))
    assert answer["statusCode"] == 400
    assert "<Code>InvalidRequestURL</Code>" in answer["body"]
    assert answer["headers"]["x-mns-request-id"]


# Values that differ from call to call (ids, times, handles): compared by presence, not value.
VARYING = re.compile(r"<(MessageId|ReceiptHandle|RequestId|EnqueueTime|FirstDequeueTime|NextVisibleTime)>[^<]+</\1>")
PER_RESPONSE_HEADERS = {"x-mns-request-id", "date", "server", "content-length", "connection"}


def comparable(status: int, headers: dict[str, str], body: str) -> tuple[int, dict[str, str], str]:
    kept = {name.lower(): value for name, value in headers.items() if name.lower() not in PER_RESPONSE_HEADERS}
    return status, kept, VARYING.sub(r"<\1/>", body)


def conversation() -> list[tuple[str | None, dict]]:
    """Calls in order, as (route, event): the recorded events, repeats, a forged one and an unrouted one."""
    forged = signed_event("create_queue")
    forged["rawPath"] = "/queues/other"
    unrouted = signed_event("receive_message")
    unrouted["rawPath"] = "/nothing/here"
    return [
        ("put_queue", signed_event("create_queue")),
        ("put_queue", signed_event("create_queue")),
        ("post_messages", signed_event("send_message")),
        ("get_messages", signed_event("receive_message")),
        ("get_messages", signed_event("receive_message")),
        ("put_queue", forged),
        (None, unrouted),
    ]


def over_http(server: LocalServer, event: dict) -> tuple[int, dict[str, str], str]:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=10)
    target = event["rawPath"] + (f"?{event['rawQueryString']}" if event["rawQueryString"] else "")
    connection.request(
        event["requestContext"]["http"]["method"], target, request_from_event(event).body, event["headers"]
    )
    response = connection.getresponse()
    answer = response.status, dict(response.getheaders()), response.read().decode("utf-8")
    connection.close()
    return answer


def test_the_lambda_handlers_answer_as_the_local_server_does(aws_environment: None) -> None:
    on_lambda = []
    with lambda_backend():
        for route, event in conversation():
            answer = invoke(route or "not_found", event)
            on_lambda.append(comparable(answer["statusCode"], answer["headers"], answer["body"]))

    # The same calls, over HTTP, to the local server (its own moto backend, the same keys and region).
    server = LocalServer(
        Settings(credentials=f"{ACCOUNT}:{KEY_ID}:{SECRET}", receipt_secret="event-test-secret"), port=0, quiet=True
    ).start_background()
    try:
        local = [comparable(*over_http(server, event)) for _, event in conversation()]
    finally:
        server.stop()

    assert [status for status, _, _ in on_lambda] == [201, 204, 201, 200, 404, 403, 400]
    assert local == on_lambda


def openapi_event(action: str, body: str | None = None) -> dict:
    """The recorded OpenAPI call (`POST /`, a form body) as `action`, signed v1 now by the core SDK's composer."""
    from urllib.parse import parse_qsl, urlencode

    from aliyunsdkcore.auth.composer import rpc_signature_composer

    event = json.loads((EVENTS / "openapi_create_queue.json").read_text())
    if body is not None:
        event["body"] = body
    url, _ = rpc_signature_composer.get_signed_url(
        {"Action": action, "Version": "2022-01-19"}, KEY_ID, SECRET, "JSON", "POST", dict(parse_qsl(event["body"]))
    )
    event["rawQueryString"] = urlencode(parse_qsl(url.partition("?")[2], keep_blank_values=True))
    return event


def test_the_openapi_is_served_by_the_post_account_function_with_its_source_address(aws) -> None:
    created = invoke("post_account", openapi_event("CreateQueue"))
    assert created["statusCode"] == 200 and json.loads(created["body"])["Success"] is True, created["body"]
    read = json.loads(invoke("post_account", openapi_event("GetQueueAttributes", "QueueName=orders"))["body"])
    assert (read["Data"]["VisibilityTimeout"], read["Data"]["Tags"]) == (60, [{"TagKey": "team", "TagValue": "shop"}])
    # the event's sourceIp (203.0.113.7) is outside the list: refused, on the XML API's functions too
    acl = "EndpointType=public&AclStrategy=allow&CidrList=198.51.100.0/24"
    assert invoke("post_account", openapi_event("AuthorizeEndpointAcl", acl))["statusCode"] == 200
    refused = invoke("post_account", openapi_event("GetQueueAttributes", "QueueName=orders"))
    assert (refused["statusCode"], json.loads(refused["body"])["Code"]) == (403, "AccessDenied")
    xml = invoke("put_queue", signed_event("create_queue"))
    assert xml["statusCode"] == 403 and "<Code>AccessDenied</Code>" in xml["body"]
    assert invoke("post_account", openapi_event("RevokeEndpointAcl", acl))["statusCode"] == 200
    assert invoke("put_queue", signed_event("create_queue"))["statusCode"] == 204  # the same queue, made by either API
