"""Mns-open (OpenAPI) calls signed v1 by the core SDK's composer and handled in the test's process."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from urllib.parse import urlencode

from local_runtime.dispatch import match_route
from mnsd.access.keys import AccessKey
from mnsd.ground.http import HttpRequest
from mnsd.request import api
from tests.support.signers import openapi_v1_query
from tests.unit.access_calls import ROUTES, World


def now_iso(world: World) -> str:
    return datetime.fromtimestamp(world.clock.now(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def v1(
    world: World,
    key: AccessKey,
    action: str,
    params: dict[str, str],
    host: str = "127.0.0.1:8080",
    unsigned: dict[str, str] | None = None,
    leave_out: tuple[str, ...] = (),
    **given: str,
):
    """A POST signed v1 by the core SDK's composer (`signers`), the action's parameters in a form body, dated by the
    world's clock; `given` query parameters replace the signer's, `leave_out` ones are not sent, and `unsigned`
    headers are sent beside the signed parameters (the SDKs send `x-acs-action` and `x-acs-version` so)."""
    given = {"Timestamp": now_iso(world), **given}
    query = openapi_v1_query((key.key_id, key.secret), action, params, leave_out, **given)
    headers = {"host": host, "content-type": "application/x-www-form-urlencoded", **(unsigned or {})}
    return handle(world, HttpRequest("POST", "/", urlencode(query), headers, urlencode(params).encode()))


def handle(world: World, request: HttpRequest) -> tuple[int, dict]:
    route_name, _, _ = match_route(ROUTES, "POST", "/")
    request = dataclasses.replace(request, source_ip="192.0.2.10")  # as API Gateway's sourceIp gives it
    response = api.handle(route_name, request, world.services)
    return response.status, json.loads(response.body)
