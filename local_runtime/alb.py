"""`make run FRONT_DOOR=alb`: each HTTP request turned into the event an Application Load Balancer gives a Lambda
target (`-c frontDoor=alb`, docs/front-door.md), and given to the function of the listener rule ALB would forward it
by (`mnsd.request.listener`): the path as sent, the query as parameters still encoded as sent, header names in
lower case, every value of a repeated header or parameter (the stack turns the target groups' multi-value option
on), a binary or encoded body in base64, and ALB's own `X-Forwarded-*` headers."""

from __future__ import annotations

import base64
from typing import Any

from mnsd.request.listener import rule_for

TARGET_GROUP = "arn:aws:elasticloadbalancing:local:000000000000:targetgroup/mns-local/0000000000000000"


def query_parameters(raw_query: str) -> dict[str, list[str]]:
    """ALB's parameters: split on `&` and the first `=`, neither key nor value decoded; a key without `=` gets ""."""
    found: dict[str, list[str]] = {}
    for part in raw_query.split("&"):
        if part:
            key, _, value = part.partition("=")
            found.setdefault(key, []).append(value)
    return found


def _body(body: bytes, headers: dict[str, list[str]]) -> tuple[str, bool]:
    """The body as ALB puts it in the event: text as is; base64 when it is not UTF-8 or comes encoded."""
    if "content-encoding" not in headers:
        try:
            return body.decode("utf-8"), False
        except UnicodeDecodeError:
            pass
    return base64.b64encode(body).decode("ascii"), True


def alb_event(
    method: str,
    target: str,
    header_pairs: list[tuple[str, str]],
    body: bytes,
    client: str = "127.0.0.1",
    port: int = 80,
) -> tuple[str | None, dict[str, Any]]:
    """The function's route (None: the default action, the catch-all) and its event."""
    path, _, query = target.partition("?")
    headers: dict[str, list[str]] = {}
    for name, value in header_pairs:
        headers.setdefault(name.lower(), []).append(value)
    forwarded = headers.pop("x-forwarded-for", [])
    headers["x-forwarded-for"] = [", ".join([*forwarded, client])]  # ALB appends the address it was called from
    headers["x-forwarded-proto"] = ["http"]
    headers["x-forwarded-port"] = [str(port)]
    text, encoded = _body(body, headers)
    rule = rule_for(method, path)
    event = {
        "requestContext": {"elb": {"targetGroupArn": TARGET_GROUP}},
        "httpMethod": method,
        "path": path,
        "multiValueQueryStringParameters": query_parameters(query),
        "multiValueHeaders": headers,
        "body": text,
        "isBase64Encoded": encoded,
    }
    return (rule.route if rule else None), event
