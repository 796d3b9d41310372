"""What access control costs per request: authorization's added p50 locally, DynamoDB reads per request on AWS.

    .venv/bin/python -m bench.access [--before DIR] [--rounds 5] [--cycles 1500] [--no-http]

Four callers, each on a queue of its own account or, for the last, another account's queue:
  root key         a key without a policy (may do anything in its account)
  key with policy  3 statements, 10 actions, wildcard resources, one Deny
  STS token        temporary credentials of that key, narrowed by the token's own policy
  cross-account    another account's root key on a queue whose resource policy grants that account
(`--before DIR`: a checkout of the code before access control, e.g. f6a0b01, has only the root key.)

Locally (in-process, no HTTP): p50 / p90 of `mnsd.request.api.handle` for SendMessage, ReceiveMessage, DeleteMessage and
GetQueueAttributes over the embedded SQLite engine (`:memory:`), real clock, cycles of send -> receive -> delete ->
get attributes, the callers interleaved; every round in a fresh process, this checkout's and `--before`'s in turn.
Also, in this checkout, `authenticate()` alone and `permission_for()` + `authorize()` alone (loops of 1,000 calls).
Then, unless `--no-http`: SendMessage p50 through HTTP (the official SDK against `python -m local_runtime` in
its own process) for the root key and the key with a policy.

On AWS: the DynamoDB requests and read units of each API request, recorded over moto (`tests/support/recording.py`)
through `api.handle`, with a hand-moved clock; keys read from a Secrets Manager secret (moto) by the
functions' key store (cached 60 s). Per caller a fresh container: its first request of each kind, then a
minute of requests at 10 per simulated second (the catalog's 5 s record cache then expires 12 times).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench._common import ROOT, md_table, median, pct, write_result
from mnsd.model.policy import grant_document

ACCOUNT, OTHER = "1000000000000001", "2000000000000002"
REGION = "cn-hangzhou"
OWNER_HOST = f"{ACCOUNT}.mns.{REGION}.aliyuncs.com"  # names the owner: how another account reaches a queue
OWN_HOST = "127.0.0.1:8080"
SEND_BODY = '<?xml version="1.0" encoding="UTF-8"?><Message xmlns="http://mns.aliyuncs.com/doc/v1"><MessageBody>{}</MessageBody></Message>'
BODY_TEXT = "x" * 256
ROOT_KIND, POLICY_KIND, TOKEN_KIND, CROSS_KIND = "root key", "key with policy", "STS token", "cross-account"
KINDS = (ROOT_KIND, POLICY_KIND, TOKEN_KIND, CROSS_KIND)
OPERATIONS = ("SendMessage", "ReceiveMessage", "DeleteMessage", "GetQueueAttributes")
SECRET = "bench-keys"

KEY_POLICY = {  # 3 statements, 10 actions, wildcard resources, one Deny
    "Version": "1",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": [
                "mns:SendMessage",
                "mns:BatchSendMessage",
                "mns:ReceiveMessage",
                "mns:BatchReceiveMessage",
                "mns:DeleteMessage",
                "mns:BatchDeleteMessage",
            ],
            "Resource": [f"acs:mns:*:{ACCOUNT}:/queues/bench-*/messages"],
        },
        {
            "Effect": "Allow",
            "Action": ["mns:GetQueueAttributes", "mns:ListQueue", "mns:PeekMessage"],
            "Resource": [f"acs:mns:*:{ACCOUNT}:/queues/*"],
        },
        {"Effect": "Deny", "Action": ["mns:DeleteQueue"], "Resource": ["*"]},
    ],
}
TOKEN_POLICY = {  # narrows the key's policy to one queue
    "Version": "1",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["mns:SendMessage", "mns:ReceiveMessage", "mns:DeleteMessage", "mns:GetQueueAttributes"],
            "Resource": [f"acs:mns:*:{ACCOUNT}:/queues/bench-token*"],
        }
    ],
}
QUEUE_GRANT = grant_document(  # the shared queue's resource policy
    OTHER,
    ["mns:SendMessage", "mns:ReceiveMessage", "mns:DeleteMessage", "mns:GetQueueAttributes"],
    [f"acs:mns:{REGION}:{ACCOUNT}:/queues/bench-shared*"],
)
TOPIC_GRANT = grant_document(OTHER, ["mns:PublishMessage"], [f"acs:mns:{REGION}:{ACCOUNT}:/topics/bench-topic*"])


@dataclass(frozen=True)
class Caller:
    kind: str
    key_id: str
    secret: str
    queue: str
    host: str = OWN_HOST
    token: str | None = None


# --- one world: services, keys, queues, callers (this checkout or the one before access control) ------------


def has_access_control() -> bool:
    """Whether the checkout measured has access control (its own `mnsd`: the venv's editable install would
    answer for a package it lacks)."""
    import mnsd

    return (Path(mnsd.__file__).parent / "access").is_dir()


def access_keys() -> list[Any]:
    from mnsd.access.keys import AccessKey

    keys = [AccessKey(ACCOUNT, "ROOTKEY", "ROOTSECRET"), AccessKey(OTHER, "OTHERROOT", "OTHERSECRET")]
    if has_access_control():
        from mnsd.model.policy import Policy

        keys.append(AccessKey(ACCOUNT, "POLICYKEY", "POLICYSECRET", Policy.parse(KEY_POLICY)))
    return keys


class Signer:
    """Signed `HttpRequest`s for `api.handle`, dated by a clock (the signature's date window)."""

    def __init__(self, now: Any) -> None:
        from local_runtime.dispatch import compile_routes

        self.routes = compile_routes()
        self.now = now

    def request(self, caller: Caller, method: str, target: str, body: str = "") -> tuple[str | None, Any]:
        from local_runtime.dispatch import match_route
        from mnsd.access import authentication as auth
        from mnsd.ground.http import HttpRequest

        path, _, query = target.partition("?")
        route_name, _, params = match_route(self.routes, method, path)
        date = formatdate(self.now(), usegmt=True)
        headers = {"host": caller.host, "date": date, "content-type": "text/xml;charset=utf-8"}
        headers["x-mns-version"] = "2015-06-06"
        if caller.token:
            headers["security-token"] = caller.token
        data = body.encode()
        unsigned = HttpRequest(method, path, query, headers, data, params)
        signature = auth.sign(caller.secret, auth.string_to_sign(unsigned, date))
        headers["authorization"] = f"MNS {caller.key_id}:{signature}"
        return route_name, HttpRequest(method, path, query, headers, data, params)


def call(services: Any, signer: Signer, caller: Caller, method: str, target: str, body: str = "") -> Any:
    from mnsd.request import api

    route_name, request = signer.request(caller, method, target, body)
    return api.handle(route_name, request, services)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def set_up(services: Any, signer: Signer, now: float) -> list[Caller]:
    """Queues and callers (this checkout: the four; before access control: the root key only)."""
    root = Caller(ROOT_KIND, "ROOTKEY", "ROOTSECRET", "bench-root")
    callers = [root]
    if has_access_control():
        from mnsd.access.tokens import TokenRequest, token_policy

        parent = services.keys.lookup("POLICYKEY")
        issued = services.tokens.issue(parent, now, TokenRequest(3600, token_policy(json.dumps(TOKEN_POLICY))))
        callers += [
            Caller(POLICY_KIND, "POLICYKEY", "POLICYSECRET", "bench-policy"),
            Caller(
                TOKEN_KIND, issued.access_key_id, issued.access_key_secret, "bench-token", token=issued.security_token
            ),
            Caller(CROSS_KIND, "OTHERROOT", "OTHERSECRET", "bench-shared", host=OWNER_HOST),
        ]
    for caller in callers:
        assert call(services, signer, root, "PUT", f"/queues/{caller.queue}").status == 201
    if has_access_control():
        grant = f'<Queue xmlns="http://mns.aliyuncs.com/doc/v1"><Policy>{_escaped(json.dumps(QUEUE_GRANT))}</Policy></Queue>'
        assert call(services, signer, root, "PUT", "/queues/bench-shared?metaoverride=true", grant).status == 204
    return callers


def lifecycle(services: Any, signer: Signer, caller: Caller, timed: Any) -> None:
    """Send -> receive -> delete -> get attributes; `timed(operation, route_name, request)` makes each call."""
    messages = f"/queues/{caller.queue}/messages"
    sent = timed("SendMessage", *signer.request(caller, "POST", messages, SEND_BODY.format(BODY_TEXT)))
    assert sent.status == 201, sent.body
    received = timed("ReceiveMessage", *signer.request(caller, "GET", f"{messages}?waitseconds=0"))
    assert received.status == 200, received.body
    handle = re.search(rb"<ReceiptHandle>([^<]+)</ReceiptHandle>", received.body)
    assert handle is not None
    target = f"{messages}?ReceiptHandle={quote(handle.group(1).decode(), safe='')}"
    deleted = timed("DeleteMessage", *signer.request(caller, "DELETE", target))
    assert deleted.status == 204, deleted.body
    attributes = timed("GetQueueAttributes", *signer.request(caller, "GET", f"/queues/{caller.queue}"))
    assert attributes.status == 200, attributes.body


# --- worker: latency in-process ------------------------------------------------------------------------------


def _per_call_us(fn: Any, loops: int = 1000, repeats: int = 31) -> float:
    """Median over `repeats` of the mean time of `loops` calls, in microseconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter_ns() - start) / loops / 1000)
    return median(samples)


def isolated(services: Any, signer: Signer, callers: list[Caller]) -> dict[str, dict[str, float]]:
    """authenticate() alone, and (this checkout) permission_for() + authorize() alone, on a SendMessage."""
    return {caller.kind: _isolated(services, signer, caller) for caller in callers}


def _isolated(services: Any, signer: Signer, caller: Caller) -> dict[str, float]:
    from mnsd.access import authentication as auth
    from mnsd.request.routes import ROUTES

    route_name, request = signer.request(caller, "POST", f"/queues/{caller.queue}/messages", "")
    assert route_name is not None
    now, region = services.clock.now(), services.settings.region
    if not has_access_control():
        return {"authenticate": _per_call_us(lambda: auth.authenticate(request, services.keys, now, region=region))}
    from mnsd.access.permissions import permission_for

    tokens = services.tokens
    principal = auth.authenticate(request, services.keys, now, tokens, region=region)
    owner = OWNER_HOST.split(".")[0] if caller.host == OWNER_HOST else principal.account_id
    path, params = ROUTES[route_name].path, request.path_params

    def authorize() -> None:
        permission = permission_for("SendMessage", path, params, region, owner)
        services.authorizer.authorize(principal, permission, owner)

    return {
        "authenticate": _per_call_us(lambda: auth.authenticate(request, services.keys, now, tokens, region=region)),
        "authorize": _per_call_us(authorize),
    }


def latency_worker(cycles: int, warmup: int) -> dict[str, Any]:
    from mnsd.access.keys import StaticKeyStore, format_keys
    from mnsd.ground.clock import SystemClock
    from mnsd.ground.settings import Settings
    from mnsd.request import api
    from mnsd.services import build_services
    from mnsd.storage.sqlite import sqlite_storage

    clock = SystemClock()
    settings = Settings(region=REGION, credentials=f"{ACCOUNT}:ROOTKEY:ROOTSECRET")
    keys = StaticKeyStore(format_keys(access_keys()))
    services = build_services(settings, storage=sqlite_storage(":memory:"), keys=keys, clock=clock)
    signer = Signer(clock.now)
    callers = set_up(services, signer, clock.now())
    samples: dict[str, dict[str, list[float]]] = {c.kind: {op: [] for op in OPERATIONS} for c in callers}
    for cycle in range(warmup + cycles):
        for caller in callers:
            into = samples[caller.kind]

            def timed(
                operation: str, route_name: str | None, request: Any, into: Any = into, keep: bool = cycle >= warmup
            ) -> Any:
                start = time.perf_counter_ns()
                response = api.handle(route_name, request, services)
                if keep:
                    into[operation].append((time.perf_counter_ns() - start) / 1000)
                return response

            lifecycle(services, signer, caller, timed)
    figures = {
        kind: {op: {"p50": pct(values, 50), "p90": pct(values, 90)} for op, values in ops.items()}
        for kind, ops in samples.items()
    }
    return {"requests": figures, "isolated": isolated(services, signer, callers)}


# --- worker: DynamoDB requests per API request over moto -----------------------------------------------------


class ManualClock:
    def __init__(self, start: float) -> None:
        self.t = start

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 0)


def _tally(calls: list[Any]) -> dict[str, float]:
    meta = [c for c in calls if c.table == "mns-meta"]
    return {
        "requests": len(calls),
        "meta_reads": sum(1 for c in meta if c.op in ("GetItem", "Query", "BatchGetItem")),
        "rcu": sum(c.rcu for c in calls),
        "meta_rcu": sum(c.rcu for c in meta),
    }


def dynamodb_worker(rate: float, seconds: float) -> dict[str, Any]:
    from mnsd.access.keys import RefreshingKeyStore, format_keys
    from tests.support.recording import Call, RecordingClient, recorded_moto_services

    clock = ManualClock(time.time())
    mock, services, recorder = recorded_moto_services(clock)
    import boto3

    from mnsd.services import build_services

    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    secrets.create_secret(Name=SECRET, SecretString=format_keys(access_keys()))
    secret_reads = Counter[str]()

    def container() -> Any:
        """A fresh function container: its own key cache and catalog cache."""

        def load() -> str:
            secret_reads["n"] += 1
            return str(secrets.get_secret_value(SecretId=SECRET)["SecretString"])

        dynamodb = RecordingClient(boto3.client("dynamodb", region_name="us-east-1"), recorder)
        fresh = build_services(services.settings, dynamodb=dynamodb, clock=clock)
        fresh.keys = RefreshingKeyStore(load, clock.now)
        return fresh

    signer = Signer(clock.now)
    setup = container()
    callers = set_up(setup, signer, clock.now())
    topic_rows = topic_setup(setup, signer, callers)
    results: dict[str, Any] = {}
    for caller in callers:
        clock.sleep(10)  # past every cache of the set-up
        services = container()
        secret_reads.clear()
        per_op: dict[str, list[list[Call]]] = {op: [] for op in OPERATIONS}

        def timed(
            operation: str, route_name: str | None, request: Any, services: Any = services, per_op: Any = per_op
        ) -> Any:
            from mnsd.request import api

            recorder.reset()
            response = api.handle(route_name, request, services)
            per_op[operation].append(list(recorder.calls))
            clock.sleep(1 / rate)
            return response

        lifecycle(services, signer, caller, timed)  # the container's first request of each kind
        first = {op: _tally(calls[0]) for op, calls in per_op.items()}
        first_secret_reads = secret_reads["n"]
        for calls in per_op.values():
            calls.clear()
        started = clock.now()
        while clock.now() - started < seconds:
            lifecycle(services, signer, caller, timed)
        steady = {}
        for op, runs in per_op.items():
            tallies = [_tally(calls) for calls in runs]
            steady[op] = {k: sum(t[k] for t in tallies) / len(tallies) for k in tallies[0]}
        requests = sum(len(runs) for runs in per_op.values())
        results[caller.kind] = {
            "first": first,
            "steady": steady,
            "steady_requests": requests,
            "first_secret_reads": first_secret_reads,
            "steady_secret_reads": secret_reads["n"] - first_secret_reads,
        }
    results["publish"] = topic_rows(container, clock, rate, seconds, recorder)
    mock.stop()
    return {"dynamodb": results}


def topic_setup(services: Any, signer: Signer, callers: list[Caller]) -> Any:
    """A topic (granted to the other account when access control is there); returns the PublishMessage run."""
    root = callers[0]
    assert call(services, signer, root, "PUT", "/topics/bench-topic").status == 201
    publishers = [root]
    if has_access_control():
        grant = f'<Topic xmlns="http://mns.aliyuncs.com/doc/v1"><Policy>{_escaped(json.dumps(TOPIC_GRANT))}</Policy></Topic>'
        assert call(services, signer, root, "PUT", "/topics/bench-topic?metaoverride=true", grant).status == 204
        publishers.append(callers[-1])

    def run(container: Any, clock: ManualClock, rate: float, seconds: float, recorder: Any) -> dict[str, Any]:
        from mnsd.request import api

        rows: dict[str, Any] = {}
        for publisher in publishers:
            clock.sleep(10)
            fresh = container()
            tallies = []
            started = clock.now()
            while clock.now() - started < seconds:
                body = SEND_BODY.format(BODY_TEXT)
                route_name, request = signer.request(publisher, "POST", "/topics/bench-topic/messages", body)
                recorder.reset()
                response = api.handle(route_name, request, fresh)
                assert response.status == 201, response.body
                tallies.append(_tally(list(recorder.calls)))
                clock.sleep(1 / rate)
            first, rest = tallies[0], tallies[1:]
            rows[publisher.kind] = {
                "first": first,
                "steady": {k: sum(t[k] for t in rest) / len(rest) for k in first},
                "steady_requests": len(rest),
            }
        return rows

    return run


# --- HTTP: the official SDK against `python -m local_runtime` ------------------------------------------------


def http_sends(requests: int) -> dict[str, float]:
    """SendMessage p50 (µs) through HTTP for the root key and the key with a policy, server in its own process."""
    import tempfile

    from mns.account import Account
    from mns.queue import Message

    from bench._servers import free_port

    data = tempfile.mkdtemp(prefix="bench-access-")
    keys_file = Path(data) / "keys.json"
    keys_file.write_text(
        json.dumps(
            {
                "keys": [
                    {"account": ACCOUNT, "id": "ROOTKEY", "secret": "ROOTSECRET"},
                    {"account": ACCOUNT, "id": "POLICYKEY", "secret": "POLICYSECRET", "policy": KEY_POLICY},
                ]
            }
        )
    )
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'layers' / 'mnsd' / 'python'}:{ROOT}",
        "MNS_DATA_DIR": ":memory:",
        "MNS_PORT": str(port),
        "MNS_KEYS_FILE": str(keys_file),
        "MNS_CREDENTIALS": f"{ACCOUNT}:ROOTKEY:ROOTSECRET",
        "MNS_REGION": REGION,
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "local_runtime"],
        env=env,
        cwd=data,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        endpoint = f"http://127.0.0.1:{port}"
        root = Account(endpoint, "ROOTKEY", "ROOTSECRET")
        deadline = time.monotonic() + 30
        while True:
            try:
                root.get_queue("bench-root").create(_queue_meta())
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        root.get_queue("bench-policy").create(_queue_meta())
        queues = {
            ROOT_KIND: root.get_queue("bench-root"),
            POLICY_KIND: Account(endpoint, "POLICYKEY", "POLICYSECRET").get_queue("bench-policy"),
        }
        samples: dict[str, list[float]] = {kind: [] for kind in queues}
        for i in range(requests + 50):
            for kind, queue in queues.items():
                start = time.perf_counter_ns()
                queue.send_message(Message(BODY_TEXT))
                if i >= 50:
                    samples[kind].append((time.perf_counter_ns() - start) / 1000)
        return {kind: pct(values, 50) for kind, values in samples.items()}
    finally:
        server.terminate()
        server.wait(10)


def _queue_meta() -> Any:
    from mns.queue import QueueMeta

    return QueueMeta()


# --- parent: rounds of workers, tables, result file ----------------------------------------------------------


def run_worker(code: Path, worker: str, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "WARNING", "POWERTOOLS_METRICS_DISABLED": "true"}
    env.pop("PYTHONPATH", None)
    command = [sys.executable, "-m", "bench.access", "--worker", worker, "--code", str(code)]
    command += ["--cycles", str(args.cycles), "--warmup", str(args.warmup)]
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"worker {worker} on {code} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def worker_main(args: argparse.Namespace) -> None:
    # The checkout measured comes first on the path (this one, or `--before`'s: its `mnsd` and `local_runtime`).
    code = Path(args.code).resolve()
    sys.path[:0] = [str(code / "layers" / "mnsd" / "python"), str(code)]
    import local_runtime
    import mnsd

    for module in (mnsd, local_runtime):
        assert Path(module.__file__ or "").resolve().is_relative_to(code), module.__file__
    if args.worker == "latency":
        out = latency_worker(args.cycles, args.warmup)
    else:
        out = dynamodb_worker(rate=10.0, seconds=60.0)
    print(json.dumps(out))


def _us(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:.1f}"


def _signed(value: float) -> str:
    return ("+" if value >= 0 else "") + _us(value)


def latency_tables(rounds: dict[str, list[dict[str, Any]]]) -> tuple[str, str]:
    """(per request table, isolated table): medians over rounds; added p50s are per-round differences."""
    now, before = rounds["now"], rounds.get("before", [])
    rows = []
    for op in OPERATIONS:
        for kind in KINDS:
            p50 = [r["requests"][kind][op]["p50"] for r in now]
            p90 = [r["requests"][kind][op]["p90"] for r in now]
            vs_root = [r["requests"][kind][op]["p50"] - r["requests"][ROOT_KIND][op]["p50"] for r in now]
            vs_before = [
                a["requests"][kind][op]["p50"] - b["requests"][ROOT_KIND][op]["p50"]
                for a, b in zip(now, before, strict=True)
            ]
            rows.append(
                [
                    op,
                    kind,
                    _us(median(p50)),
                    _us(median(p90)),
                    "" if kind == ROOT_KIND else _signed(median(vs_root)),
                    _signed(median(vs_before)) if before else "n/a",
                ]
            )
        if before:
            b50 = [r["requests"][ROOT_KIND][op]["p50"] for r in before]
            b90 = [r["requests"][ROOT_KIND][op]["p90"] for r in before]
            rows.append([op, "before: root key", _us(median(b50)), _us(median(b90)), "", ""])
    headers = ["operation", "caller", "p50 µs", "p90 µs", "added p50 vs root key", "added p50 vs before (root key)"]
    iso_rows = []
    for kind in KINDS:
        authn = median([r["isolated"][kind]["authenticate"] for r in now])
        authz = median([r["isolated"][kind]["authorize"] for r in now])
        iso_rows.append([kind, f"{authn:.1f}", f"{authz:.1f}", f"{authn + authz:.1f}"])
    if before:
        authn = median([r["isolated"][ROOT_KIND]["authenticate"] for r in before])
        iso_rows.append(["before: root key", f"{authn:.1f}", "(none)", f"{authn:.1f}"])
    iso_headers = ["caller", "authenticate() µs", "permission_for() + authorize() µs", "sum µs"]
    return md_table(headers, rows), md_table(iso_headers, iso_rows)


def _per_request(t: dict[str, float]) -> str:
    return f"{t['requests']:.3g} / {t['meta_reads']:.3g} / {t['rcu']:.3g}"


def dynamodb_table(dynamo: dict[str, dict[str, Any]]) -> tuple[str, str, str]:
    """(queue operations table, PublishMessage table, Secrets Manager line)."""
    rows = []
    for name in ("before", "now"):
        if name not in dynamo:
            continue
        for kind in KINDS:
            if kind not in dynamo[name]:
                continue
            run = dynamo[name][kind]
            for op in OPERATIONS:
                label = f"{kind} ({'before' if name == 'before' else 'after'})"
                rows.append([op, label, _per_request(run["first"][op]), _per_request(run["steady"][op])])
    headers = [
        "operation",
        "caller (code)",
        "first request of a container: DynamoDB requests / meta reads / RCU",
        "steady, per request: requests / meta reads / RCU",
    ]
    publish_rows = []
    for name in ("before", "now"):
        for kind, run in dynamo.get(name, {}).get("publish", {}).items():
            label = f"{kind} ({'before' if name == 'before' else 'after'})"
            publish_rows.append(["PublishMessage", label, _per_request(run["first"]), _per_request(run["steady"])])
    secret = "; ".join(
        f"{'before' if name == 'before' else 'after'}, {kind}: {dynamo[name][kind]['first_secret_reads']} on the first request, "
        f"{dynamo[name][kind]['steady_secret_reads']} in the next {dynamo[name][kind]['steady_requests']}"
        for name in dynamo
        for kind in KINDS
        if kind in dynamo[name]
    )
    return md_table(headers, rows), md_table(headers, publish_rows), secret


def _span(values: list[float]) -> str:
    return f"{_signed(min(values))} to {_signed(max(values))} µs"


def reading(rounds: dict[str, list[dict[str, Any]]], dynamo: dict[str, dict[str, Any]]) -> str:
    """What the figures say, computed from them."""
    now, before = rounds["now"], rounds.get("before", [])

    def added(kind: str, against: list[dict[str, Any]]) -> list[float]:
        return [
            median(
                [
                    a["requests"][kind][op]["p50"] - b["requests"][ROOT_KIND][op]["p50"]
                    for a, b in zip(now, against, strict=True)
                ]
            )
            for op in OPERATIONS
        ]

    base = "the code before access control" if before else "the root key"
    against = before if before else now
    per_kind = "; ".join(f"{kind} {_span(added(kind, against))}" for kind in KINDS)
    vs_root = "; ".join(f"{kind} {_span(added(kind, now))}" for kind in KINDS[1:])
    same_ops = all(
        dynamo["now"][kind][when][op] == dynamo["now"][ROOT_KIND][when][op]
        for kind in KINDS
        for when in ("first", "steady")
        for op in OPERATIONS
    )
    same_before = "before" in dynamo and all(
        dynamo["now"][ROOT_KIND][when][op] == dynamo["before"][ROOT_KIND][when][op]
        for when in ("first", "steady")
        for op in OPERATIONS
    )
    publish = dynamo["now"]["publish"]
    extra = publish[CROSS_KIND]["steady"]["meta_reads"] - publish[ROOT_KIND]["steady"]["meta_reads"]
    return (
        f"Added p50 per request against {base}, over the four operations: {per_kind}. Against the root key of the "
        f"same code: {vs_root}. The root key's own addition is the code path every request now takes (the "
        f"authorizer's early return, the permission's strings, and whatever else changed between the two commits); "
        f"a policy adds its statements' matching, a token its opening (base64, JSON, three HMAC-SHA256) in "
        f"`authenticate()`. On AWS the DynamoDB requests, meta-table reads and read units per request are "
        f"{'the same' if same_ops else 'NOT the same'} for every caller as for the root key"
        f"{', and the same as before access control' if same_before else ''}: keys come from Secrets Manager "
        f"(one read per container per minute), a policy is evaluated in memory, and a cross-account call's read of "
        f"the queue record for its policy is the catalog's cached read the operation makes anyway (first request: "
        f"one GetItem; then one per 5 s). Topics are not cached: a cross-account PublishMessage reads the topic "
        f"record {extra:+.3g} time(s) per request more than the owner's."
    )


def report(
    args: argparse.Namespace,
    rounds: dict[str, list[dict[str, Any]]],
    dynamo: dict[str, dict[str, Any]],
    http: dict[str, float],
    elapsed: float,
) -> str:
    requests, isolated_table = latency_tables(rounds)
    queue_ops, publish, secret = dynamodb_table(dynamo)
    before = (
        f"`--before {args.before}` (a worktree of f6a0b01, the commit before access control)" if args.before else "none"
    )
    http_text = (
        md_table(
            ["caller", "SendMessage p50 µs (SDK over HTTP)", "added vs root key"],
            [
                [kind, _us(value), "" if kind == ROOT_KIND else _signed(value - http[ROOT_KIND])]
                for kind, value in http.items()
            ],
        )
        if http
        else "(not run: `--no-http`)"
    )
    return f"""
Run as: `.venv/bin/python -m bench.access {" ".join(sys.argv[1:])}`; rounds {args.rounds}, cycles {args.cycles} per caller and round (after {args.warmup} not counted),
before: {before}.

## Locally: `mnsd.request.api.handle` in-process, embedded SQLite engine (`:memory:`)

Each round is a fresh process (this checkout's and the one before access control in turn); per round and
caller, {args.cycles} cycles of SendMessage (256 B body) -> ReceiveMessage (waitseconds=0) -> DeleteMessage ->
GetQueueAttributes, the callers interleaved cycle by cycle, each on a queue of its own (the cross-account
caller on `bench-shared`, owned by the first account, whose policy grants the other). Figures: the median over
the {args.rounds} rounds of each round's p50 / p90; "added p50" is the median over rounds of that round's
difference (against the root key of the same process, or against the root key in the code before access
control). The code before access control has only root keys (no policies, no tokens, no sharing): every caller
there is compared with its root key.

{requests}

The same pieces alone (SendMessage's request, this checkout; median over 31 loops of 1,000 calls):

{isolated_table}

## Through HTTP: the official SDK against `python -m local_runtime` (its own process, `MNS_DATA_DIR=:memory:`)

{args.http_requests} SendMessage calls per caller, interleaved, after 50 not counted.

{http_text}

## On AWS: DynamoDB requests per API request (recorded over moto)

`api.handle` over the service's tables in moto, every DynamoDB call recorded and billed by `tests/support/recording.py`
(meta `GetItem` is ConsistentRead: 1 RCU). Keys from a Secrets Manager secret (moto) through the functions' key
store (`RefreshingKeyStore`, 60 s). Per caller a fresh container (empty key and catalog caches): its first request
of each kind, then 60 simulated seconds at 10 requests a second (send -> receive -> delete -> get attributes),
which the catalog's 5 s record cache covers but for one re-read per 5 s. Each cell: DynamoDB requests / reads of
the meta table (queue or topic records) / read units, per API request.

{queue_ops}

Secrets Manager reads (the key store): {secret}.

PublishMessage on a topic (topic records are not cached by the catalog), the owner's root key and the other account
granted by the topic's policy:

{publish}

## Reading

{reading(rounds, dynamo)}

Elapsed: {elapsed:.0f} s.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code before access control (f6a0b01)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cycles", type=int, default=1500, help="send/receive/delete/get cycles per caller")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--http-requests", type=int, default=1000)
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--worker", choices=("latency", "dynamodb"), help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args)
        return
    started = time.perf_counter()
    sources = [("now", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in sources}
    for r in range(args.rounds):
        for name, code in sources if r % 2 == 0 else sources[::-1]:
            rounds[name].append(run_worker(code, "latency", args))
            print(f"round {r + 1} {name}: done ({time.perf_counter() - started:.0f} s)", flush=True)
    dynamo = {name: run_worker(code, "dynamodb", args)["dynamodb"] for name, code in sources}
    http = {} if args.no_http else http_sends(args.http_requests)
    body = report(args, rounds, dynamo, http, time.perf_counter() - started)
    print(body)
    write_result("access", "Access control: authorization's cost per request, locally and in DynamoDB reads", body)


if __name__ == "__main__":
    main()
