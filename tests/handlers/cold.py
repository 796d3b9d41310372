"""Every function of the synthesized template invoked as Lambda would first invoke it: imported fresh (cold caches),
with the template's environment for it, on moto, every AWS call it makes checked against its role
(`local_runtime.roles`).

`Deployment` makes on moto what the template's functions name (tables, queues, the retry state machine, secrets,
the data bucket, the alarm topic) and binds the template to them; `Deployment.invoke` runs one handler cold.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3

from local_runtime.push import create_push_workflow
from local_runtime.roles.calls import Place
from local_runtime.roles.enforce import Guard, every_client, read_log
from local_runtime.roles.template import UNRESOLVED, Roles
from local_runtime.tables import create_tables
from mnsd.access.authentication import sign, string_to_sign
from mnsd.access.keys import AccessKey, format_keys
from mnsd.entry.lambda_handler import request_from_event
from mnsd.ground import settings as names
from mnsd.ground.settings import Settings
from mnsd.push.signing import generate_signing_material
from mnsd.request.listener import fits
from mnsd.request.routes import ROUTES, path_parameters
from tests.support.stub_http import QuietHandler, serving

ACCOUNT, KEY_ID, SECRET = "1000000000000001", "COLDKEY", "COLDSECRET"
HOST = f"{ACCOUNT}.mns.cn-hangzhou.aliyuncs.com"
# The modules a cold start imports afresh: the layer, the functions, the jobs' and the tier's code.
FRESH = ("mnsd", "functions", "glue_jobs", "wait_tier", "console")
# Where a variable the local deployment cannot bind points (never a real host: loopback's discard port).
NOWHERE = "http://127.0.0.1:9/unbound"
# The one variable added to the template's: HTTP pushes may reach loopback (the test's endpoint, where nothing listens;
# on AWS, never set: `docs/push.md`).
LOCAL_ONLY = {"MNS_PUSH_ALLOWED_NETWORKS": "127.0.0.0/8"}


class Context:
    memory_limit_in_mb = 256
    aws_request_id = "cold"

    def __init__(self, name: str) -> None:
        self.function_name = name
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{name}"


@dataclass
class Deployment:
    """The template's resources made on moto (inside `mock_aws`), and its roles bound to them."""

    template: Path
    log: Path
    local: dict[str, str] = field(default_factory=dict)
    roles: Roles | None = None
    answers: list[tuple[str, int, str]] = field(default_factory=list)  # (function, status, body) of API calls

    def make(self) -> Deployment:
        settings = Settings()
        create_tables(boto3.client("dynamodb"), settings)
        clients = boto3.client
        state_machine, push_queue = create_push_workflow(lambda name: clients(name))  # type: ignore[arg-type]
        sqs, secrets = boto3.client("sqs"), boto3.client("secretsmanager")
        first_attempts = sqs.create_queue(
            QueueName="first-attempts.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        )["QueueUrl"]
        key, _ = generate_signing_material()

        def secret(name: str, value: str) -> str:
            return str(secrets.create_secret(Name=name, SecretString=value)["ARN"])

        boto3.client("s3").create_bucket(Bucket="mns-data")
        self.local = {
            names.META_TABLE: settings.meta_table,
            names.MESSAGE_TABLE: settings.message_table,
            names.TOPIC_MESSAGE_TABLE: settings.topic_message_table,
            names.LOG_TABLE: settings.log_table,
            names.PUSH_STATE_MACHINE_ARN: state_machine,
            names.PUSH_QUEUE_URL: push_queue,
            names.FIRST_ATTEMPT_QUEUE_URL: first_attempts,
            names.CREDENTIALS_SECRET_ARN: secret("credentials", format_keys([AccessKey(ACCOUNT, KEY_ID, SECRET)])),
            names.RECEIPT_SECRET_ARN: secret("receipt", "cold-receipt-secret"),
            names.SIGNING_KEY_SECRET_ARN: secret("signing", key),
            names.WAIT_TIER_KEY_SECRET_ARN: secret("wait-tier", "cold-wait-tier-key"),
            "MNS_EXPORT_BUCKET": "mns-data",
            names.ALARM_TOPIC_ARN: boto3.client("sns").create_topic(Name="alarms")["TopicArn"],
        }
        self.roles = Roles.load(self.template, self.local, Place())
        return self

    def environment(self, name: str) -> dict[str, str]:
        """The template's environment of `name`, resolved to the local resources (what stays unbound points nowhere)."""
        assert self.roles is not None
        variables = {k: str(v) for k, v in self.roles.environments[name].items()}
        return {**{k: NOWHERE if UNRESOLVED in v else v for k, v in variables.items()}, **LOCAL_ONLY}

    def invoke(self, name: str, event: Mapping[str, Any], role: str | None = None) -> Any:
        """`functions/{name}.py`'s handler, imported fresh with its environment, its role enforced on every client."""
        assert self.roles is not None
        guard = Guard(name, self.roles.role(role or name), self.roles.place, str(self.log))
        with cold_environment(self.environment(name)), every_client(guard):
            module = importlib.import_module(f"functions.{name}" if name != "console" else "console")
            return module.handler(dict(event), Context(name))

    def run(self, name: str, call: Any, role: str) -> Any:
        """`call()` (code beside the functions: a Glue job's, the wait tier's) under the role at `role`."""
        assert self.roles is not None
        guard = Guard(name, self.roles.role(role), self.roles.place, str(self.log))
        with every_client(guard):
            return call()

    def calls(self) -> list[dict[str, Any]]:
        return read_log(str(self.log))

    def refusals(self) -> list[str]:
        return sorted(
            {
                f"{r['function']}: {r['call']}: {r.get('refused') or r.get('undecidable')}"
                for r in self.calls()
                if r.get("refused") or r.get("undecidable")
            }
        )


@contextmanager
def cold_environment(variables: Mapping[str, str]) -> Iterator[None]:
    """A fresh process's view: only the function's variables (and the AWS ones moto needs), no module of the layer
    or the functions imported yet."""
    saved = dict(os.environ)
    kept = {k: v for k, v in saved.items() if k.startswith("AWS_") or k in ("PATH", "HOME", "PYTHONPATH", "TZ")}
    # The modules imported before are put back after: a test that runs later in this process (and the modules that
    # imported them) must meet the same classes, not a second copy of the layer.
    imported = {name: module for name, module in sys.modules.items() if name.split(".")[0] in FRESH}
    for module in imported:
        del sys.modules[module]
    os.environ.clear()
    os.environ.update({**kept, "POWERTOOLS_TRACE_DISABLED": "true", **variables})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for module in [m for m in sys.modules if m.split(".")[0] in FRESH]:
            del sys.modules[module]
        sys.modules.update(imported)


def api_event(method: str, path: str, query: str = "", body: str = "", route: str | None = None) -> dict[str, Any]:
    """An HTTP API (2.0) event of an MNS call, signed (V2) with the deployment's key as an SDK signs it."""
    route = route or f"{method} {path}"
    headers = {"host": HOST, "x-mns-version": "2015-06-06", "date": formatdate(usegmt=True)}
    if body:
        headers["content-type"] = "text/xml;charset=UTF-8"
        headers["content-md5"] = base64.b64encode(hashlib.md5(body.encode()).hexdigest().encode()).decode()
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route,
        "rawPath": quote(path),
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7"},
            "routeKey": route,
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "body": body or None,
        "isBase64Encoded": False,
    }
    # The path's parameters as API Gateway gives them: those of the route whose template the path fits.
    found = (path_parameters(r.path, path) for r in ROUTES.values() if r.method == method and fits(r.path, path))
    event["pathParameters"] = next(found, None) or None
    headers["authorization"] = (
        f"MNS {KEY_ID}:{sign(SECRET, string_to_sign(request_from_event(event), headers['date']))}"
    )
    return event


def xml(root: str, **fields: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in fields.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><{root} xmlns="http://mns.aliyuncs.com/doc/v1/">{inner}</{root}>'


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The SQS event Lambda's event source hands a batch of received messages in."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {k: str(v) for k, v in m.get("Attributes", {}).items()},
                "eventSource": "aws:sqs",
            }
            for m in messages
        ]
    }


def stream_event(items: list[dict[str, Any]], event_name: str = "INSERT") -> dict[str, Any]:
    """The DynamoDB stream event of new images `items`."""
    return {
        "Records": [
            {
                "eventID": f"cold-{i}",
                "eventName": event_name,
                "dynamodb": {
                    "NewImage": item,
                    "SequenceNumber": str(100 + i),
                    "ApproximateCreationDateTime": int(time.time()),
                },
            }
            for i, item in enumerate(items)
        ]
    }


def json_body(answer: Mapping[str, Any]) -> Any:
    return json.loads(answer["body"]) if answer.get("body", "").startswith("{") else answer.get("body")


@contextmanager
def signing_response() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback stand-in for CloudFormation's ResponseURL: (its URL, the answers PUT to it)."""
    answers: list[dict[str, Any]] = []

    class Handler(QuietHandler):
        def do_PUT(self) -> None:  # noqa: N802
            answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

    with serving(Handler) as url:
        yield f"{url}/response?signature=cold", answers
