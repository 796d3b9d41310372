"""The Application Load Balancer's door (`-c frontDoor=alb`, docs/front-door.md): a target group's Lambda event
in, the request as the client sent it; the response as ALB takes it back.

ALB hands the function the path as sent and the query as parameters, each key and value still percent-encoded as
sent (`multiValueQueryStringParameters` with the target group's multi-value option, which the stack turns on), and
the header names in lower case. The request is rebuilt from those, never decoded or normalised: the signature
(`mnsd.access`) is checked over the path and query the client signed. What ALB cannot hand on is lost: a parameter
sent without `=` comes back with one, and repeated parameters come back grouped by name.
"""

from __future__ import annotations

import base64
from http import HTTPStatus
from typing import Any

from mnsd.ground.http import HttpRequest, HttpResponse


def is_alb_event(event: dict[str, Any]) -> bool:
    return "elb" in (event.get("requestContext") or {})


def raw_query(event: dict[str, Any]) -> str:
    """The query string rebuilt from the event's parameters, in the order they came, as encoded as they came."""
    multi = event.get("multiValueQueryStringParameters")
    if multi is not None:
        pairs = [(key, value) for key, values in multi.items() for value in values]
    else:
        pairs = list((event.get("queryStringParameters") or {}).items())
    return "&".join(f"{key}={value}" for key, value in pairs)


def headers_of(event: dict[str, Any]) -> dict[str, str]:
    """Lower-case names; a repeated header's values joined with `,` (as the local server and API Gateway join them)."""
    multi = event.get("multiValueHeaders")
    if multi is not None:
        return {name.lower(): ",".join(values) for name, values in multi.items() if values}
    return {name.lower(): value for name, value in (event.get("headers") or {}).items()}


def source_ip(headers: dict[str, str]) -> str | None:
    """The client's address as ALB saw it: the last entry of `X-Forwarded-For` (ALB appends it to whatever the
    client sent there)."""
    forwarded = headers.get("x-forwarded-for")
    return forwarded.rsplit(",", 1)[-1].strip() or None if forwarded else None


def request_from_event(event: dict[str, Any]) -> HttpRequest:
    body = event.get("body") or ""
    headers = headers_of(event)
    return HttpRequest(
        method=event["httpMethod"],
        path=event.get("path") or "/",
        raw_query=raw_query(event),
        headers=headers,
        body=base64.b64decode(body) if event.get("isBase64Encoded") else body.encode("utf-8"),
        source_ip=source_ip(headers),
    )


def event_response(response: HttpResponse, multi_value: bool) -> dict[str, Any]:
    """The answer as ALB reads it: with `multiValueHeaders` when the event came with them (ALB then reads no other)."""
    try:
        phrase = HTTPStatus(response.status).phrase
    except ValueError:
        phrase = ""
    answer: dict[str, Any] = {
        "statusCode": response.status,
        "statusDescription": f"{response.status} {phrase}".strip(),
        "body": response.body.decode("utf-8"),
        "isBase64Encoded": False,
    }
    if multi_value:
        answer["multiValueHeaders"] = {name: [value] for name, value in response.headers.items()}
    else:
        answer["headers"] = dict(response.headers)
    return answer
