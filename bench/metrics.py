"""What the live metrics cost (issue 26): per request, locally and in EMF bytes on AWS, and a scrape of 1,000 queues.

1. Per request, in-process (`mnsd.request.api.handle`, then the sink's `flush`, as the Lambda handler does), over the
   embedded SQLite engine (`:memory:`), real clock: SendMessage (256 B), ReceiveMessage (waitseconds=0),
   DeleteMessage, BatchSendMessage (16 x 256 B), in three worlds in the same process, interleaved cycle by cycle:
   - before: no sink (`NoMetrics`) and the SQLite index as it was before the metrics (`messages_visibility`, without
     the enqueue time that the backlog gauges read): the request path of the code before;
   - local: the local runtime's counters (`ProcessMetrics`), the wider index;
   - AWS: the EMF sink (`EmfMetrics`), its lines printed at each flush into a byte counter (what CloudWatch Logs
     would ingest), the wider index.
2. A scrape of `GET /metrics` over HTTP from `LocalServer` on the SQLite engine (a file, as `make run`) holding
   1,000 queues of one account with 3 messages each, one of them in flight.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from typing import Any
from urllib.parse import quote

from bench._common import md_table, pct, use_local_aws_defaults, write_result
from bench.access import SEND_BODY, Caller, Signer
from tests.support.by_name import QueuesByName

ACCOUNT = "1000000000000001"
BODY = "x" * 256
BATCH = (
    '<?xml version="1.0" encoding="UTF-8"?><Messages xmlns="http://mns.aliyuncs.com/doc/v1/">'
    + "<Message><MessageBody>{}</MessageBody></Message>" * 16
    + "</Messages>"
)
OPERATIONS = ("SendMessage", "ReceiveMessage", "DeleteMessage", "BatchSendMessage")
WORLDS = ("before", "local", "AWS")
OLD_INDEX = "CREATE INDEX messages_visibility ON messages (queue_id, visible_at, dequeue_count, expires_at)"


class CountingOut(io.TextIOBase):
    """Stands for stdout: counts what is printed (EMF lines), keeps nothing."""

    def __init__(self) -> None:
        self.bytes = 0
        self.lines = 0

    def write(self, text: str) -> int:
        self.bytes += len(text.encode("utf-8"))
        self.lines += text.count("\n")
        return len(text)


def world(kind: str) -> Any:
    from mnsd.ground.clock import SystemClock
    from mnsd.metrics import MetricsSink, NoMetrics
    from mnsd.metrics.emf import EmfMetrics
    from mnsd.metrics.process import ProcessMetrics
    from mnsd.storage.sqlite import sqlite_storage

    storage = sqlite_storage(":memory:")
    if kind == "before":
        with storage.database.write() as connection:
            connection.execute("DROP INDEX messages_backlog")
            connection.execute(OLD_INDEX)
    sinks: dict[str, Callable[[], MetricsSink]] = {"before": NoMetrics, "local": ProcessMetrics, "AWS": EmfMetrics}
    return services_over(storage, SystemClock(), sinks[kind]())


def services_over(storage: Any, clock: Any, sink: Any) -> Any:
    """The services of one benchmark world: the bench account's credentials over `storage`, counted by `sink`."""
    from mnsd.ground.settings import Settings
    from mnsd.services import build_services

    settings = Settings(region="cn-hangzhou", credentials=f"{ACCOUNT}:KEY:SECRET")
    return build_services(settings, storage=storage, clock=clock, metrics=sink)


Timed = Callable[[str, str, tuple[str | None, Any], bool], Any]


def round_trip(timed: Timed, kind: str, signer: Signer, caller: Caller, keep: bool) -> None:
    """SendMessage, ReceiveMessage (waitseconds=0) and DeleteMessage of one message, each through `timed`."""
    messages = f"/queues/{caller.queue}/messages"
    sent = timed(kind, "SendMessage", signer.request(caller, "POST", messages, SEND_BODY.format(BODY)), keep)
    assert sent.status == 201, sent.body
    received = timed(kind, "ReceiveMessage", signer.request(caller, "GET", f"{messages}?waitseconds=0"), keep)
    handle = re.search(rb"<ReceiptHandle>([^<]+)</ReceiptHandle>", received.body)
    assert handle is not None, received.body
    target = f"{messages}?ReceiptHandle={quote(handle.group(1).decode(), safe='')}"
    assert timed(kind, "DeleteMessage", signer.request(caller, "DELETE", target), keep).status == 204


@contextmanager
def populated_server(queues: int) -> Iterator[Any]:
    """`LocalServer` on the SQLite engine in a temporary folder (as `make run`), holding `queues` queues of one
    account (`bench-0000`, ...) with 3 messages each, one of them in flight."""
    from local_runtime.engine import SQLITE, EngineChoice
    from local_runtime.server import LocalServer
    from mnsd.ground.settings import Settings
    from mnsd.model.inputs import MessageInput

    with tempfile.TemporaryDirectory() as data:
        settings = Settings.from_env({"MNS_CREDENTIALS": f"{ACCOUNT}:KEY:SECRET"})
        server = LocalServer(settings, port=0, quiet=True, engine=EngineChoice(SQLITE, data)).start_background()
        try:
            service = QueuesByName(server.services)
            for n in range(queues):
                name = f"bench-{n:04d}"
                service.create_queue(ACCOUNT, name)
                service.send(ACCOUNT, name, [MessageInput(f"m{i}", None, 8) for i in range(3)])
                service.receive(ACCOUNT, name, 1, 0)
            yield server
        finally:
            server.stop()


def arguments(description: str | None, *extra: tuple[str, int]) -> argparse.Namespace:
    """`--cycles`, `--warmup` and `--queues` of the metrics benchmarks, and their own `extra` (name, default)."""
    parser = argparse.ArgumentParser(description=description)
    for name, default in (("cycles", 3000), ("warmup", 200), ("queues", 1000), *extra):
        parser.add_argument(f"--{name}", type=int, default=default)
    return parser.parse_args()


def request_costs(cycles: int, warmup: int) -> dict[str, Any]:
    from mnsd.request import api

    worlds = {kind: world(kind) for kind in WORLDS}
    caller = Caller("root", "KEY", "SECRET", "bench-metrics")
    signer = Signer(time.time)
    messages = f"/queues/{caller.queue}/messages"
    for services in worlds.values():
        assert api.handle(*signer.request(caller, "PUT", f"/queues/{caller.queue}"), services).status == 201
    samples: dict[str, dict[str, list[float]]] = {kind: {op: [] for op in OPERATIONS} for kind in WORLDS}
    emf = {op: CountingOut() for op in OPERATIONS}

    def timed(kind: str, operation: str, request: tuple[str | None, Any], keep: bool) -> Any:
        services = worlds[kind]
        out = emf[operation] if kind == "AWS" and keep else CountingOut()
        with redirect_stdout(out):
            start = time.perf_counter_ns()
            response = api.handle(*request, services)
            services.metrics.flush()
            elapsed = (time.perf_counter_ns() - start) / 1000
        if keep:
            samples[kind][operation].append(elapsed)
        return response

    for cycle in range(warmup + cycles):
        keep = cycle >= warmup
        order = WORLDS[cycle % 3 :] + WORLDS[: cycle % 3]  # each world first in turn
        for kind in order:
            round_trip(timed, kind, signer, caller, keep)
            if cycle % 16 == 0:  # a batch now and then (its 16 messages stay: the queue deepens slowly)
                batch = signer.request(caller, "POST", messages, BATCH.format(*[BODY] * 16))
                assert timed(kind, "BatchSendMessage", batch, keep).status == 201
    return {
        "p50": {kind: {op: pct(v, 50) for op, v in ops.items()} for kind, ops in samples.items()},
        "p90": {kind: {op: pct(v, 90) for op, v in ops.items()} for kind, ops in samples.items()},
        "emf": {
            op: (out.bytes / max(1, len(samples["AWS"][op])), out.lines / max(1, len(samples["AWS"][op])))
            for op, out in emf.items()
        },
        "counts": {op: len(samples["AWS"][op]) for op in OPERATIONS},
    }


def scrape(queues: int, scrapes: int) -> dict[str, Any]:
    with populated_server(queues) as server:
        times, size, lines = [], 0, 0
        for _ in range(scrapes):
            start = time.perf_counter()
            with urllib.request.urlopen(server.endpoint + "/metrics", timeout=30) as response:
                body = response.read()
            times.append(time.perf_counter() - start)
            size, lines = len(body), body.count(b"\n")
        return {"times": times, "bytes": size, "lines": lines}


def report(args: argparse.Namespace, costs: dict[str, Any], scraped: dict[str, Any]) -> str:
    p50, p90 = costs["p50"], costs["p90"]
    rows = []
    for op in OPERATIONS:
        before = p50["before"][op]
        rows.append(
            [op, costs["counts"][op]]
            + [f"{p50[kind][op]:.0f} / {p90[kind][op]:.0f}" for kind in WORLDS]
            + [f"{p50[kind][op] - before:+.1f}" for kind in ("local", "AWS")]
        )
    requests = md_table(
        [
            "operation",
            "samples",
            "before p50 / p90 µs",
            "local p50 / p90 µs",
            "AWS (EMF) p50 / p90 µs",
            "added p50 local µs",
            "added p50 AWS µs",
        ],
        rows,
    )
    emf = md_table(
        ["operation", "EMF bytes per request", "EMF lines per request"],
        [[op, f"{costs['emf'][op][0]:.0f}", f"{costs['emf'][op][1]:.0f}"] for op in OPERATIONS],
    )
    times = sorted(scraped["times"])
    scrape_table = md_table(
        ["queues", "scrapes", "p50 s", "max s", "lines", "bytes"],
        [[args.queues, len(times), f"{pct(times, 50):.3f}", f"{times[-1]:.3f}", scraped["lines"], scraped["bytes"]]],
    )
    return f"""
Run as: `.venv/bin/python -m bench.metrics --cycles {args.cycles} --queues {args.queues}`.

## Per request, in-process (`api.handle` + the sink's flush), SQLite `:memory:`

{args.cycles} cycles after {args.warmup} not counted, the three worlds interleaved cycle by cycle in one process (each
world first in turn); a batch of 16 every 16th cycle. "before": no sink and the SQLite index as it was (without the
enqueue time); "local": `ProcessMetrics`; "AWS": `EmfMetrics`, its EMF lines printed at each flush.

{requests}

## EMF printed per request on AWS (what CloudWatch Logs ingests beside the function's own lines)

One line per queue a request touched (a receiver's copies are counted at its address: a line more per receiver
on a send).

{emf}

## A scrape of `GET /metrics` (HTTP, `LocalServer`, SQLite engine on a file)

{args.queues} queues of one account, 3 messages each, one in flight: every scrape reads each queue's backlog
(one covering-index query per queue) and lists the account's queues.

{scrape_table}
"""


def quiet_local_defaults() -> None:
    """AWS defaults for local runs, and the layer's logger at WARNING (its lines would drown the report)."""
    use_local_aws_defaults()
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")


def main() -> None:
    args = arguments(__doc__, ("scrapes", 10))
    quiet_local_defaults()
    costs = request_costs(args.cycles, args.warmup)
    scraped = scrape(args.queues, args.scrapes)
    body = report(args, costs, scraped)
    print(body)
    write_result("metrics", "Live metrics: the cost per request and of a scrape", body)


if __name__ == "__main__":
    main()
