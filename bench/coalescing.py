"""Coalescing's added latency (issue 48; docs/wait_tier.md, "Coalescing"): 16 producers and 16 consumers making single
calls (SendMessage; ReceiveMessage then DeleteMessage) on one queue through the holder, with coalescing on (the
window, `wait_tier.coalesce.WINDOW_MS` unless `--window-ms`) and off (window 0), in front of the same local server.

Two holders (`python -m wait_tier`, each in a process of its own) front one server (`python -m local_runtime`, SQLite
unless `--engine moto`); rounds alternate between them so that the machine's load falls on both. Each round starts
with a backlog (batch sends, not timed) so that the receives find a message at once (their latency is the hop's, not
a wait for a producer). Each call's latency is taken at its client (Alibaba's Python SDK); the added latency is the
percentile with coalescing on minus the same percentile off, per operation. Also: how the holder passed the calls on
(batch calls, requests they carried, requests alone), every message received once and none twice.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench._common import md_table, pct, use_local_aws_defaults, write_result
from bench.wait_tier import TierRun

OPERATIONS = ("send", "receive", "delete")


class Front(TierRun):
    """One server behind two holders: coalescing on (`window_ms`: `tier`) and off (window 0)."""

    def __init__(self, directory: Path, engine: str, window_ms: float) -> None:
        from bench._servers import free_port
        from wait_tier.tier import Tier

        super().__init__(directory, engine, window_ms)
        off = Tier(self.direct, free_port(), free_port(), self.key, self.log, 0)  # (not woken: the server wakes `tier`)
        self.tiers = {"on": self.tier, "off": off.start(timeout=60)}

    def stop(self) -> None:
        self.tiers["off"].stop()
        super().stop()


class Round:
    """One round's clients on one queue: their calls' latencies (ms) by operation, who received what, what failed."""

    def __init__(self, front: Front, url: str, name: str, rate: float = 0) -> None:
        self.front, self.url, self.name, self.rate = front, url, name, rate
        self.latencies: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        self.owners: Counter[str] = Counter()
        self.failures: list[Exception] = []
        self.lock = threading.Lock()

    def timed(self, op: str, call: Any) -> Any:
        started = time.perf_counter()
        result = call()
        with self.lock:
            self.latencies[op].append((time.perf_counter() - started) * 1000)
        return result

    def pace(self, n: int, started: float) -> None:
        """With a rate, the `n`-th call of a client waits for its turn (every client starts at a random offset)."""
        if self.rate:
            time.sleep(max(0.0, started + n / self.rate - time.perf_counter()))

    def calls(self, count: int, begin: threading.Barrier, call: Any) -> None:
        """A client's `count` calls (`call(n, queue)`), paced; what fails counted (the round is then invalid)."""
        q = self.front.queue(self.name, self.url)
        begin.wait()
        started = time.perf_counter() + (random.random() / self.rate if self.rate else 0)
        for n in range(count):
            self.pace(n, started)
            try:
                call(n, q)
            except Exception as error:  # noqa: BLE001
                self.failures.append(error)

    def produce(self, worker: int, each: int, begin: threading.Barrier) -> None:
        from mns.queue import Message

        self.calls(each, begin, lambda n, q: self.timed("send", lambda: q.send_message(Message(f"p{worker}-{n}"))))

    def consume(self, receives: int, begin: threading.Barrier) -> None:
        def receive_and_delete(n: int, q: Any) -> None:
            message = self.timed("receive", lambda: q.receive_message(5))
            with self.lock:
                self.owners[message.message_body] += 1
            self.timed("delete", lambda: q.delete_message(message.receipt_handle))

        self.calls(receives, begin, receive_and_delete)

    def drain(self) -> None:
        """What is left, received directly (every message sent must be received exactly once)."""
        q = self.front.queue(self.name, self.front.direct)
        while True:
            try:
                left = q.batch_receive_message(16, 1)
            except Exception:  # noqa: BLE001 (MessageNotExist: none left)
                return
            for message in left:
                self.owners[message.message_body] += 1
            q.batch_delete_message([m.receipt_handle for m in left])


def round_trip(front: Front, mode: str, producers: int, consumers: int, each: int, rate: float) -> dict[str, Any]:
    """One round through the holder `mode` names: its calls' latencies (ms) by operation, and what was received."""
    from mns.queue import Message

    name = f"coalescing-{mode}-{secrets.token_hex(4)}"
    backlog = front.queue(name, front.direct, create=True)
    total = producers * each
    for start in range(0, total, 16):  # (not timed: receives find a message at once)
        backlog.batch_send_message([Message(f"backlog-{n}") for n in range(start, min(start + 16, total))])
    run = Round(front, front.tiers[mode].url, name, rate)
    begin = threading.Barrier(producers + consumers)
    threads = [threading.Thread(target=run.produce, args=(w, each, begin)) for w in range(producers)]
    threads += [threading.Thread(target=run.consume, args=(total // consumers, begin)) for _ in range(consumers)]
    before = front.tiers[mode].stats()
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    seconds = time.perf_counter() - started
    after = front.tiers[mode].stats()
    run.drain()
    counts = Counter(after["origin"])
    counts.subtract(before["origin"])
    expected = {f"backlog-{n}" for n in range(total)} | {f"p{w}-{n}" for w in range(producers) for n in range(each)}
    return {
        "latencies": run.latencies,
        "lost": len(expected - set(run.owners)),
        "twice": sum(1 for c in run.owners.values() if c > 1),
        "failures": run.failures,
        "calls": sum(after["calls"].values()) - sum(before["calls"].values()),
        "counts": counts,
        "seconds": seconds,
    }


def scenario(front: Front, producers: int, consumers: int, each: int, rounds: int, rate: float = 0) -> dict[str, Any]:
    """Rounds on and off, alternating: each mode's rounds."""
    results: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    for n in range(rounds):
        for mode in ("off", "on") if n % 2 else ("on", "off"):
            results[mode].append(round_trip(front, mode, producers, consumers, each, rate))
            got = results[mode][-1]
            print(f"{producers}+{consumers}", mode, f"{got['seconds']:.1f} s",
                  {op: f"{pct(v, 50):.1f}" for op, v in got["latencies"].items()})  # fmt: skip
    return results


def latencies(rounds: list[dict[str, Any]], op: str) -> list[float]:
    """One mode's latencies of an operation (`all`: of every operation) over its rounds."""
    return [x for r in rounds for o in (OPERATIONS if op == "all" else (op,)) for x in r["latencies"][o]]


def report(title: str, results: dict[str, list[dict[str, Any]]], sent: int) -> tuple[str, float, float]:
    """A scenario's tables, and its added p50 and p99 (the median over pairs of rounds on and off)."""
    rows = []
    for op in (*OPERATIONS, "all"):
        on, off = latencies(results["on"], op), latencies(results["off"], op)
        rows.append(
            [op, len(on), f"{pct(off, 50):.2f}", f"{pct(on, 50):.2f}", f"{pct(on, 50) - pct(off, 50):+.2f}",
             f"{pct(off, 99):.2f}", f"{pct(on, 99):.2f}", f"{pct(on, 99) - pct(off, 99):+.2f}"]
        )  # fmt: skip
    on, off = latencies(results["on"], "all"), latencies(results["off"], "all")
    pooled = (pct(on, 50) - pct(off, 50), pct(on, 99) - pct(off, 99))
    # Each round on against the round off next to it in time (the machine's load drifts between rounds): the median.
    pairs = [
        (pct(latencies([a], "all"), 50) - pct(latencies([b], "all"), 50),
         pct(latencies([a], "all"), 99) - pct(latencies([b], "all"), 99))
        for a, b in zip(results["on"], results["off"], strict=True)
    ]  # fmt: skip
    added = (statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs))
    counts: Counter[str] = Counter()
    for r in results["on"]:
        counts.update(r["counts"])
    calls = sum(r["calls"] for r in results["on"])
    origin = calls - counts["coalesced"] + counts["batches"]
    by_kind = [
        [kind, counts[f"{kind}.batches"], counts[f"{kind}.coalesced"],
         f"{counts[f'{kind}.coalesced'] / counts[f'{kind}.batches']:.1f}" if counts[f"{kind}.batches"] else "-"]
        for kind in OPERATIONS
    ]  # fmt: skip
    lost = sum(r["lost"] for rounds in results.values() for r in rounds)
    twice = sum(r["twice"] for rounds in results.values() for r in rounds)
    failed = sum(len(r["failures"]) for rounds in results.values() for r in rounds)
    headers = ["operation", "calls (on)", "p50 off", "p50 on", "added p50", "p99 off", "p99 on", "added p99"]
    text = f"""
## {title}

{md_table(headers, rows)}

Each round on against the round off beside it in time, the median of the {len(pairs)} pairs: **added p50
{added[0]:+.2f} ms, p99 {added[1]:+.2f} ms** (the pairs: {", ".join(f"{a:+.1f} / {b:+.1f}" for a, b in pairs)}); every
call of every round pooled: added p50 {pooled[0]:+.2f} ms, p99 {pooled[1]:+.2f} ms. With coalescing on, {calls:,} client calls
made {origin:,} requests to the origin ({origin / max(1, calls):.2f} per call, {origin / max(1, sent):.2f} per message
sent, received and deleted); {counts["alone"]:,} went alone (a group of one).

{md_table(["operation", "batch calls", "requests they carried", "per batch"], by_kind)}

Messages lost: {lost}; received twice: {twice}; failed calls: {failed} (both modes, every round).
"""
    print(f"{title}: added p50 {added[0]:+.2f} ms, p99 {added[1]:+.2f} ms; lost {lost}, twice {twice}, failed {failed}")
    return text, added[0], added[1]


def main() -> None:
    from wait_tier.coalesce import WINDOW_MS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="sqlite", choices=("sqlite", "moto"))
    parser.add_argument("--window-ms", type=float, default=WINDOW_MS)
    parser.add_argument("--each", type=int, default=30, help="single sends per producer per round (16 + 16)")
    parser.add_argument(
        "--lone-each", type=int, default=150, help="single sends per round of one producer and one consumer"
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds each way, alternating")
    parser.add_argument("--rate", type=float, default=10, help="calls a second of each paced client")
    args = parser.parse_args()
    use_local_aws_defaults()

    front = Front(Path(tempfile.mkdtemp(prefix="mns-coalescing-bench-")), args.engine, args.window_ms)
    try:
        paced = scenario(front, 16, 16, args.each, args.rounds, args.rate)
        busy = scenario(front, 16, 16, args.each, args.rounds)
        lone = scenario(front, 1, 1, args.lone_each, args.rounds)
        load = os.getloadavg()
    finally:
        front.stop()
    sent = 16 * args.each * args.rounds
    paced_text, paced_p50, paced_p99 = report(
        f"16 producers and 16 consumers, each client {args.rate:g} calls a second (the origin not saturated)",
        paced,
        sent,
    )
    busy_text, busy_p50, busy_p99 = report(
        "16 producers and 16 consumers, each as fast as it can (the origin saturated)", busy, sent
    )
    lone_text, _, _ = report(
        "One producer and one consumer (a lone client pays the window)", lone, args.lone_each * args.rounds
    )
    met = all(p50 <= 5 and p99 <= 20 for p50, p99 in ((paced_p50, paced_p99), (busy_p50, busy_p99)))
    target = f"{'met' if met else 'NOT met'}: paced {paced_p50:+.2f} / {paced_p99:+.2f} ms, saturated {busy_p50:+.2f} / {busy_p99:+.2f} ms"
    body = f"""
Options: `--engine {args.engine} --window-ms {args.window_ms:g} --each {args.each} --lone-each {args.lone_each}
--rounds {args.rounds}`. Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (a shared machine).

Producers (single SendMessage) and consumers (single ReceiveMessage, then DeleteMessage) on one queue with a backlog,
through the holder with coalescing on (window {args.window_ms:g} ms) and off (window 0), the same server behind both,
{args.rounds} rounds each way alternating; latency at the client (Alibaba's Python SDK), ms. Targets at 16 + 16: added
p50 <= 5 ms, p99 <= 20 ms: **{target}**.
{paced_text}{busy_text}{lone_text}"""
    write_result("coalescing", "Coalescing: the added latency of single calls coalesced by the holder", body)


if __name__ == "__main__":
    main()
