"""The Lambda functions and EventBridge buses subscriptions push to, stood in for by the local runtime.

moto's Lambda cannot run code without Docker, so a function is a Python callable the user registers; a bus is
moto's EventBridge, whose events the runtime writes to a file, one JSON line each:

    MNS_LOCAL_FUNCTIONS=orders=my_package.handlers:on_order,audit=audit:handler
    MNS_LOCAL_EVENT_BUSES=default,orders
    MNS_LOCAL_EVENT_BUS_DIR=.mns-local/event-buses      (the default; a bus's events in {name}.jsonl)

A registered function `orders` is `arn:aws:lambda:{AWS region}:123456789012:function:orders` (moto's account; the
region is AWS_DEFAULT_REGION, us-east-1 unless set), called as Lambda calls a handler: `handler(event, context)`
with the notification as `event` (`mnsd.wire.notifications.function_payload`) and a `context` carrying
`function_name`, `invoked_function_arn` and `aws_request_id`. Returning is success; raising is the function's
error (`FunctionError: Unhandled`), as Lambda answers. A call runs at most the attempt's 5 s. A bus `orders` is
`arn:aws:events:{AWS region}:123456789012:event-bus/orders`: a rule of its own sends what MNS puts on it to an SQS
queue of moto's, which the runtime reads into the file.

Unless `MNS_PUSH_LAMBDA_ARNS` / `MNS_PUSH_EVENT_BUS_ARNS` say otherwise, subscriptions may push to exactly the
registered functions (any version or alias) and buses: any other ARN is refused at Subscribe, as the stack
refuses one that is not on its lists.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_runtime.background import BackgroundLoop
from mnsd.ground.settings import PUSH_EVENT_BUS_ARNS, PUSH_LAMBDA_ARNS
from mnsd.model.cloud_targets import cloud_target
from mnsd.push.delivery import HTTP_TIMEOUT_SECONDS
from mnsd.wire.notifications import EVENT_SOURCE

LOCAL_FUNCTIONS = "MNS_LOCAL_FUNCTIONS"
LOCAL_EVENT_BUSES = "MNS_LOCAL_EVENT_BUSES"
LOCAL_EVENT_BUS_DIR = "MNS_LOCAL_EVENT_BUS_DIR"
DEFAULT_BUS_DIR = ".mns-local/event-buses"
LOCAL_ACCOUNT = "123456789012"  # moto's account: its buses' ARNs name it
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")  # a function's name (a bus's file name: the same characters and `.`)
_BUS_NAME = re.compile(r"[A-Za-z0-9._-]{1,256}\Z")
RULE_NAME = "mns-local-record"
POLL_SECONDS = 0.1

Handler = Callable[[Any, Any], Any]


def function_arn(region: str, name: str) -> str:
    return f"arn:aws:lambda:{region}:{LOCAL_ACCOUNT}:function:{name}"


def bus_arn(region: str, name: str) -> str:
    return f"arn:aws:events:{region}:{LOCAL_ACCOUNT}:event-bus/{name}"


def registered_functions(text: str) -> dict[str, Handler]:
    """`name=module:callable,...` imported; a ValueError saying which registration is wrong."""
    functions: dict[str, Handler] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, reference = part.partition("=")
        module, _, attribute = reference.strip().partition(":")
        if not _NAME.match(name.strip()) or not module or not attribute:
            raise ValueError(f"{LOCAL_FUNCTIONS}: {part!r} is not name=module:callable (name: letters, digits, - _)")
        handler = getattr(importlib.import_module(module), attribute, None)
        if not callable(handler):
            raise ValueError(f"{LOCAL_FUNCTIONS}: {reference!r} is not a callable")
        functions[name.strip()] = handler
    return functions


def registered_buses(text: str) -> list[str]:
    buses = [b.strip() for b in text.split(",") if b.strip()]
    for bus in buses:
        if not _BUS_NAME.match(bus):
            raise ValueError(f"{LOCAL_EVENT_BUSES}: {bus!r} is not a bus name (letters, digits, . - _)")
    return buses


@dataclass(frozen=True)
class Context:
    """What a handler's `context` offers of Lambda's."""

    function_name: str
    invoked_function_arn: str
    aws_request_id: str


class ClientError(Exception):
    """A refusal shaped as botocore's (`response` with the error's code and HTTP status)."""

    def __init__(self, code: str, message: str, status: int) -> None:
        super().__init__(f"{code}: {message}")
        self.response = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}


class LocalLambda:
    """The `invoke` of a boto3 Lambda client, running the registered functions in this process."""

    def __init__(self, functions: Mapping[str, Handler], seconds: float = HTTP_TIMEOUT_SECONDS) -> None:
        self.functions = dict(functions)
        self.seconds = seconds
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="local-function")

    def invoke(self, FunctionName: str, Payload: bytes = b"{}", InvocationType: str = "RequestResponse") -> dict:  # noqa: N803
        target = cloud_target(FunctionName)
        name = target.name if target is not None else FunctionName
        handler = self.functions.get(name)
        if handler is None or (target is not None and target.account_id != LOCAL_ACCOUNT):
            raise ClientError("ResourceNotFoundException", f"Function not found: {FunctionName}", 404)
        try:
            event = json.loads(Payload)
        except ValueError:
            raise ClientError("InvalidRequestContentException", "Could not parse request body into json", 400) from None
        context = Context(name, FunctionName, secrets.token_hex(16))
        future = self._pool.submit(handler, event, context)
        try:
            result = future.result(timeout=self.seconds)
        except FutureTimeout:
            raise TimeoutError(f"Read timeout on endpoint URL: the function ran over {self.seconds} s") from None
        except Exception as error:  # the function's error, as Lambda reports an unhandled one
            said = {"errorMessage": str(error), "errorType": type(error).__name__}
            return {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": io.BytesIO(json.dumps(said).encode())}
        return {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(result).encode())}


def create_buses(clients: Callable[[str], Any], buses: list[str]) -> dict[str, str]:
    """Each bus on moto's EventBridge (`default` exists) with a rule sending MNS's events to an SQS queue of its own:
    the queues' URLs by bus name."""
    events, sqs = clients("events"), clients("sqs")
    queues: dict[str, str] = {}
    for bus in buses:
        if bus != "default":
            events.create_event_bus(Name=bus)
        url = sqs.create_queue(QueueName=f"mns-local-bus-{bus.replace('.', '_')}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events.put_rule(Name=RULE_NAME, EventBusName=bus, EventPattern=json.dumps({"source": [EVENT_SOURCE]}))
        events.put_targets(Rule=RULE_NAME, EventBusName=bus, Targets=[{"Id": "record", "Arn": arn}])
        queues[bus] = url
    return queues


class BusRecorder(BackgroundLoop):
    """Appends each event that reached a bus's queue to `{folder}/{bus}.jsonl`."""

    def __init__(self, sqs: Any, queues: Mapping[str, str], folder: Path) -> None:
        self.sqs = sqs
        self.queues = dict(queues)
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        super().__init__("event-bus-recorder")

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                self.record()
            except Exception:  # the backend is stopping
                return

    def record(self) -> None:
        with self._lock:
            for bus, url in self.queues.items():
                messages = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
                if not messages:
                    continue
                with (self.folder / f"{bus}.jsonl").open("a", encoding="utf-8") as file:
                    for message in messages:
                        file.write(json.dumps(json.loads(message["Body"]), ensure_ascii=False) + "\n")
                for message in messages:
                    self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def default_allow_lists(env: Mapping[str, str], region: str, functions: list[str], buses: list[str]) -> dict[str, str]:
    """The allow-lists' settings unless the environment gives them: the registered functions (any version or alias)
    and buses."""
    given = {
        PUSH_LAMBDA_ARNS: ",".join(f"{function_arn(region, f)},{function_arn(region, f)}:*" for f in functions),
        PUSH_EVENT_BUS_ARNS: ",".join(bus_arn(region, b) for b in buses),
    }
    return {variable: env.get(variable, value) for variable, value in given.items()}
