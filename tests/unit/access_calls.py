"""Signed calls to `mnsd.request.api.handle` over a fresh embedded engine, for the access-control tests.

A world holds one account's queue `q` (with a receiver `r`, and one message), topic `t` and subscription `s`, a root key, and
whatever keys a test adds with their policies; `call` signs a request with a key and answers
(status, error code, error message, request id).
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from local_runtime.dispatch import compile_routes, match_route
from local_runtime.tables import create_tables
from mnsd.access import authentication as auth
from mnsd.access.keys import AccessKey
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.ground.settings import Settings
from mnsd.model.policy import Policy
from mnsd.request import api
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage

ACCOUNT = "1000000000000001"
OTHER = "2000000000000002"
REGION = "cn-hangzhou"
ROOT = AccessKey(ACCOUNT, "ROOTKEY", "ROOTSECRET")
OTHER_ROOT = AccessKey(OTHER, "OTHERROOT", "OTHERSECRET")
NS = "{http://mns.aliyuncs.com/doc/v1}"
ROUTES = compile_routes()


def resource(path: str, account: str = ACCOUNT) -> str:
    return f"acs:mns:{REGION}:{account}:{path}"


def policy(*statements: tuple[str, list[str], list[str]]) -> Policy:
    return Policy.parse(
        {"Version": "1", "Statement": [{"Effect": e, "Action": a, "Resource": r} for e, a, r in statements]}
    )


@dataclass
class Answer:
    status: int
    code: str
    message: str
    request_id: str
    body: bytes

    def value(self, name: str) -> str | None:
        node = ET.fromstring(self.body).find(f"{NS}{name}") if self.body else None
        return None if node is None else node.text


@dataclass
class DictKeys:
    keys: dict[str, AccessKey] = field(default_factory=dict)

    def lookup(self, key_id: str) -> AccessKey | None:
        return self.keys.get(key_id)

    def add(self, key: AccessKey) -> AccessKey:
        self.keys[key.key_id] = key
        return key


class HandClock:
    """A clock the test moves (requests are dated by it too)."""

    def __init__(self, now: float | None = None) -> None:
        self.at = time.time() if now is None else now

    def now(self) -> float:
        return self.at

    def sleep(self, seconds: float) -> None:
        self.at += max(seconds, 0)


class World:
    def __init__(self, clock: HandClock | None = None, dynamodb: Any = None, **settings: Any) -> None:
        """Over a fresh embedded engine, or over `dynamodb` (a DynamoDB client: its tables made here)."""
        self.keys = DictKeys()
        self.keys.add(ROOT)
        self.keys.add(OTHER_ROOT)
        self.clock = clock or HandClock()
        given = Settings(region=REGION, credentials=f"{ACCOUNT}:{ROOT.key_id}:{ROOT.secret}", **settings)
        if dynamodb is not None:
            create_tables(dynamodb, given)
        self.services: Services = build_services(
            given,
            dynamodb=dynamodb,
            storage=None if dynamodb is not None else sqlite_storage(":memory:"),
            keys=self.keys,
            clock=self.clock,
        )
        self.call(ROOT, "PUT", "/queues/q", body="<Queue><RewindPeriod>600</RewindPeriod></Queue>")
        self.call(ROOT, "PUT", "/queues/q/receivers/r")
        self.call(ROOT, "POST", "/queues/q/messages", body="<Message><MessageBody>hello</MessageBody></Message>")
        self.call(ROOT, "PUT", "/topics/t")
        endpoint = f"acs:mns:{REGION}:{ACCOUNT}:queues/q"
        self.call(
            ROOT,
            "PUT",
            "/topics/t/subscriptions/s",
            body=f"<Subscription><Endpoint>{endpoint}</Endpoint></Subscription>",
        )

    def key(self, key_id: str, given: Policy | None, account: str = ACCOUNT) -> AccessKey:
        return self.keys.add(AccessKey(account, key_id, f"{key_id}-SECRET", given))

    def call(self, key: AccessKey, method: str, target: str, body: str = "", **options: Any) -> Answer:
        """The request signed with `key` (`options`: `signed`'s host and headers) and handled: its answer."""
        path, _, query = target.partition("?")
        route_name, _, params = match_route(ROUTES, method, path)
        h, data = self.signed(key, method, target, body, **options)
        response = api.handle(route_name, HttpRequest(method, path, query, h, data, params), self.services)
        return answer_of(response)

    def signed(
        self,
        key: AccessKey,
        method: str,
        target: str,
        body: str = "",
        host: str = "127.0.0.1:8080",
        headers: dict[str, str] | None = None,
    ) -> tuple[dict[str, str], bytes]:
        """A request's headers, signed with `key` (MNS V2, dated by the world's clock), and its body."""
        path, _, query = target.partition("?")
        data = ('<?xml version="1.0" encoding="UTF-8"?>' + _namespaced(body)).encode() if body else b""
        h = {
            "host": host,
            "date": formatdate(self.clock.now(), usegmt=True),
            "content-type": "text/xml;charset=utf-8",
            "x-mns-version": "2015-06-06",
            **(headers or {}),
        }
        unsigned = HttpRequest(method, path, query, h, data)
        h["authorization"] = f"MNS {key.key_id}:{auth.sign(key.secret, auth.string_to_sign(unsigned, h['date']))}"
        return h, data


def answer_of(response: HttpResponse) -> Answer:
    """A response as the tests read it: status, error code and message, request id, body."""
    code = message = ""
    if response.status >= 400:
        error = ET.fromstring(response.body)
        code = _text(error, "Code")
        message = _text(error, "Message")
    return Answer(response.status, code, message, response.headers.get("x-mns-request-id", ""), response.body)


def _namespaced(body: str) -> str:
    """`<Queue>...` -> `<Queue xmlns="...">...` (the root of every MNS request body is in MNS's namespace)."""
    return re.sub(r"\A<(\w+)", r'<\1 xmlns="http://mns.aliyuncs.com/doc/v1"', body, count=1)


def _text(node: Any, name: str) -> str:
    found = node.find(f"{NS}{name}")
    return "" if found is None or found.text is None else found.text
