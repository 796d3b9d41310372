"""Request dispatch in the local runtime: each HTTP request to the console's files, a local page or tool, or the
Lambda handler of its route, given the API Gateway (HTTP API 2.0) event that AWS would deliver."""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from local_runtime.alb import alb_event
from local_runtime.console import Responder
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.request import api, coalesced
from mnsd.request.routes import ROUTES
from mnsd.waiting import contract

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
ALB = "alb"  # `MNS_FRONT_DOOR=alb` (`make run FRONT_DOOR=alb`)
LocalTool = Callable[[], dict[str, str]]
LocalPage = Callable[[], HttpResponse]  # a page of the local runtime, unsigned: served to loopback clients only


@dataclass(frozen=True)
class CompiledRoute:
    name: str
    method: str
    path: str
    pattern: re.Pattern[str]


def compile_routes() -> list[CompiledRoute]:
    compiled = []
    for route in ROUTES.values():
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(route.path))
        compiled.append(CompiledRoute(route.name, route.method, route.path, re.compile(regex + r"\Z")))
    return compiled


def match_route(
    routes: list[CompiledRoute], method: str, path: str, body: bytes = b""
) -> tuple[str | None, str, dict[str, str]]:
    """(route name or None for $default, route key, path parameters)."""
    if method == "POST" and path == contract.BATCH_PATH:
        # The wait tier's coalesced calls go to the function of their operation's route (on AWS by its URL: the tier
        # posts each operation's batches there, `infra.wait_tier`), and so run under that function's role when the
        # roles are enforced.
        return batch_route(body), "$default", {}
    for route in routes:
        found = route.pattern.match(path)
        if found and route.method == method:
            params = {k: unquote(v) for k, v in found.groupdict().items()}
            return route.name, f"{method} {route.path}", params
    return None, "$default", {}


def batch_route(body: bytes) -> str | None:
    """The route whose function serves a batch call of the wait tier: its requests' (the tier batches one operation of
    one queue), by their method on the messages' path (None: not a batch, which the catch-all refuses)."""
    try:
        methods = {method for method, *_ in contract.read_batch(body)}
    except ValueError:
        return None
    found = [name for name in coalesced.BATCH_ROUTES if {ROUTES[name].method} == methods]
    return found[0] if found else None


def api_gateway_event(
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    routes: list[CompiledRoute],
    received_at: float | None = None,
) -> tuple[str | None, dict[str, Any]]:
    raw_path, _, raw_query = target.partition("?")
    route_name, route_key, params = match_route(routes, method, raw_path, body)
    text_body: str | None = None
    is_base64 = False
    if body:
        try:
            text_body = body.decode("utf-8")
        except UnicodeDecodeError:
            text_body, is_base64 = base64.b64encode(body).decode("ascii"), True
    event = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": raw_path,
        "rawQueryString": raw_query,
        "headers": headers,
        "pathParameters": params or None,
        "requestContext": {
            "http": {"method": method, "path": raw_path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "routeKey": route_key,
            "stage": "$default",
            "timeEpoch": int((time.time() if received_at is None else received_at) * 1000),
        },
        "body": text_body,
        "isBase64Encoded": is_base64,
    }
    return route_name, event


class LocalContext:
    function_name = "mns-local"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:mns-local"
    aws_request_id = "local"


@dataclass(frozen=True)
class Dispatch:
    """Where a request goes: the console's files, a local page (loopback clients only, `RequestHandler.loopback_paths`),
    a local tool (the operator's only) or the Lambda handler of its route."""

    routes: list[CompiledRoute]
    handlers: dict[str | None, Handler]
    local_tools: dict[tuple[str, str], LocalTool]
    console: Responder
    authorize_tool: Callable[[HttpRequest], None]
    local_pages: dict[tuple[str, str], LocalPage] = field(default_factory=dict)
    # `alb`: the functions are called through the load balancer's door (`local_runtime.alb`), else API Gateway's.
    front_door: str = ""

    def respond(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        received_at: float,
        header_pairs: list[tuple[str, str]] | None = None,
    ) -> HttpResponse:
        static = self.console(method, target, headers)  # the web console's files
        if static is not None:
            return HttpResponse(static["statusCode"], static["body"].encode("utf-8"), static["headers"])
        page = self.local_pages.get((method, target.partition("?")[0]))
        if page is not None:
            return page()
        tool = self.local_tools.get((method, target))
        if tool is not None:  # the local runtime's own tools, outside the MNS API
            raw_path, _, raw_query = target.partition("?")
            request = HttpRequest(method, raw_path, raw_query, headers, body)
            try:
                self.authorize_tool(request)
            except errors.MnsError as error:
                return api.refuse(error, request.header("host"))
            return HttpResponse(200, json.dumps(tool()).encode("utf-8"), {"Content-Type": "application/json"})
        if self.front_door == ALB:
            pairs = list(headers.items()) if header_pairs is None else header_pairs
            route_name, event = alb_event(method, target, pairs, body)
        else:
            route_name, event = api_gateway_event(method, target, headers, body, self.routes, received_at)
        result = self.handlers[route_name](event, LocalContext())
        answered = result.get("multiValueHeaders")
        headers = result["headers"] if answered is None else {k: ",".join(v) for k, v in answered.items()}
        return HttpResponse(result["statusCode"], result["body"].encode("utf-8"), headers)
