"""API Gateway (HTTP API, payload format 2.0) events in, MNS responses out; or an Application Load Balancer's
(`mnsd.entry.alb`), the other door of the same pipeline."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from mnsd.entry import alb
from mnsd.ground import deadlines
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.request import api
from mnsd.request.listener import fits
from mnsd.request.routes import ROUTES, path_parameters
from mnsd.services import Services, default_services
from mnsd.waiting import contract

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

logger = Logger(service="mns")
metrics = Metrics(namespace="MNS", service="mns")

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def tracing_enabled(env: dict[str, str] | None = None) -> bool:
    """X-Ray subsegments: in a Lambda function, unless `POWERTOOLS_TRACE_DISABLED` says otherwise."""
    env = dict(os.environ if env is None else env)
    disabled = env.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() in ("true", "1")
    return not disabled and bool(env.get("AWS_LAMBDA_FUNCTION_NAME"))


@lru_cache(maxsize=1)
def tracer() -> Tracer | None:
    """The Powertools Tracer, made on the first call that traces: the X-Ray SDK it loads costs about 200 ms,
    which a cold start does not pay at import, nor at all where tracing is off."""
    if not tracing_enabled():
        return None
    from aws_lambda_powertools import Tracer

    return Tracer(service="mns")


def request_from_event(event: dict[str, Any], route_path: str | None = None) -> HttpRequest:
    """The request of an HTTP API event, or of a function URL's (the wait tier asks the receive function through
    its URL, `mnsd.waiting`): no route matched it, so its path parameters come from `route_path`, and the host the
    client called comes in `X-Forwarded-Host`."""
    body = event.get("body") or ""
    raw = base64.b64decode(body) if event.get("isBase64Encoded") else body.encode("utf-8")
    time_epoch = event["requestContext"].get("timeEpoch")
    path = event.get("rawPath") or "/"
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    params = event.get("pathParameters")
    if params is None and route_path is not None and ".lambda-url." in event["requestContext"].get("domainName", ""):
        params = path_parameters(route_path, path)
        if "x-forwarded-host" in headers:
            headers["host"] = headers["x-forwarded-host"]
    return HttpRequest(
        method=event["requestContext"]["http"]["method"],
        path=path,
        raw_query=event.get("rawQueryString") or "",
        headers=headers,
        body=raw,
        path_params=dict(params or {}),
        received_at=time_epoch / 1000 if isinstance(time_epoch, int | float) else None,
        source_ip=event["requestContext"].get("http", {}).get("sourceIp"),
    )


def is_function_url(event: dict[str, Any]) -> bool:
    """Whether the event is a function URL's (the wait tier asks the functions of its routes there)."""
    return ".lambda-url." in (event.get("requestContext") or {}).get("domainName", "")


def for_route(route_name: str | None, request: HttpRequest) -> bool:
    """Whether a request to the function URL of `route_name` is its route's (its method, a path its template fits) or
    the tier's batch call: the tier passes on paths as sent, and ALB's rules take more than a route's paths
    (`mnsd.request.listener`); what is not the route's is served as the catch-all serves it, as behind ALB."""
    route = ROUTES.get(route_name or "")
    if request.method == "POST" and request.path == contract.BATCH_PATH:
        return route is not None
    return route is not None and request.method == route.method and fits(route.path, request.path)


def event_response(response: HttpResponse) -> dict[str, Any]:
    return {
        "statusCode": response.status,
        "headers": response.headers,
        "body": response.body.decode("utf-8"),
        "isBase64Encoded": False,
    }


def request_budget(route_name: str | None, services: Services) -> float:
    """The seconds a request of the route may take from its arrival (`mnsd.ground.deadlines`): a long poll's cover its wait."""
    route = ROUTES.get(route_name or "")
    if route is None or not route.long_poll:
        return deadlines.REQUEST_SECONDS
    return deadlines.request_seconds(True, services.settings.max_poll_seconds)


def make_handler(route_name: str | None, services: Callable[[], Services] = default_services) -> LambdaHandler:
    """The Lambda handler of one route."""

    @lru_cache(maxsize=1)
    def traced() -> LambdaHandler:
        active = tracer()
        return handle if active is None else active.capture_lambda_handler(handle, capture_response=False)

    # Never the event: it carries the Authorization and security-token headers and the bodies (whatever
    # POWERTOOLS_LOGGER_LOG_EVENT says).
    @logger.inject_lambda_context(clear_state=True, log_event=False)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return traced()(event, context)

    def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
        name, request = routed_request(route_name, event)
        current = services()
        with deadlines.within(request_budget(name, current), request.received_at):
            response = api.handle(name, request, current)
        current.metrics.flush()  # the queues' and topics' counts of this call (`mnsd.metrics`)
        # Failed calls only: a line per request would bill 0.2 KB of log ingestion per request for what the front
        # door's own metrics (API Gateway's Count, the ALB's RequestCount) and Lambda's Invocations count free.
        if response.status >= 400:
            metrics.add_metric(name=f"Http{response.status // 100}xx", unit=MetricUnit.Count, value=1)
        logger.info(
            "request",
            route=name,
            method=request.method,
            path=request.raw_uri,
            status=response.status,
            request_id=response.headers.get("x-mns-request-id"),
        )
        if alb.is_alb_event(event):
            return alb.event_response(response, multi_value="multiValueHeaders" in event)
        return event_response(response)

    return handler


def routed_request(route_name: str | None, event: dict[str, Any]) -> tuple[str | None, HttpRequest]:
    """The route a request is served as, and the request. API Gateway matched the route; an ALB rule's path pattern
    takes more than its route's paths (`mnsd.request.listener`): what the route's template does not fit is served as
    the catch-all serves it, whichever function ALB sent it to."""
    route_path = api.route_path(route_name)
    if not alb.is_alb_event(event):
        request = request_from_event(event, route_path)
        if is_function_url(event) and not for_route(route_name, request):
            return None, request
        return route_name, request
    request = alb.request_from_event(event)
    if route_path is None or not fits(route_path, request.path):
        return None, request
    return route_name, replace(request, path_params=path_parameters(route_path, request.path))
