"""API Gateway (HTTP API, payload format 2.0) events in, MNS responses out."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from mnsd import api
from mnsd.http import HttpRequest, HttpResponse
from mnsd.services import Services, default_services

logger = Logger(service="mns")
metrics = Metrics(namespace="MNS", service="mns")
tracer = Tracer(service="mns")


def request_from_event(event: dict[str, Any]) -> HttpRequest:
    body = event.get("body") or ""
    raw = base64.b64decode(body) if event.get("isBase64Encoded") else body.encode("utf-8")
    return HttpRequest(
        method=event["requestContext"]["http"]["method"],
        path=event.get("rawPath") or "/",
        raw_query=event.get("rawQueryString") or "",
        headers={k.lower(): v for k, v in (event.get("headers") or {}).items()},
        body=raw,
        path_params=dict(event.get("pathParameters") or {}),
    )


def event_response(response: HttpResponse) -> dict[str, Any]:
    return {
        "statusCode": response.status,
        "headers": response.headers,
        "body": response.body.decode("utf-8"),
        "isBase64Encoded": False,
    }


def make_handler(
    route_name: str | None, services: Callable[[], Services] = default_services
) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The Lambda handler of one route."""

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    @tracer.capture_lambda_handler(capture_response=False)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        request = request_from_event(event)
        response = api.handle(route_name, request, services())
        metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
        if response.status >= 400:
            metrics.add_metric(name=f"Http{response.status // 100}xx", unit=MetricUnit.Count, value=1)
        logger.info(
            "request",
            route=route_name,
            method=request.method,
            path=request.raw_uri,
            status=response.status,
            request_id=response.headers.get("x-mns-request-id"),
        )
        return event_response(response)

    return handler
