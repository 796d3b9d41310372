"""What the console's minute chart costs the local runtime (issue 26, part 3).

1. Per request, in-process (`mnsd.request.api.handle` + the sink's flush), SQLite `:memory:`, real clock: SendMessage,
   ReceiveMessage (waitseconds=0) and DeleteMessage in two worlds interleaved cycle by cycle: "counters" (the local
   runtime's `ProcessMetrics` alone, as before) and "counters + minutes" (`TeeMetrics(ProcessMetrics, MinuteRing)`,
   as `make run` now counts).
2. The ring's memory for 1,000 queues busy in every minute of the hour (tracemalloc).
3. On `LocalServer` (SQLite engine on a file, as `make run`) holding 1,000 queues with messages: one round of the
   gauge sampler (`local_runtime.minutes.sample_gauges`), and `GET /queues/{q}?metrics=minutely` over HTTP.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import urllib.request
from typing import Any

from bench._common import md_table, pct, write_result
from bench.access import Caller, Signer
from bench.metrics import ACCOUNT, arguments, populated_server, quiet_local_defaults, round_trip, services_over

OPERATIONS = ("SendMessage", "ReceiveMessage", "DeleteMessage")
WORLDS = ("counters", "counters + minutes")


def world(kind: str) -> Any:
    from mnsd.ground.clock import SystemClock
    from mnsd.metrics import MetricsSink, TeeMetrics
    from mnsd.metrics.process import ProcessMetrics
    from mnsd.metrics.ring import MinuteRing
    from mnsd.storage.sqlite import sqlite_storage

    clock = SystemClock()
    sink: MetricsSink = ProcessMetrics() if kind == WORLDS[0] else TeeMetrics(ProcessMetrics(), MinuteRing(clock))
    return services_over(sqlite_storage(":memory:"), clock, sink)


def request_costs(cycles: int, warmup: int) -> dict[str, dict[str, list[float]]]:
    from mnsd.request import api

    worlds = {kind: world(kind) for kind in WORLDS}
    caller = Caller("root", "KEY", "SECRET", "bench-minutes")
    signer = Signer(time.time)
    for services in worlds.values():
        assert api.handle(*signer.request(caller, "PUT", f"/queues/{caller.queue}"), services).status == 201
    samples: dict[str, dict[str, list[float]]] = {kind: {op: [] for op in OPERATIONS} for kind in WORLDS}

    def timed(kind: str, operation: str, request: tuple[str | None, Any], keep: bool) -> Any:
        services = worlds[kind]
        start = time.perf_counter_ns()
        response = api.handle(*request, services)
        services.metrics.flush()
        if keep:
            samples[kind][operation].append((time.perf_counter_ns() - start) / 1000)
        return response

    for cycle in range(warmup + cycles):
        keep = cycle >= warmup
        for kind in WORLDS[cycle % 2 :] + WORLDS[: cycle % 2]:  # each world first in turn
            round_trip(timed, kind, signer, caller, keep)
    return samples


def ring_memory(queues: int) -> int:
    from mnsd.ground.clock import SystemClock
    from mnsd.metrics import MESSAGES_SENT, MESSAGES_VISIBLE, queue_labels
    from mnsd.metrics.minutes import MINUTE_MS, WINDOW_MINUTES
    from mnsd.metrics.ring import MinuteRing

    class Hand(SystemClock):
        at = 1_700_000_000.0

        def now(self) -> float:
            return self.at

    clock = Hand()
    ring = MinuteRing(clock)
    labels = [queue_labels(ACCOUNT, f"bench-{n:04d}") for n in range(queues)]
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for minute in range(WINDOW_MINUTES):
        for one in labels:
            ring.add(MESSAGES_SENT, one)
            ring.record_gauges(one, {MESSAGES_VISIBLE: minute}, int(clock.at * 1000))
        clock.at += MINUTE_MS / 1000
    used = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    return used


def local_server(queues: int, rounds: int, reads: int) -> dict[str, list[float]]:
    from local_runtime.minutes import sample_gauges
    from mnsd.access import authentication as auth
    from mnsd.ground.clock import ms
    from mnsd.ground.http import HttpRequest

    with populated_server(queues) as server:
        service = server.services.queues
        sampled = []
        for _ in range(rounds):
            start = time.perf_counter()
            assert sample_gauges(service, server.ring, ms(time.time())) == queues
            sampled.append(time.perf_counter() - start)
        read = []
        for _ in range(reads):
            date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
            headers = {"x-mns-version": "2015-06-06", "x-mns-date": date}
            unsigned = HttpRequest("GET", "/queues/bench-0500", "metrics=minutely", headers, b"", {})
            signature = auth.sign("SECRET", auth.string_to_sign(unsigned, date))
            request = urllib.request.Request(
                server.endpoint + "/queues/bench-0500?metrics=minutely",
                headers={**headers, "Authorization": f"MNS KEY:{signature}"},
            )
            start = time.perf_counter()
            with urllib.request.urlopen(request, timeout=30) as response:
                assert b"<Minutes>60</Minutes>" in response.read()
            read.append(time.perf_counter() - start)
        return {"sampled": sampled, "read": read}


def report(args: argparse.Namespace, samples: dict[str, dict[str, list[float]]], memory: int, local: Any) -> str:
    rows = []
    for op in OPERATIONS:
        before, after = samples[WORLDS[0]][op], samples[WORLDS[1]][op]
        rows.append(
            [
                op,
                len(after),
                f"{pct(before, 50):.0f} / {pct(before, 90):.0f}",
                f"{pct(after, 50):.0f} / {pct(after, 90):.0f}",
            ]
            + [f"{pct(after, 50) - pct(before, 50):+.1f}"]
        )
    requests = md_table(
        ["operation", "samples", "counters p50 / p90 µs", "+ minutes p50 / p90 µs", "added p50 µs"], rows
    )
    sampled, read = sorted(local["sampled"]), sorted(local["read"])
    server = md_table(
        ["what", "runs", "p50 s", "max s"],
        [
            [f"a sampler round, {args.queues} queues", len(sampled), f"{pct(sampled, 50):.3f}", f"{sampled[-1]:.3f}"],
            ["`GET /queues/{q}?metrics=minutely` (HTTP)", len(read), f"{pct(read, 50):.4f}", f"{read[-1]:.4f}"],
        ],
    )
    return f"""
Run as: `.venv/bin/python -m bench.minute_metrics --cycles {args.cycles} --queues {args.queues}`.

## Per request, in-process (`api.handle` + the sink's flush), SQLite `:memory:`

{args.cycles} cycles after {args.warmup} not counted, the two worlds interleaved cycle by cycle (each first in turn).

{requests}

## The ring's memory

{args.queues} queues, each counted and its gauges recorded in every minute of the hour: {memory / 1e6:.2f} MB
({memory / args.queues / 1000:.2f} KB a queue; an idle queue with no messages has no ring).

## The local server (SQLite engine on a file), {args.queues} queues with 3 messages each, one in flight

{server}
"""


def main() -> None:
    args = arguments(__doc__, ("rounds", 10), ("reads", 50))
    quiet_local_defaults()
    samples = request_costs(args.cycles, args.warmup)
    memory = ring_memory(args.queues)
    local = local_server(args.queues, args.rounds, args.reads)
    body = report(args, samples, memory, local)
    print(body)
    write_result("minute_metrics", "The console's minute chart: its cost locally", body)


if __name__ == "__main__":
    main()
