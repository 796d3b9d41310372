"""The wait tier's cost model and its effect on a busy queue (issue 33; docs/wait_tier.md).

Measured here:
1. DynamoDB read units (moto, recording client, DynamoDB's size rules) of one idle long poll without the tier
   (the function waits and queries every 0.5 s until 28 s have passed) and of one origin call with it (one
   look at the queue, then a hold); and of the claim of one message.
2. Through the holder (`python -m wait_tier`, a process of its own, as on AWS) in front of the local server (SQLite):
   the origin calls per first and per later idle poll (consumers arriving within 2 s and polling empty queues with
   10 s waits); with 100 receives held on one queue, for messages sent through the tier (their wakes in the send's
   answer) and sent to the server directly (each posts a wake): the wake posts the server made, the origin calls per
   message (by why they were made and what they got, from the holder's counters: the wasted ones apart), and the
   latency from a send to the held receive's answer; the round trip of one wake post.
3. Side by side in one run, against the same server: a lifecycle (producers and consumers, batches of 16; rounds
   alternating), and single receive latency and CPU per process directly and through the holder.

Then $ per idle consumer-month at 10, 100 and 1,000 consumers over 20 queues, today's mode against the tier, at
list prices, and $ per message arriving each way. The figures that are not measured (the tier's fixed cost, the
billed duration of an origin call) are named with their source.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench._common import ROOT, md_table, pct, use_local_aws_defaults, write_result

# List prices, us-east-1, from the AWS pricing pages (checked 2026-11-26).
PRICES_DATE = "2026-11-26"
LAMBDA_GB_SECOND_ARM = 0.0000133334
LAMBDA_REQUEST = 0.20 / 1e6
HTTP_API_REQUEST = 1.00 / 1e6
DYNAMODB_READ_UNIT = 0.125 / 1e6
FARGATE_ARM_VCPU_HOUR = 0.03238
FARGATE_ARM_GB_HOUR = 0.00356
PUBLIC_IPV4_HOUR = 0.005
CLOUD_MAP_NAMESPACE_MONTH = 0.50  # the private DNS namespace's hosted zone
CLOUD_MAP_INSTANCE_MONTH = 0.10
CLOUD_MAP_LOOKUP = 1.00 / 1e6
SECRET_MONTH = 0.40
LOGS_MONTH = 1.00  # the tasks' and the VPC's flow logs: an allowance (CloudWatch Logs $0.50/GB ingested)
HOURS = 730
MONTH_SECONDS = 30 * 86400
# The stack: two tasks of 0.25 vCPU and 0.5 GB (infra/wait_tier.py), the receive function at 256 MB on arm64
# (infra/capacity.py).
TASKS, TASK_VCPU, TASK_GB = 2, 0.25, 0.5
RECEIVE_GB = 0.25
SEND_GB = 0.25  # the send function (every route's but the receive's: `infra.capacity.ROUTE_MEMORY`)
# An idle poll without the tier lasts 28.11 s (bench/results/lambda_cost.md, measured); with it, the client waits
# 28 s (the deadline's cap) in the tier.
TODAY_POLL_SECONDS = 28.11
TIER_POLL_SECONDS = 28.0
# The billed duration of one origin call (a look at the queue, answered at once) at 256 MB: not measured on
# Lambda; the local server answers one in 1-3 ms, and bench/results/lambda_cpu.md measured 1.23 ms of CPU per
# DynamoDB call at a full vCPU (256 MB has 0.145 of one): 8.5 ms per call, plus the request's own work and a round
# trip. 60 ms is assumed (an upper bound).
ORIGIN_CALL_SECONDS = 0.060
CONSUMERS = (10, 100, 1000)
QUEUES = 20


def tier_fixed_month() -> dict[str, float]:
    task = (TASK_VCPU * FARGATE_ARM_VCPU_HOUR + TASK_GB * FARGATE_ARM_GB_HOUR) * HOURS
    return {
        "Fargate (2 tasks, arm64, 0.25 vCPU, 0.5 GB)": TASKS * task,
        "public IPv4 addresses (2)": TASKS * PUBLIC_IPV4_HOUR * HOURS,
        "Cloud Map (namespace, 2 instances, lookups)": CLOUD_MAP_NAMESPACE_MONTH
        + TASKS * CLOUD_MAP_INSTANCE_MONTH
        + TASKS * (MONTH_SECONDS / 30) * CLOUD_MAP_LOOKUP,
        "Secrets Manager (the tier's key)": SECRET_MONTH,
        "CloudWatch Logs (tasks, VPC flow logs)": LOGS_MONTH,
    }


# --- 1. read units, in process ------------------------------------------------------------------------------


def measure_read_units() -> dict[str, float]:
    from bench.capacity import SimulatedClock
    from mnsd.model.inputs import MessageInput
    from tests.support.by_name import QueuesByName
    from tests.support.recording import recorded_moto_services

    clock = SimulatedClock(start=time.time())
    mock, services, recorder = recorded_moto_services(clock)
    try:
        queues = QueuesByName(services)
        account = "1000000000000001"
        queues.create_queue(account, "idle")
        queue = queues.get_queue(account, "idle")

        def units() -> float:
            spent = sum(c.rcu for c in recorder.calls)
            recorder.reset()
            return spent

        units()
        try:
            services.messages.receive(queue, 1, 30)
        except Exception:  # noqa: BLE001 (MessageNotExist after the whole wait)
            pass
        today = units()
        services.messages.receive_or_hold(queue, 1, 30, None, None)  # (a hold)
        tier_idle = units()
        queues.send(account, "idle", [MessageInput("m", None, 8)])
        units()
        services.messages.receive_or_hold(queue, 1, 30, None, None)  # (a claim)
        claim = units()
        return {"today_idle_poll": today, "tier_origin_call": tier_idle, "tier_claim": claim}
    finally:
        mock.stop()


# --- 2 and 3. through the holder -----------------------------------------------------------------------------


class TierRun:
    """The local server (`python -m local_runtime`, SQLite) behind a holder (`python -m wait_tier`, in a process of its
    own, as on AWS where it runs on its own tasks); the holder's counters are read from its stats path."""

    def __init__(self, directory: Path, engine: str = "sqlite", coalesce_ms: float | None = None) -> None:
        from bench._servers import free_port
        from mnsd.waiting.contract import WAKE_PATH
        from wait_tier.tier import Tier, local_url

        port, public, wakes = (free_port() for _ in range(3))
        self.key = key = secrets.token_urlsafe(24)
        self.direct = local_url(port)
        python = str(ROOT / ".venv" / "bin" / "python")
        env = dict(
            os.environ,
            MNS_PORT=str(port),
            MNS_ENGINE=engine,
            MNS_DATA_DIR=str(directory / "data"),
            MNS_WAIT_TIER_KEY=key,
            MNS_WAIT_TIER_WAKE_URL=local_url(wakes, WAKE_PATH),
            POWERTOOLS_LOG_LEVEL="WARNING",
        )
        self.log = open(directory / "server.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [python, "-m", "local_runtime"], cwd=ROOT, env=env, stdout=self.log, stderr=self.log
        )
        self.tier = Tier(self.direct, public, wakes, key, self.log, coalesce_ms).start()
        self.url = self.tier.url
        deadline = time.monotonic() + 60
        while True:
            try:
                self.account(self.direct).list_queue()
                self.account().list_queue()
                break
            except Exception:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.05)

    def stats(self) -> dict[str, Any]:
        """The holder's counters: origin calls, receives, holds, and origin calls by why and what they got."""
        return self.tier.stats()

    def account(self, url: str | None = None) -> Any:
        from mns.account import Account

        from mnsd.ground.settings import DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_SECRET

        return Account(url or self.url, DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_SECRET)

    def queue(self, name: str, url: str | None = None, create: bool = False) -> Any:
        from mns.queue import QueueMeta

        q = self.account(url).get_queue(name)
        if create:
            meta = QueueMeta()
            meta.set_visibilitytimeout(120)
            q.create(meta)
        q.set_encoding(False)
        return q

    def stop(self) -> None:
        self.tier.stop()
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


def idle_polls(run: TierRun, consumers: int, seconds: float) -> dict[str, float]:
    """Consumers arriving within 2 s and polling empty queues (10 s waits): origin calls per first poll (from the
    first arrival until every consumer is held), then polls made and origin calls per poll over `seconds`."""
    import random

    from mns.mns_exception import MNSExceptionBase

    names = [f"idle{n}" for n in range(QUEUES)]
    for name in names:
        run.queue(name, create=True)
    polls = Counter[str]()
    counting = threading.Event()
    stop = time.monotonic() + 12 + seconds

    def consume(n: int) -> None:
        time.sleep(random.uniform(0, 2))  # noqa: S311 (arrivals spread over 2 s)
        q = run.queue(names[n % QUEUES])
        while time.monotonic() < stop:
            polls["counted" if counting.is_set() else "before"] += 1  # (its origin call comes right after)
            try:
                q.receive_message(10)
            except MNSExceptionBase:
                pass

    before = run.stats()
    threads = [threading.Thread(target=consume, args=(n,)) for n in range(consumers)]
    for t in threads:
        t.start()
    while run.stats()["holds"] - before["holds"] < consumers:
        time.sleep(0.05)
    first = (run.stats()["origin_calls"] - before["origin_calls"]) / consumers
    time.sleep(11)  # (the first polls end; the second ones are held)
    counting.set()
    counted = run.stats()["origin_calls"]
    time.sleep(seconds)
    calls, made = run.stats()["origin_calls"] - counted, polls["counted"]
    for t in threads:
        t.join(30)
    return {"polls": made, "origin_calls_per_first_poll": first, "origin_calls_per_poll": calls / made}


def spent(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """The holder's origin calls between two `TierRun.stats`, by why and what they got (`Holder.calls`)."""
    keys = set(before["calls"]) | set(after["calls"])
    return {k: after["calls"].get(k, 0) - before["calls"].get(k, 0) for k in sorted(keys)}


def wasted(calls: dict[str, int]) -> int:
    """Origin calls that held a request the tier held already, or asked again at once: a wake or a re-ask that found
    nothing (a claim, and a fresh request's hold when nothing is receivable, are necessary)."""
    return sum(n for k, n in calls.items() if k.endswith(".held") and not k.startswith("first."))


ROUTES = ("through the tier", "directly")  # the two ways a sent message reaches the origin (`wakes`)


def wake_posts(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """The wakes the holder took between two `TierRun.stats`, by where from: `posted` (the server's POSTs to the wake
    route: with one holder, every wake post the server made), `answered` (in the origin's answers to requests the
    holder passed on, no post), `relayed`."""
    keys = set(before.get("wakes", {})) | set(after.get("wakes", {})) | {"posted", "answered"}
    return {k: int(after.get("wakes", {}).get(k, 0)) - int(before.get("wakes", {}).get(k, 0)) for k in sorted(keys)}


def wakes(run: TierRun, waiters: int, messages: int, route: str) -> dict[str, Any]:
    """`waiters` receives held on one queue, `messages` sent one at a time `route` ("through the tier": to the holder,
    as `-c waitTier=grip` routes sends on AWS; "directly": to the server, as a send reaches its function without the
    tier): origin calls of receives per message (by why and what they got), the wake posts the server made and the
    wakes that came in its answers, every message received once. The deletes go to the server directly (they make
    nothing receivable, and so the holder's origin calls are the receives' and the sends')."""
    from mns.mns_exception import MNSExceptionBase
    from mns.queue import Message

    name = f"busy{time.monotonic_ns()}"
    run.queue(name, create=True)
    owners: Counter[str] = Counter()
    done = threading.Event()

    def consume() -> None:
        q, d = run.queue(name), run.queue(name, run.direct)
        while not done.is_set():
            try:
                m = q.receive_message(10)
            except MNSExceptionBase:
                continue
            owners[m.message_body] += 1
            d.delete_message(m.receipt_handle)

    threads = [threading.Thread(target=consume, daemon=True) for _ in range(waiters)]
    before = run.stats()["holds"]
    for t in threads:
        t.start()
    while run.stats()["holds"] < before + waiters:
        time.sleep(0.05)
    first = run.stats()
    producer = run.queue(name, run.url if route == ROUTES[0] else run.direct)
    for n in range(messages):
        producer.send_message(Message(f"n{n}"))
    deadline = time.monotonic() + 120
    while len(owners) < messages and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)  # (the consumers' last polls held)
    last = run.stats()
    calls = spent(first, last)
    if route == ROUTES[0]:  # (each send through the holder is one origin call of its own, answered: not a receive's)
        calls["first.answered"] -= messages
    done.set()
    for t in threads:
        t.join(15)
    told = wake_posts(first, last)
    return {
        "origin_calls_per_message": sum(calls.values()) / messages,
        "wasted_per_message": wasted(calls) / messages,
        "posts_per_message": told["posted"] / messages,
        "answered_per_message": told["answered"] / messages,
        "calls": calls,
        "lost": messages - len(owners),
        "received_twice": sum(1 for c in owners.values() if c > 1),
    }


def post_round_trip(run: TierRun, n: int) -> list[float]:
    """Seconds of `n` wake posts as the server makes them (`mnsd.waiting.wakes.KeptAlivePost`, kept alive) to the
    holder's wake route, for a channel no one waits on: what a send that does not come through the tier waits for
    before it answers (locally, over loopback)."""
    import json

    from mnsd.waiting.contract import WAKE_PATH, wake_document
    from mnsd.waiting.wakes import KeptAlivePost
    from wait_tier.tier import local_url

    post = KeptAlivePost(local_url(run.tier.wake_port, WAKE_PATH))
    body = json.dumps(wake_document(f"nobody{time.monotonic_ns()}", count=1)).encode()
    found = []
    for _ in range(n + 10):
        t0 = time.perf_counter()
        post(body)
        found.append(time.perf_counter() - t0)
    return found[10:]


def wake_latency(run: TierRun, n: int, sender_url: str) -> list[float]:
    """Seconds from a send to `sender_url` (returned) to the held receive's answer, `n` times."""
    from mns.queue import Message

    name = f"latency{time.monotonic_ns()}"
    run.queue(name, create=True)
    sender = run.queue(name, sender_url)
    found: list[float] = []
    for i in range(n):
        result: dict[str, float] = {}
        holds = run.stats()["holds"]

        def receive(into: dict[str, float]) -> None:
            run.queue(name).receive_message(10)
            into["at"] = time.perf_counter()

        t = threading.Thread(target=receive, args=(result,))
        t.start()
        while run.stats()["holds"] <= holds:
            time.sleep(0.005)
        time.sleep(0.2)
        sender.send_message(Message(f"l{i}"))
        sent = time.perf_counter()
        t.join(15)
        found.append(result["at"] - sent)
    return found


def lifecycle(run: TierRun, via_tier: bool, total: int) -> float:
    """4 producers and 4 consumers (batches of 16, 1 s polls) move `total` messages: messages per second. The
    consumers receive through the tier or directly; everything else takes the direct route (as on AWS)."""
    from mns.mns_exception import MNSExceptionBase
    from mns.queue import Message

    name = f"life{time.monotonic_ns()}"
    run.queue(name, run.direct, create=True)
    total -= total % 16  # (whole batches)
    received = Counter[str]()
    lock = threading.Lock()
    done = threading.Event()

    def produce(worker: int) -> None:
        q = run.queue(name, run.direct)
        for _ in range(worker, total // 16, 4):
            q.batch_send_message([Message("x" * 1024) for _ in range(16)])

    def consume() -> None:
        q, d = run.queue(name, run.url if via_tier else run.direct), run.queue(name, run.direct)
        while not done.is_set():
            try:
                got = q.batch_receive_message(16, 1)
            except MNSExceptionBase:
                continue
            d.batch_delete_message([m.receipt_handle for m in got])
            with lock:
                received["n"] += len(got)
                if received["n"] >= total:
                    done.set()

    started = time.perf_counter()
    threads = [threading.Thread(target=produce, args=(w,)) for w in range(4)]
    threads += [threading.Thread(target=consume) for _ in range(4)]
    for t in threads:
        t.start()
    done.wait(180)
    elapsed = time.perf_counter() - started
    for t in threads:
        t.join(15)
    return received["n"] / elapsed


class Connects:
    """Counts the TCP connections the MNS Python SDK opens (it keeps one alive unless the answer says close)."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> Connects:
        from mns.mns_http import MNSHTTPConnection

        self._connect = MNSHTTPConnection.connect
        counted = self

        def connect(connection: Any) -> None:
            counted.count += 1
            self._connect(connection)

        MNSHTTPConnection.connect = connect
        return self

    def __exit__(self, *exc: object) -> None:
        from mns.mns_http import MNSHTTPConnection

        MNSHTTPConnection.connect = self._connect


def receive_connections(run: TierRun, url: str, n: int) -> int:
    """Connections the SDK opened for `n` + 10 single receives sent to `url` (the sends and deletes go directly, over
    their own client's kept-alive connection, not counted)."""
    with Connects() as counted:
        receive_latency(run, url, n)
    return counted.count - 1


def receive_latency(run: TierRun, url: str, n: int) -> list[float]:
    """ms of single receives of a message already there, sent to `url` (the server, or the holder)."""
    from mns.queue import Message

    name = f"lat{time.monotonic_ns()}"
    direct = run.queue(name, run.direct, create=True)
    q = run.queue(name, url)
    found = []
    for _ in range(n + 10):
        direct.send_message(Message("x"))
        t0 = time.perf_counter()
        m = q.receive_message(1)
        found.append((time.perf_counter() - t0) * 1000)
        direct.delete_message(m.receipt_handle)
    return found[10:]


def _cpu_seconds(pid: int) -> tuple[str, float]:
    """A process's name and the CPU it has used (user and system, s), from /proc (Linux)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rpartition(")")[2].split()
    return stat[stat.index("(") + 1 : stat.rindex(")")], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_receive(run: TierRun, url: str, n: int) -> dict[str, float]:
    """CPU ms per single receive (with its message's send and delete, both direct) of the server and of the holder,
    receives sent to `url`."""
    assert run.tier.process is not None
    pids = {"server": run.proc.pid, "holder": run.tier.process.pid}
    before = {name: _cpu_seconds(pid)[1] for name, pid in pids.items()}
    receive_latency(run, url, n)
    return {name: (_cpu_seconds(pid)[1] - before[name]) * 1000 / (n + 10) for name, pid in pids.items()}


# --- the model ------------------------------------------------------------------------------------------------


def month(per_poll: float, poll_seconds: float) -> float:
    return per_poll * MONTH_SECONDS / poll_seconds


def today_per_consumer(read_units: float) -> dict[str, float]:
    polls = MONTH_SECONDS / TODAY_POLL_SECONDS
    return {
        "HTTP API": polls * HTTP_API_REQUEST,
        "Lambda requests": polls * LAMBDA_REQUEST,
        "Lambda duration": polls * TODAY_POLL_SECONDS * RECEIVE_GB * LAMBDA_GB_SECOND_ARM,
        "DynamoDB reads": polls * read_units * DYNAMODB_READ_UNIT,
    }


def tier_per_consumer(calls_per_poll: float, read_units_per_call: float) -> dict[str, float]:
    polls = MONTH_SECONDS / TIER_POLL_SECONDS
    calls = polls * calls_per_poll
    return {
        "HTTP API": polls * HTTP_API_REQUEST,
        "Lambda requests": calls * LAMBDA_REQUEST,
        "Lambda duration": calls * ORIGIN_CALL_SECONDS * RECEIVE_GB * LAMBDA_GB_SECOND_ARM,
        "DynamoDB reads": calls * read_units_per_call * DYNAMODB_READ_UNIT,
    }


def per_message_cost(posts: float, origin_calls: float, claim_units: float, post_seconds: float) -> dict[str, float]:
    """$ per message the tier adds over the direct route's own requests, for messages arriving with `posts` wake posts
    each (measured: 0 for a send through the tier, whose wakes come back in its answer; 1 for one sent to its function
    directly), `origin_calls` origin calls of the held receives per message, `claim_units` read units an origin call
    reads and `post_seconds` a post's round trip, which the sending function waits for before it answers."""
    return {
        "wake posts (HTTP API)": posts * HTTP_API_REQUEST,
        "the send waiting for its post (Lambda duration)": posts * post_seconds * SEND_GB * LAMBDA_GB_SECOND_ARM,
        "origin calls (Lambda)": origin_calls
        * (LAMBDA_REQUEST + ORIGIN_CALL_SECONDS * RECEIVE_GB * LAMBDA_GB_SECOND_ARM),
        "origin calls (DynamoDB reads)": origin_calls * claim_units * DYNAMODB_READ_UNIT,
    }


def money(value: float) -> str:
    return f"${value:,.3f}" if value < 10 else f"${value:,.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--idle-consumers", type=int, default=40)
    parser.add_argument("--waiters", type=int, default=100)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--lifecycle", type=int, default=3200)
    parser.add_argument("--wake-rounds", type=int, default=3, help="rounds of --waiters and --messages")
    parser.add_argument("--rounds", type=int, default=5, help="lifecycle rounds each way, alternating")
    args = parser.parse_args()
    use_local_aws_defaults()

    started_load = os.getloadavg()
    units = measure_read_units()
    print("read units:", units)
    run = TierRun(Path(tempfile.mkdtemp(prefix="mns-wait-tier-bench-")))
    try:
        idle = idle_polls(run, args.idle_consumers, args.idle_seconds)
        print("idle:", idle)
        wake_rounds: dict[str, list[dict[str, Any]]] = {route: [] for route in ROUTES}
        for _ in range(args.wake_rounds):
            for route in ROUTES:
                wake_rounds[route].append(wakes(run, args.waiters, args.messages, route))
                print("wakes", route, wake_rounds[route][-1])
        latencies = {route: wake_latency(run, 20, run.url if route == ROUTES[0] else run.direct) for route in ROUTES}
        print("wake latency p50:", {route: statistics.median(ms) for route, ms in latencies.items()})
        post_seconds = post_round_trip(run, 200)
        print("wake post round trip p50:", statistics.median(post_seconds))
        rates: dict[bool, list[float]] = {True: [], False: []}
        hops = {"direct": run.direct, "through the holder": run.url}
        receives: dict[str, list[float]] = {hop: [] for hop in hops}
        for _ in range(args.rounds):
            for via in (False, True):
                rates[via].append(lifecycle(run, via, args.lifecycle))
                print("lifecycle", "tier" if via else "direct", f"{rates[via][-1]:.0f}")
            for hop, url in hops.items():
                receives[hop] += receive_latency(run, url, 100)
        cpu = {hop: cpu_per_receive(run, url, 300) for hop, url in hops.items()}
        print("cpu ms per receive:", cpu)
        connects = {hop: receive_connections(run, url, 100) for hop, url in hops.items()}
        print("connections for 110 receives:", connects)
        load = os.getloadavg()
    finally:
        run.stop()

    fixed = tier_fixed_month()
    fixed_total = sum(fixed.values())
    today = today_per_consumer(units["today_idle_poll"])
    tier = tier_per_consumer(idle["origin_calls_per_poll"], units["tier_origin_call"])
    today_total, tier_variable = sum(today.values()), sum(tier.values())
    rows = [
        [f"{n:,}", money(today_total), money(fixed_total / n), money(tier_variable), money(fixed_total / n + tier_variable)]
        for n in CONSUMERS
    ]  # fmt: skip
    break_even = next(n for n in range(1, 10_000) if fixed_total / n + tier_variable < today_total)
    woken = {
        "lost": sum(w["lost"] for ws in wake_rounds.values() for w in ws),
        "received_twice": sum(w["received_twice"] for ws in wake_rounds.values() for w in ws),
        "calls": Counter[str](),
    }
    for ws in wake_rounds.values():
        for w in ws:
            woken["calls"].update(w["calls"])

    def median(route: str, key: str) -> float:
        return statistics.median(w[key] for w in wake_rounds[route])

    post_p50 = statistics.median(post_seconds)
    arrivals = {
        route: per_message_cost(
            median(route, "posts_per_message"), median(route, "origin_calls_per_message"), units["tier_claim"], post_p50
        )
        for route in ROUTES
    }
    arrival_rows = [
        [
            route,
            f"{median(route, 'posts_per_message'):.2f}",
            f"{median(route, 'answered_per_message'):.2f}",
            f"{median(route, 'origin_calls_per_message'):.2f} / {median(route, 'wasted_per_message'):.2f}",
            f"{statistics.median(latencies[route]) * 1000:.0f} / {pct(latencies[route], 99) * 1000:.0f}",
            *(f"${v * 1e6:,.3f}" for v in arrivals[route].values()),
            f"**${sum(arrivals[route].values()) * 1e6:,.3f}**",
        ]
        for route in ROUTES
    ]
    ratio = statistics.median(rates[True]) / statistics.median(rates[False])
    added = statistics.median(receives["through the holder"]) - statistics.median(receives["direct"])
    options = " ".join(sys.argv[1:])
    body = f"""
This run: `.venv/bin/python -m bench.wait_tier{" " + options if options else ""}`.

Prices: us-east-1 list prices of {PRICES_DATE} (Lambda arm64 ${LAMBDA_GB_SECOND_ARM}/GB-s and $0.20 per million
requests; HTTP API $1.00 per million; DynamoDB on demand $0.125 per million read units; Fargate arm64
${FARGATE_ARM_VCPU_HOUR}/vCPU-h and ${FARGATE_ARM_GB_HOUR}/GB-h; public IPv4 ${PUBLIC_IPV4_HOUR}/h; Cloud Map $0.50 per
namespace, $0.10 per instance and $1 per million lookups a month; Secrets Manager $0.40 per secret). The receive
function at 256 MB (the stack's default), {QUEUES} queues; a month of {MONTH_SECONDS // 86400} days.

## What an idle consumer costs a month

A consumer that polls an empty queue back to back (30 s waits): without the tier each poll is a Lambda
invocation of {TODAY_POLL_SECONDS} s; with it, one short origin call (then the holder holds the request 28 s).

{md_table(["consumers", "today (no tier)", "tier: fixed share", "tier: per consumer", "with the tier, all-in"], rows)}

**The tier pays for itself from {break_even} idle consumers** (its fixed cost, {money(fixed_total)} a month, is
then less than what those consumers' waits cost in Lambda).

Per idle consumer-month without the tier: {", ".join(f"{k} {money(v)}" for k, v in today.items())}.
With the tier: {", ".join(f"{k} {money(v)}" for k, v in tier.items())}.
The tier's fixed cost: {", ".join(f"{k} {money(v)}" for k, v in fixed.items())}.

## Per message: the two ways a sent message arrives

With `-c waitTier=grip` the API sends `POST /queues/{{queue}}/messages` (single and batch sends) through the tier: the
send function answers the holder with the message's wake in its answer (`Mns-Wait-Wakes`), and the holder wakes its
own held receives and relays the wake to the other tasks, so **such a send posts no wake**. What reaches a function
without the tier (a send to the server directly, or any send without the tier's flag, where no one holds receives
anyway), and every other event that makes a message receivable (pushes to a queue endpoint, ChangeMessageVisibility,
rewinds, dead-letter redrives, a receiver's copy), **posts one wake** to the API's IAM wake route: an HTTP API
request and a round trip the sending function waits for before it answers. Measured on each route with
{args.waiters} receives held on one queue, {args.messages:,} messages sent one at a time, {args.wake_rounds} rounds
each way, alternating (medians of the rounds; the wake posts are the holder's count of what the server posted to its
wake route, the answered ones what it read in the origin's answers); $ per million messages over the direct
route's own requests:

{
        md_table(
            [
                "route of the send",
                "wake posts per message",
                "wakes in answers per message",
                "origin calls of receives per message / wasted",
                "send to a held receive's answer p50 / p99 ms",
                *(f"{k} $/M" for k in arrivals[ROUTES[0]]),
                "total $/M",
            ],
            arrival_rows,
        )
    }

The post's round trip, {post_p50 * 1000:.2f} ms at p50 (p99 {pct(post_seconds, 99) * 1000:.2f} ms), is the server's own
kept-alive post to the holder's wake route over loopback, 200 posts; on AWS the post is SigV4-signed and crosses the
HTTP API and its VPC link (not measured there), so its duration share is a lower bound. Lost: {woken["lost"]:.0f},
received twice: {woken["received_twice"]:.0f}.

## Measured

| figure | value | how |
|---|---|---|
| read units of one idle poll without the tier | {
        units[
            "today_idle_poll"
        ]:g} | moto, recording client: a 30 s receive on an empty queue (a Query every 0.5 s until 28 s) |
| read units of one origin call of an idle poll, with the tier | {
        units["tier_origin_call"]:g} | the same: one look, then the hold |
| read units of one claim through the tier | {units["tier_claim"]:g} | the same, a message there |
| origin calls per first idle poll | {idle["origin_calls_per_first_poll"]:.2f} | {
        args.idle_consumers
    } consumers arriving within 2 s over {QUEUES} empty queues, 10 s waits, until each is held |
| origin calls per later idle poll | {idle["origin_calls_per_poll"]:.2f} | the same consumers, counted over {
        args.idle_seconds:.0f} s ({idle["polls"]:.0f} polls) after their first polls |

Origin calls of the receives in the {2 * args.wake_rounds} rounds with {
        args.waiters
    } held receives (both routes; a send through the tier's own call taken out), by why they were made and what they
got (`first`: a client's request; `woken`: a held one asked again after its wake; `reask`: a look again after a wake
that came while the origin looked; `answered`: a claim, `held`: nothing receivable). Necessary: a claim per message (the `answered` ones) and a hold for a client's
request that finds the queue empty (`first.held`); the other `held` ones are wasted:
{", ".join(f"{k} {n}" for k, n in sorted(woken["calls"].items()))}.

Assumed (not measured on AWS): an origin call is billed {ORIGIN_CALL_SECONDS * 1000:.0f} ms at 256 MB; logs
${LOGS_MONTH:.2f} a month. Doubling the origin call's duration adds ${tier["Lambda duration"]:.3f} per consumer-month.

## A busy queue through the tier and directly (same server, same run)

The holder runs as its own process (`python -m wait_tier`), as on AWS; the machine is shared (2 cores; other work
ran on it: load average {started_load[0]:.1f} / {started_load[1]:.1f} / {started_load[2]:.1f} at the start,
{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end), so the rounds alternate and
contention falls on both routes alike.
Lifecycle: 4 producers and 4 consumers (batches of 16, 1 s waits, 1 KB bodies), {args.lifecycle:,} messages a round;
consumers receive through the tier or directly; sends and deletes go directly in both (on AWS with the tier they go
through it too: this compares the receive route alone). Through the tier: **{ratio:.2f}** of the direct route's median
(round by round, each tier round against the direct round before it: {
        " ".join(f"{t / d:.2f}" for t, d in zip(rates[True], rates[False], strict=True))
    }).

{
        md_table(
            ["route of the receives", "lifecycle msg/s (each round)", "median msg/s"],
            [
                [label, " ".join(f"{r:,.0f}" for r in rates[via]), f"{statistics.median(rates[via]):,.0f}"]
                for label, via in (("direct", False), ("through the tier", True))
            ],
        )
    }

Single receives of a message already there, {100 * args.rounds} on each route (between the lifecycle rounds), and the
client's TCP connections for 110 of them (counted with the SDK's own connection class). The holder adds
**{added:.2f} ms** at p50.

{
        md_table(
            ["route", "receive p50 ms", "receive p99 ms", "client connections for 110 receives"],
            [
                [hop, f"{statistics.median(ms):.2f}", f"{pct(ms, 99):.2f}", f"{connects[hop]}"]
                for hop, ms in receives.items()
            ],
        )
    }

CPU per single receive of a message already there (ms, with its send and delete on the direct route; the server's
wake post to the holder after each send is in both), by process, 300 receives on each route:

{
        md_table(
            ["route", *sorted({p for spent in cpu.values() for p in spent})],
            [
                [hop, *(f"{cpu[hop].get(p, 0):.2f}" for p in sorted({p for spent in cpu.values() for p in spent}))]
                for hop in cpu
            ],
        )
    }

Locally the tier shares the machine's 2 cores with the server and the clients; on AWS it runs on its own tasks,
and a receive of a busy queue is one origin call either way.
"""
    write_result("wait_tier", "The wait tier: cost per idle consumer, wakes, and a busy queue through it", body)


if __name__ == "__main__":
    main()
