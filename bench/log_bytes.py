"""The bytes a request writes to CloudWatch Logs, per operation, at the stack's log settings.

    python -m bench.log_bytes          (prints the lines and their bytes; `bench.message_patterns` prices them)

Measured: the route functions (`functions/post_messages`, `get_messages`, `delete_messages`) are invoked with signed
HTTP API events over moto, in a fresh interpreter with the functions' environment, the queue created first and the
container warm; every line they print (Powertools' JSON log lines, the EMF metric lines) is captured. Beside them,
lines the function does not print but CloudWatch Logs ingests, built in the formats AWS documents and measured:

- Lambda's platform lines, START / END / REPORT (text format; REPORT with its X-Ray part when tracing is active):
  system logs at INFO, dropped when the function's system log level is WARN;
- the HTTP API's access log line, one per request, in the stage's format (`infra.api.access_log_format`): written
  only when the HTTP API is the front door;
- with `-c frontDoor=alb` the load balancer's access log entry instead (`alb_entry`, ALB's documented format for a
  Lambda target), which ALB delivers gzipped to the stack's access log bucket in S3, not to CloudWatch: its bytes
  are measured compressed (`alb_gzipped_bytes`, a file of entries with their own ids, times and handles);
- with the wait tier as the front door, nothing per request: the tier writes no access log (`wait_tier.__main__`:
  `access_log=None`).

The function's lines are per invocation (`function_bytes`), the access log's per client request (`door_bytes`): a
call the wait tier coalesced is one invocation for several client requests.

Which lines reach CloudWatch follows the settings of `infra.observability.LogSettings`: Lambda gives a line without a
`level` (an EMF line, a print) the level INFO and filters application lines below the application log level;
Powertools' logger drops its own lines below `POWERTOOLS_LOG_LEVEL`. CloudWatch meters each event as its UTF-8
bytes plus 26 bytes (the size PutLogEvents counts), taken here as what is billed: an upper bound.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from infra.api import access_log_format
from infra.observability import LogSettings

ACCOUNT, KEY_ID, SECRET = "1000000000000001", "LOGKEYID", "LOGSECRET"
HOST = f"{ACCOUNT}.mns.cn-hangzhou.aliyuncs.com"
QUEUE = "orders"
EVENT_OVERHEAD_BYTES = 26  # CloudWatch Logs counts each event as its message's bytes plus 26
REQUEST_ID = "8f5e5c3a-4b1d-4a8e-9a59-0c1d2e3f4a5b"  # a Lambda request id: 36 characters
TRACE_ID = "1-6755a1b0-0123456789abcdef01234567"
# The routes of a message's life.
ROUTES = {"send": "post_messages", "receive": "get_messages", "delete": "delete_messages"}
LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "WARNING": 30, "ERROR": 40, "FATAL": 50, "CRITICAL": 50}


@dataclass(frozen=True)
class Line:
    source: str  # "platform", "application" (a Powertools line or an EMF line), "access"
    level: str  # what Lambda takes it for ("INFO" for a line without a level)
    text: str

    @property
    def is_metrics(self) -> bool:
        """An EMF line (CloudWatch turns it into metrics)."""
        return self.text.startswith('{"_aws"')

    @property
    def billed(self) -> int:
        return len(self.text.encode()) + EVENT_OVERHEAD_BYTES


@dataclass
class RequestLines:
    """The lines one request of an operation makes, before the settings filter them."""

    operation: str
    printed: list[Line] = field(default_factory=list)  # by the function

    def lines(self, settings: LogSettings, memory_mb: int = 256, monitored: bool = True) -> list[Line]:
        """What reaches CloudWatch Logs under `settings` (the function's platform lines and the access log line
        included; the queue's EMF metric lines only when it is `monitored`)."""
        kept = [line for line in self.printed if self._kept(line, settings) and (monitored or not line.is_metrics)]
        if LEVELS[settings.system_log_level] <= LEVELS["INFO"]:
            kept += platform_lines(settings.tracing, memory_mb)
        if settings.access_log:
            kept.append(access_line(self.operation, settings.access_log_fields))
        return kept

    @staticmethod
    def _kept(line: Line, settings: LogSettings) -> bool:
        level = LEVELS[line.level]
        if level < LEVELS[settings.application_log_level]:
            return False
        is_powertools = '"service"' in line.text and '"level"' in line.text
        return not is_powertools or level >= LEVELS[settings.powertools_log_level]

    def billed_bytes(self, settings: LogSettings, monitored: bool = True) -> int:
        return sum(line.billed for line in self.lines(settings, monitored=monitored))

    def function_bytes(self, settings: LogSettings, monitored: bool = True) -> int:
        """What the function's invocation writes to CloudWatch Logs (its own lines and Lambda's platform lines)."""
        return sum(line.billed for line in self.lines(settings, monitored=monitored) if line.source != "access")

    def door_bytes(self, settings: LogSettings, door: str) -> int:
        """What the front door writes to CloudWatch Logs for the request: the HTTP API's access log line; nothing at
        an ALB (its log goes to S3: `alb_gzipped_bytes`) or at the wait tier."""
        if door != "http-api" or not settings.access_log:
            return 0
        return access_line(self.operation, settings.access_log_fields).billed


def platform_lines(tracing: bool, memory_mb: int) -> list[Line]:
    """START, END and REPORT in Lambda's text format (AWS's documented fields, typical values)."""
    report = (
        f"REPORT RequestId: {REQUEST_ID}\tDuration: 23.45 ms\tBilled Duration: 24 ms\tMemory Size: {memory_mb} MB\t"
        "Max Memory Used: 98 MB\t"
    )
    if tracing:
        report += f"\nXRAY TraceId: {TRACE_ID}\tSegmentId: 0a1b2c3d4e5f6a7b\tSampled: false\t"
    return [
        Line("platform", "INFO", f"START RequestId: {REQUEST_ID} Version: $LATEST"),
        Line("platform", "INFO", f"END RequestId: {REQUEST_ID}"),
        Line("platform", "INFO", report),
    ]


# Typical values of the access log's variables for a message request (`$context.*`).
ACCESS_VALUES = {
    "$context.requestId": "Ab1CdEfGhIjKlMn=",
    "$context.identity.sourceIp": "203.0.113.7",
    "$context.requestTime": "07/Dec/2026:17:20:00 +0000",
    "$context.requestTimeEpoch": "1796664000000",
    "$context.httpMethod": "POST",
    "$context.path": f"/queues/{QUEUE}/messages",
    "$context.routeKey": "POST /queues/{queue}/messages",
    "$context.status": "201",
    "$context.responseLength": "420",
    "$context.responseLatency": "23",
    "$context.integrationStatus": "201",
    "$context.integrationErrorMessage": "-",
}


def access_line(operation: str, fields: str) -> Line:
    """The HTTP API's access log line of one request, in the stage's format with typical values."""
    values = dict(ACCESS_VALUES)
    if operation == "delete":
        values["$context.path"] += "?ReceiptHandle=" + "x" * 80
    text = json.dumps(access_log_format(fields))
    for variable in sorted(values, key=len, reverse=True):  # `$context.requestTimeEpoch` before `$context.requestTime`
        text = text.replace(variable, values[variable])
    return Line("access", "INFO", text)


# ALB's access log entry (Elastic Load Balancing user guide, "Access log entries"), a request to a Lambda target
# (no target address); the fields in their documented order, typical values of the stack's requests.
ALB_ENTRY = (
    "http {time} app/mns-FrontDoor-Alb/50dc6c495c0c9188 {client}:{port} - 0.000 {latency} 0.000 {status} {status} "
    '{received} {sent} "{method} http://{host}:80{path} HTTP/1.1" "aliyun-sdk-python/1.1.6(Linux/5.10/x86_64;3.11)" '
    "- - arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/mns-Targe-{group}/73e2d6bc24d8a067 "
    '"Root=1-{trace}" "-" "-" {priority} {time} "forward" "-" "-" "-" "-" "-" "-" TID_{conn}'
)
ALB_OPERATIONS = {  # method, path, status, received and sent bytes of each operation
    "send": ("POST", f"/queues/{QUEUE}/messages", 201, 1650, 420),
    "receive": ("GET", f"/queues/{QUEUE}/messages?waitseconds=0", 200, 560, 1900),
    "delete": ("DELETE", f"/queues/{QUEUE}/messages?ReceiptHandle={{handle}}", 204, 700, 180),
}


def alb_entry(operation: str, rng: Any) -> str:
    """One ALB access log entry of an operation's request, its ids, times, port and handle drawn from `rng` (the
    listener rule it matched, `mnsd.request.listener`'s)."""
    from mnsd.request.listener import rule_for

    method, path, status, received, sent = ALB_OPERATIONS[operation]
    rule = rule_for(method, path.partition("?")[0])
    assert rule is not None
    priority = rule.priority
    seconds = rng.uniform(0, 300)
    return ALB_ENTRY.format(
        time=f"2026-12-07T17:{int(seconds // 60):02d}:{seconds % 60:09.6f}Z",
        client=f"203.0.113.{rng.randrange(1, 255)}",
        port=rng.randrange(1024, 65535),
        latency=f"{rng.uniform(0.008, 0.060):.3f}",
        status=status,
        received=received,
        sent=sent,
        method=method,
        host=HOST,
        path=path.format(handle=base64.b64encode(rng.randbytes(60)).decode()),
        group=hashlib.sha256(operation.encode()).hexdigest()[:10],  # (each route its own target group)
        trace=f"{rng.getrandbits(32):08x}-{rng.getrandbits(96):024x}",
        priority=priority,
        conn=rng.getrandbits(128).to_bytes(16, "big").hex(),
    )


def alb_gzipped_bytes(entries: int = 3000, seed: int = 7) -> dict[str, float]:
    """Bytes each operation's ALB access log entry takes in S3: a log file of `entries` entries of the operation
    (each its own ids, time, port, handle), gzipped as ALB delivers it, divided by the entries."""
    import gzip
    import random

    rng = random.Random(seed)
    measured = {}
    for operation in ALB_OPERATIONS:
        text = "".join(alb_entry(operation, rng) + "\n" for _ in range(entries)).encode()
        measured[operation] = len(gzip.compress(text)) / entries
    return measured


@contextlib.contextmanager
def captured_stdout() -> Iterator[list[str]]:
    """The lines the functions print inside the block: to file descriptor 1, to `sys.stdout` (where the EMF lines
    go) and to the streams of the service's Powertools logger (bound when it was made), wherever they point."""
    import io
    import logging
    import sys

    lines: list[str] = []
    printed = io.StringIO()
    handlers = [h for h in logging.getLogger("mns").handlers if isinstance(h, logging.StreamHandler)]
    streams = [h.setStream(printed) for h in handlers]
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink, contextlib.redirect_stdout(printed):
        os.dup2(sink.fileno(), 1)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            for handler, stream in zip(handlers, streams, strict=True):
                handler.setStream(stream)
            sink.seek(0)
            text = sink.read().decode() + printed.getvalue()
            lines += [line for line in text.splitlines() if line.strip()]


def level_of(text: str) -> str:
    """The level Lambda gives a printed line: its JSON `level`, else INFO."""
    try:
        value = json.loads(text)
    except ValueError:
        return "INFO"
    level = str(value.get("level", "INFO")).upper() if isinstance(value, dict) else "INFO"
    return level if level in LEVELS else "INFO"


def signed_event(method: str, path: str, query: str = "", body: bytes = b"") -> dict[str, Any]:
    """An HTTP API (2.0) event of an MNS request, signed with the bench's key."""
    from mnsd.access.authentication import sign, string_to_sign
    from mnsd.entry.lambda_handler import request_from_event

    headers = {"host": HOST, "x-mns-version": "2015-06-06", "date": formatdate(usegmt=True)}
    if body:
        headers["content-type"] = "text/xml;charset=UTF-8"
        headers["content-md5"] = base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()
    event = {
        "version": "2.0",
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "pathParameters": {"queue": QUEUE},
        "requestContext": {
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7"},
            "stage": "$default",
        },
        "body": base64.b64encode(body).decode() if body else None,
        "isBase64Encoded": bool(body),
    }
    request = request_from_event(event)
    headers["authorization"] = f"MNS {KEY_ID}:{sign(SECRET, string_to_sign(request, headers['date']))}"
    return event


class Context:
    function_name = "mns-post_messages"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-post_messages"
    aws_request_id = REQUEST_ID


ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "MNS_CREDENTIALS": f"{ACCOUNT}:{KEY_ID}:{SECRET}",
    "MNS_RECEIPT_SECRET": "log-bytes-secret",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "MNS",
    "POWERTOOLS_SERVICE_NAME": "mns",
}


def measure(body_bytes: int = 1024, rounds: int = 3) -> dict[str, RequestLines]:
    """Each operation's lines (the last of `rounds` warm lifecycles), printed by the route functions themselves, in a
    fresh interpreter (the functions' process-wide services, environment and moto backend its own)."""
    import subprocess
    import sys

    from bench._common import ROOT

    code = (
        f"import json, bench.log_bytes as b; print(json.dumps(b.lines_as_json(b.measure_here({body_bytes}, {rounds}))))"
    )
    # Only what the functions' environment holds (nothing a caller's tests or tools left in theirs).
    env = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "TMPDIR") if name in os.environ}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**env, **ENVIRONMENT}, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"measuring the functions' logs failed:\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {op: RequestLines(op, [Line(**line) for line in lines]) for op, lines in found.items()}


def lines_as_json(measured: dict[str, RequestLines]) -> dict[str, list[dict[str, str]]]:
    return {op: [vars(line) for line in request.printed] for op, request in measured.items()}


def measure_here(body_bytes: int, rounds: int) -> dict[str, RequestLines]:
    """`measure` in this process."""
    import boto3
    from moto import mock_aws

    from local_runtime.tables import create_tables
    from mnsd import services
    from mnsd.ground.settings import Settings

    saved = {name: os.environ.get(name) for name in ENVIRONMENT}
    os.environ.update(ENVIRONMENT)
    services.default_services.cache_clear()
    services.get_settings.cache_clear()
    try:
        with mock_aws():
            create_tables(boto3.client("dynamodb"), Settings())
            with captured_stdout():
                invoke("put_queue", signed_event("PUT", f"/queues/{QUEUE}", body=queue_body()))
            measured: dict[str, RequestLines] = {}
            for _ in range(rounds):
                measured = lifecycle(body_bytes)
            return measured
    finally:
        services.default_services.cache_clear()
        services.get_settings.cache_clear()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def lifecycle(body_bytes: int) -> dict[str, RequestLines]:
    import re

    path = f"/queues/{QUEUE}/messages"
    message = base64.b64encode(os.urandom(body_bytes)).decode()[:body_bytes]
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><Message xmlns="http://mns.aliyuncs.com/doc/v1/">'
        f"<MessageBody>{message}</MessageBody><Priority>8</Priority></Message>"
    ).encode()
    measured = {}
    with captured_stdout() as lines:
        sent = invoke("post_messages", signed_event("POST", path, body=body))
    assert sent["statusCode"] == 201, sent
    measured["send"] = RequestLines("send", [Line("application", level_of(t), t) for t in lines])
    with captured_stdout() as lines:
        got = invoke("get_messages", signed_event("GET", path, "waitseconds=0"))
    assert got["statusCode"] == 200, got
    measured["receive"] = RequestLines("receive", [Line("application", level_of(t), t) for t in lines])
    handle = re.search(r"<ReceiptHandle>([^<]+)</ReceiptHandle>", got["body"])
    assert handle is not None
    with captured_stdout() as lines:
        deleted = invoke("delete_messages", signed_event("DELETE", path, f"ReceiptHandle={handle.group(1)}"))
    assert deleted["statusCode"] == 204, deleted
    measured["delete"] = RequestLines("delete", [Line("application", level_of(t), t) for t in lines])
    return measured


def queue_body() -> bytes:
    return (
        b'<?xml version="1.0" encoding="UTF-8"?><Queue xmlns="http://mns.aliyuncs.com/doc/v1/">'
        b"<VisibilityTimeout>60</VisibilityTimeout></Queue>"
    )


def invoke(route: str, event: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = importlib.import_module(f"functions.{route}").handler(event, Context())
    return result


def main() -> None:
    from bench._common import md_table

    measured = measure()
    rows = []
    for name, settings in (("before", LogSettings.previous()), ("the stack's", LogSettings())):
        for operation, request in measured.items():
            lines = request.lines(settings)
            rows.append([name, operation, len(lines), request.billed_bytes(settings)])
            if name == "before":
                for line in lines:
                    print(f"  [{operation} {line.source} {line.level}] {line.billed:>4} B  {line.text[:150]}")
    print(md_table(["settings", "operation", "log events", "billed bytes"], rows))
    rng = __import__("random").Random(7)
    for operation, size in alb_gzipped_bytes().items():
        entry = alb_entry(operation, rng)
        print(f"ALB access log, {operation}: {len(entry)} B an entry, {size:.0f} B gzipped in S3: {entry}")


if __name__ == "__main__":
    main()
