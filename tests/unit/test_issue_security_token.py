"""IssueSecurityToken (`POST /?securitytoken=true`) and calls made with its credentials, through the request
pipeline (`mnsd.request.api.handle`) with an injected clock, and the Lambda handler's logs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from email.utils import formatdate

import pytest

from mnsd.access.authentication import sign, string_to_sign
from mnsd.access.keys import AccessKey
from mnsd.entry.lambda_handler import make_handler
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.ground.settings import Settings
from mnsd.model.policy import Policy
from mnsd.request import api
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
NS = "{http://mns.aliyuncs.com/doc/v1}"
START = 1_790_000_000.0
ONLY_SEND = Policy.parse(
    {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "mns:SendMessage", "Resource": "*"}]}
)


class Keys:
    def __init__(self, *keys: AccessKey) -> None:
        self.keys = {key.key_id: key for key in keys}

    def lookup(self, key_id: str) -> AccessKey | None:
        return self.keys.get(key_id)


@dataclass(frozen=True)
class Credentials:
    key_id: str
    secret: str
    token: str | None = None


ROOT = Credentials("ROOTKEY", "ROOTSECRET")
SENDER = Credentials("SENDERKEY", "SENDERSECRET")
ISSUER = Credentials("ISSUERKEY", "ISSUERSECRET")  # may send and issue tokens
SEND_AND_ISSUE = Policy.parse(
    {
        "Version": "1",
        "Statement": [{"Effect": "Allow", "Action": ["mns:SendMessage", "mns:IssueSecurityToken"], "Resource": "*"}],
    }
)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def services(clock: ManualClock) -> Services:
    keys = Keys(
        AccessKey(ACCOUNT, ROOT.key_id, ROOT.secret),
        AccessKey(ACCOUNT, SENDER.key_id, SENDER.secret, ONLY_SEND),
        AccessKey(ACCOUNT, ISSUER.key_id, ISSUER.secret, SEND_AND_ISSUE),
    )
    settings = Settings(credentials=f"{ACCOUNT}:{ROOT.key_id}:{ROOT.secret}", receipt_secret="unit-receipt-secret")
    return build_services(settings, clock=clock, storage=sqlite_storage(":memory:"), keys=keys)


def request(method: str, target: str, who: Credentials, now: float, body: str = "") -> HttpRequest:
    path, _, query = target.partition("?")
    headers = {"date": formatdate(now, usegmt=True), "x-mns-version": "2015-06-06", "host": "127.0.0.1:8080"}
    if body:
        headers["content-type"] = "text/xml"
    unsigned = HttpRequest(method, path, query, headers, body.encode())
    headers["authorization"] = f"MNS {who.key_id}:{sign(who.secret, string_to_sign(unsigned, headers['date']))}"
    if who.token is not None:
        headers["security-token"] = who.token  # after signing, as the SDK adds it
    return HttpRequest(method, path, query, headers, body.encode())


def call(services: Services, route: str, method: str, target: str, who: Credentials, body: str = "") -> HttpResponse:
    return api.handle(route, request(method, target, who, services.clock.now(), body), services)


def issue(services: Services, who: Credentials, body: str = "") -> HttpResponse:
    return call(services, "post_account", "POST", "/?securitytoken=true", who, body)


def credentials_of(response: HttpResponse) -> tuple[Credentials, str]:
    assert response.status == 200, response.body
    root = ET.fromstring(response.body)
    assert root.tag == NS + "Credentials"
    value = {child.tag.removeprefix(NS): child.text or "" for child in root}
    return Credentials(value["AccessKeyId"], value["AccessKeySecret"], value["SecurityToken"]), value["Expiration"]


def error_code(response: HttpResponse) -> tuple[int, str]:
    assert response.headers.get("x-mns-request-id")
    root = ET.fromstring(response.body)
    code = root.find(NS + "Code")
    assert root.tag == NS + "Error" and code is not None and code.text
    return response.status, code.text


def token_body(policy: dict[str, object] | None = None, duration: int | None = None) -> str:
    parts = [] if duration is None else [f"<DurationSeconds>{duration}</DurationSeconds>"]
    parts += [] if policy is None else [f"<Policy>{json.dumps(policy)}</Policy>"]
    return f'<?xml version="1.0" encoding="UTF-8"?><SecurityToken xmlns="http://mns.aliyuncs.com/doc/v1">{"".join(parts)}</SecurityToken>'


READ_ACCOUNT = {
    "Version": "1",
    "Statement": [{"Effect": "Allow", "Action": "mns:GetAccountAttributes", "Resource": "*"}],
}


def test_issued_credentials_work_as_their_policy_allows_until_they_expire(services, clock):
    response = issue(services, ROOT, token_body(READ_ACCOUNT, duration=900))
    assert response.headers["Cache-Control"] == "no-store"
    temporary, expiration = credentials_of(response)
    assert expiration == "2026-09-21T14:28:20Z"  # START + 900 s
    assert call(services, "get_account", "GET", "/?accountmeta=true", temporary).status == 200
    denied = call(services, "put_account", "PUT", "/?accountmeta=true", temporary, "<Account/>")
    assert error_code(denied) == (403, "AccessDenied")
    clock.t += 899
    assert call(services, "get_account", "GET", "/?accountmeta=true", temporary).status == 200
    clock.t += 1
    expired = call(services, "get_account", "GET", "/?accountmeta=true", temporary)
    assert error_code(expired) == (403, "SecurityTokenExpired")


def test_the_default_lifetime_is_an_hour(services):
    _, expiration = credentials_of(issue(services, ROOT))
    assert expiration == "2026-09-21T15:13:20Z"  # START + 3600 s


def test_a_token_cannot_issue_tokens(services):
    temporary, _ = credentials_of(issue(services, ROOT))
    assert error_code(issue(services, temporary)) == (403, "AccessDenied")


def test_a_key_whose_policy_does_not_allow_issuing_is_refused_naming_the_action(services):
    response = issue(services, SENDER)
    assert error_code(response) == (403, "AccessDenied")
    assert f"mns:IssueSecurityToken on resource acs:mns:cn-hangzhou:{ACCOUNT}:/" in response.body.decode()


def test_a_token_of_a_narrowed_key_keeps_its_keys_limits(services):
    everything = {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    temporary, _ = credentials_of(issue(services, ISSUER, token_body(everything)))
    assert error_code(call(services, "get_account", "GET", "/?accountmeta=true", temporary)) == (403, "AccessDenied")
    assert call(services, "get_account", "GET", "/?accountmeta=true", ROOT).status == 200


@pytest.mark.parametrize(
    "target, body, expected",
    [
        ("/?securitytoken=true", token_body(duration=899), (400, "InvalidArgument")),
        ("/?securitytoken=true", token_body(duration=43201), (400, "InvalidArgument")),
        ("/?securitytoken=true", token_body({"Version": "1", "Statement": "all"}), (400, "InvalidArgument")),
        ("/?securitytoken=true", "<Account/>", (400, "InvalidArgument")),
        ("/?securitytoken=true", "<SecurityToken>", (400, "MalformedXML")),
        ("/", "", (400, "InvalidRequestURL")),
        ("/?accountmeta=true", "", (400, "InvalidRequestURL")),
    ],
)
def test_bad_requests_get_the_mns_error(services, target, body, expected):
    assert error_code(call(services, "post_account", "POST", target, ROOT, body)) == expected


def test_a_revoked_keys_tokens_stop_working(services):
    temporary, _ = credentials_of(issue(services, ROOT))
    del services.keys.keys[ROOT.key_id]
    assert error_code(call(services, "get_account", "GET", "/?accountmeta=true", temporary)) == (
        403,
        "InvalidSecurityToken",
    )


class LambdaContext:
    function_name = "mns-test"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-test"
    aws_request_id = "test"


def event(req: HttpRequest) -> dict[str, object]:
    return {
        "version": "2.0",
        "rawPath": req.path,
        "rawQueryString": req.raw_query,
        "headers": req.headers,
        "body": req.body.decode(),
        "isBase64Encoded": False,
        "requestContext": {"http": {"method": req.method}, "timeEpoch": int(START * 1000)},
    }


def test_the_handler_never_logs_a_token_or_secret_even_when_asked_to_log_events(services, monkeypatch, caplog):
    monkeypatch.setenv("POWERTOOLS_LOGGER_LOG_EVENT", "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    issued = make_handler("post_account", services=lambda: services)(
        event(request("POST", "/?securitytoken=true", ROOT, START)), LambdaContext()
    )
    root = ET.fromstring(issued["body"])
    temporary = Credentials(
        *(root.find(NS + name).text or "" for name in ("AccessKeyId", "AccessKeySecret", "SecurityToken"))
    )
    answered = make_handler("get_account", services=lambda: services)(
        event(request("GET", "/?accountmeta=true", temporary, START)), LambdaContext()
    )
    assert answered["statusCode"] == 200
    logged = "\n".join(repr(vars(record)) for record in caplog.records)  # each record with its fields
    assert "'route': 'get_account'" in logged  # the request line is logged
    for secret in (temporary.token, temporary.secret, ROOT.secret, "MNS ROOTKEY:"):
        assert secret and secret not in logged
