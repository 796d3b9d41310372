"""The route functions' CPU per warm invocation, by operation of a message's life: what `bench.cost_model` bills.

    python -m bench.lambda_cpu [--runs 3] [--iterations 150]

Measured: the route functions (`functions/post_messages`, `get_messages`, `delete_messages`) are invoked with signed
HTTP API events (`bench.log_bytes`) in a fresh interpreter with the functions' environment and client configuration,
against DynamoDB served by moto in another process (so that only the function's CPU is counted), the queue created
first and the container warm. Each operation (send, receive, delete one message; and their batch forms of 16) is
timed with `time.process_time()` over `--iterations` lifecycles: the invocation's whole CPU. The DynamoDB calls
each made are counted and recorded, then replayed alone, with the functions' client configuration, against a stub
DynamoDB in another process that answers every call with an empty result (`bench.lambda_cost`'s): the caller's CPU
per call (sign, serialize, send, parse). The handler's own CPU is the invocation's less its calls'.

The model (`bench.cost_model.lambda_seconds`) keeps its shape: per invocation, the handler's CPU (per client request
it serves, and per message beyond one a batch carries), plus per DynamoDB call the caller's CPU (one figure: the
mean over the single forms' calls) and a round trip; the CPU scaled to the function's share of a vCPU. Its handler
figures are the measured invocation CPU less the calls at that mean, so that the model gives back the measured
whole at the measured calls.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench._common import ROOT, md_table, write_result
from bench.lambda_cost import STUB_SERVER
from bench.local_engine import free_port, wait_port

BATCH = 16
FORMS = ("send", "receive", "delete", "batch send", "batch receive", "batch delete")
SINGLE = FORMS[:3]
NAMESPACE = "http://mns.aliyuncs.com/doc/v1/"
MOTO_SERVER = (
    "import logging, time\nlogging.getLogger('werkzeug').setLevel(logging.ERROR)\n"
    "from moto.server import ThreadedMotoServer\n"
    "ThreadedMotoServer(port={port}, verbose=False).start()\n"
    "while True: time.sleep(3600)\n"
)


def message_xml(body_bytes: int) -> str:
    import base64

    text = base64.b64encode(os.urandom(body_bytes)).decode()[:body_bytes]
    return f"<Message><MessageBody>{text}</MessageBody><Priority>8</Priority></Message>"


class Lifecycle:
    """Send, receive and delete through the route functions, one message or a batch of 16, each invocation's CPU
    added to `cpu` by form."""

    def __init__(self, body_bytes: int) -> None:
        self.body_bytes = body_bytes
        self.cpu: dict[str, float] = dict.fromkeys(FORMS, 0.0)
        self.path = "/queues/orders/messages"

    def timed(self, form: str, route: str, event: dict[str, Any]) -> dict[str, Any]:
        from bench.log_bytes import invoke

        start = time.process_time()
        answer = invoke(route, event)
        self.cpu[form] += time.process_time() - start
        return answer

    def single(self, calls: Any = None) -> None:
        from bench.log_bytes import signed_event

        body = f'<?xml version="1.0" encoding="UTF-8"?>{message_xml(self.body_bytes)}'.replace(
            "<Message>", f'<Message xmlns="{NAMESPACE}">', 1
        )
        self.mark(calls, "send")
        sent = self.timed("send", "post_messages", signed_event("POST", self.path, body=body.encode()))
        assert sent["statusCode"] == 201, sent
        self.mark(calls, "receive")
        got = self.timed("receive", "get_messages", signed_event("GET", self.path, "waitseconds=0"))
        assert got["statusCode"] == 200, got
        handles = re.findall(r"<ReceiptHandle>([^<]+)</ReceiptHandle>", got["body"])
        assert len(handles) == 1, got
        self.mark(calls, "delete")
        deleted = self.timed(
            "delete", "delete_messages", signed_event("DELETE", self.path, f"ReceiptHandle={handles[0]}")
        )
        assert deleted["statusCode"] == 204, deleted

    def batch(self, calls: Any = None) -> None:
        from bench.log_bytes import signed_event

        messages = "".join(message_xml(self.body_bytes) for _ in range(BATCH))
        body = f'<?xml version="1.0" encoding="UTF-8"?><Messages xmlns="{NAMESPACE}">{messages}</Messages>'
        self.mark(calls, "batch send")
        sent = self.timed("batch send", "post_messages", signed_event("POST", self.path, body=body.encode()))
        assert sent["statusCode"] == 201, sent
        self.mark(calls, "batch receive")
        query = f"numOfMessages={BATCH}&waitseconds=0"
        got = self.timed("batch receive", "get_messages", signed_event("GET", self.path, query))
        assert got["statusCode"] == 200, got
        if got.get("isBase64Encoded"):
            import base64

            got["body"] = base64.b64decode(got["body"]).decode()
        handles = re.findall(r"<ReceiptHandle>([^<]+)</ReceiptHandle>", got["body"])
        assert len(handles) == BATCH, (len(handles), got["body"][:300])
        listed = "".join(f"<ReceiptHandle>{h}</ReceiptHandle>" for h in handles)
        body = f'<?xml version="1.0" encoding="UTF-8"?><ReceiptHandles xmlns="{NAMESPACE}">{listed}</ReceiptHandles>'
        self.mark(calls, "batch delete")
        deleted = self.timed("batch delete", "delete_messages", signed_event("DELETE", self.path, body=body.encode()))
        assert deleted["statusCode"] == 204, deleted
        self.mark(calls, None)

    @staticmethod
    def mark(calls: Any, form: str | None) -> None:
        if calls is not None:
            calls.form = form


class Calls:
    """Every DynamoDB call the functions make while counting, by form, with its parameters (to replay them)."""

    def __init__(self) -> None:
        self.form: str | None = None
        self.made: dict[str, list[tuple[str, dict[str, Any]]]] = {form: [] for form in FORMS}

    def __enter__(self) -> Calls:
        import copy

        from botocore.client import BaseClient

        self.original = BaseClient._make_api_call
        calls = self

        def counted(client: Any, name: str, params: dict[str, Any]) -> Any:
            if client.meta.service_model.service_name == "dynamodb" and calls.form is not None:
                calls.made[calls.form].append((name, copy.deepcopy(params)))
            return calls.original(client, name, params)

        BaseClient._make_api_call = counted
        return self

    def __exit__(self, *exc: object) -> None:
        from botocore.client import BaseClient

        BaseClient._make_api_call = self.original


def measure_here(iterations: int, body_bytes: int, stub_port: int) -> dict[str, Any]:
    """The measurement, in this process (a fresh interpreter with the functions' environment: `measure`)."""
    import boto3

    from bench._common import use_local_aws_defaults
    from bench.log_bytes import captured_stdout, invoke, queue_body, signed_event
    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.services import client_config

    use_local_aws_defaults()
    create_tables(boto3.client("dynamodb"), Settings())
    with captured_stdout():
        created = invoke("put_queue", signed_event("PUT", "/queues/orders", body=queue_body()))
    assert created["statusCode"] in (201, 204), created
    life = Lifecycle(body_bytes)
    with captured_stdout():  # the functions' log lines (written, as on Lambda; kept out of the result)
        for _ in range(5):  # warm: every route's services, clients and connections made
            life.single()
            life.batch()
        counting = 10
        with Calls() as calls:
            for _ in range(counting):
                life.single(calls)
                life.batch(calls)
        life.cpu = dict.fromkeys(FORMS, 0.0)
        for _ in range(iterations):
            life.single()
        for _ in range(max(1, iterations // 4)):
            life.batch()
    runs = {"send": iterations, "receive": iterations, "delete": iterations}
    runs.update({f"batch {op}": max(1, iterations // 4) for op in SINGLE})
    # The same calls alone, with the functions' client configuration, against the stub.
    client = boto3.client(
        "dynamodb", endpoint_url=f"http://127.0.0.1:{stub_port}", config=client_config(service="dynamodb")
    )
    client.describe_limits()  # connection and first-call setup, as a warm function has them
    alone: dict[str, float] = {}
    for form, made in calls.made.items():
        for name, params in made[:3]:  # each operation's own setup (its model loaded) before the timing
            client._make_api_call(name, params)
        start = time.process_time()
        for _ in range(max(1, 300 // max(1, len(made)))):
            for name, params in made:
                client._make_api_call(name, params)
        rounds = max(1, 300 // max(1, len(made)))
        alone[form] = (time.process_time() - start) / (rounds * len(made)) if made else 0.0
    return {
        "cpu_ms": {form: life.cpu[form] / runs[form] * 1000 for form in FORMS},
        "calls": {form: len(calls.made[form]) / counting for form in FORMS},
        "call_names": {form: sorted({name for name, _ in calls.made[form]}) for form in FORMS},
        "call_ms": {form: alone[form] * 1000 for form in FORMS},
    }


def measure(iterations: int, body_bytes: int) -> dict[str, Any]:
    """One run: a fresh moto server, stub and interpreter of the functions."""
    from bench.log_bytes import ENVIRONMENT
    from infra.observability import LogSettings

    port = free_port()
    moto = subprocess.Popen(
        [sys.executable, "-c", MOTO_SERVER.format(port=port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    stub = subprocess.Popen([sys.executable, "-c", STUB_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        wait_port(port, moto)
        assert stub.stdout is not None
        stub_port = int(stub.stdout.readline())
        env = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "TMPDIR") if name in os.environ}
        env.update(ENVIRONMENT)
        env["POWERTOOLS_LOG_LEVEL"] = LogSettings().powertools_log_level
        env["AWS_ENDPOINT_URL_DYNAMODB"] = f"http://127.0.0.1:{port}"
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "layers" / "mnsd" / "python")])
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            code = (
                "import json, sys, bench.lambda_cpu as b; "
                f"json.dump(b.measure_here({iterations}, {body_bytes}, {stub_port}), open({out.name!r}, 'w'))"
            )
            done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"measuring the functions failed:\n{done.stderr[-3000:]}")
            with open(out.name) as result:
                measured: dict[str, Any] = json.load(result)
        return measured
    finally:
        for process in (moto, stub):
            process.kill()
            process.wait()


def summary(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Medians over the runs, by form: invocation CPU, calls, CPU per call alone; the per-call figure of the model
    (the calls-weighted mean over the single forms) and the handler's CPU the model keeps (the invocation's less its
    calls at that figure)."""
    median = {
        key: {form: statistics.median(run[key][form] for run in runs) for form in FORMS}
        for key in ("cpu_ms", "calls", "call_ms")
    }
    total_calls = sum(median["calls"][form] for form in SINGLE)
    per_call = sum(median["call_ms"][form] * median["calls"][form] for form in SINGLE) / total_calls
    handler = {form: median["cpu_ms"][form] - median["calls"][form] * per_call for form in FORMS}
    per_message = {op: (handler[f"batch {op}"] - handler[op]) / (BATCH - 1) for op in SINGLE}
    return {**median, "handler_ms": handler, "per_message_ms": per_message, "per_call_ms": {"all": per_call}}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (1 min), {five:.1f} (5 min)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=150, help="single lifecycles a run (a quarter as batches)")
    parser.add_argument("--body", type=int, default=1024, help="message body bytes")
    args = parser.parse_args(argv)
    runs, loads = [], [load()]
    for run in range(args.runs):
        runs.append(measure(args.iterations, args.body))
        loads.append(load())
        print(f"run {run + 1}: {json.dumps(runs[-1]['cpu_ms'])} calls {json.dumps(runs[-1]['calls'])}", flush=True)
    s = summary(runs)
    rows = []
    for form in FORMS:
        samples = ", ".join(f"{run['cpu_ms'][form]:.2f}" for run in runs)
        alone = ", ".join(f"{run['call_ms'][form]:.2f}" for run in runs)
        rows.append(
            [
                form,
                f"{s['calls'][form]:g} ({', '.join(runs[0]['call_names'][form])})",
                f"**{s['cpu_ms'][form]:.2f}** ({samples})",
                f"{s['call_ms'][form]:.2f} ({alone})",
                f"{s['cpu_ms'][form] - s['calls'][form] * s['call_ms'][form]:.2f}",
                f"**{s['handler_ms'][form]:.2f}**",
            ]
        )
    table = md_table(
        [
            "operation",
            "DynamoDB calls per invocation",
            "invocation CPU, ms (median; runs)",
            "CPU per call alone, ms (median; runs)",
            "handler CPU: invocation less its calls alone, ms",
            "handler CPU in the model, ms",
        ],
        rows,
    )
    per_message = ", ".join(f"{op} {s['per_message_ms'][op]:.3f} ms" for op in SINGLE)
    body = f"""
{args.runs} runs, each a fresh moto server (DynamoDB), stub and interpreter of the functions; {args.iterations}
warm lifecycles of one {args.body} B message a run, and {max(1, args.iterations // 4)} of a batch of {BATCH}
(`--iterations {args.iterations} --body {args.body}`). CPU is `time.process_time()` of the functions' process at
this machine's full core: a full vCPU's. Machine load average (shared: 2 cores, others' work running): {", ".join(loads)}
(before the first run, after each): CPU time on a busy machine runs slower than on an idle one (shared caches and
cores), so these figures lean high.

{table}

The model's per-call CPU (`CPU_PER_CALL_FULL_VCPU_MS`): **{s["per_call_ms"]["all"]:.2f} ms**, the calls-weighted mean
of the single forms' calls alone. Its handler CPU per client request (`HANDLER_CPU_FULL_VCPU_MS`): the last column's
single forms; per message beyond one in a batch (`HANDLER_CPU_PER_MESSAGE_FULL_VCPU_MS`, (batch of {BATCH} less
single) / {BATCH - 1}): {per_message}. Left out: the Lambda runtime's own work around an invocation (its API
calls, the event's decoding before the handler), the log lines' delivery, X-Ray (tracing off, as the stack's log
settings deploy it unless tracing is on); moto answers as DynamoDB does, not with its timings.
"""
    print(body)
    write_result("lambda_cpu", "The route functions' CPU per warm invocation", body)


if __name__ == "__main__":
    main()
