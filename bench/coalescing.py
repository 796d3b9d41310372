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
import secrets
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench._common import ROOT, md_table, pct, use_local_aws_defaults, write_result

OPERATIONS = ("send", "receive", "delete")


class Front:
    """One server behind two holders: coalescing on (`window_ms`) and off."""

    def __init__(self, directory: Path, engine: str, window_ms: float) -> None:
        from bench._servers import free_port
        from mnsd.waiting.contract import WAKE_PATH
        from wait_tier.tier import Tier, local_url

        port, wakes = free_port(), free_port()
        key = secrets.token_urlsafe(24)
        self.direct = local_url(port)
        env = dict(
            os.environ,
            MNS_PORT=str(port),
            MNS_ENGINE=engine,
            MNS_DATA_DIR=str(directory / "data"),
            MNS_WAIT_TIER_KEY=key,
            MNS_WAIT_TIER_WAKE_URL=local_url(wakes, WAKE_PATH),  # (the first holder's: the other is not woken)
            POWERTOOLS_LOG_LEVEL="WARNING",
        )
        self.log = open(directory / "server.log", "wb")  # noqa: SIM115
        python = str(ROOT / ".venv" / "bin" / "python")
        self.proc = subprocess.Popen(
            [python, "-m", "local_runtime"], cwd=ROOT, env=env, stdout=self.log, stderr=self.log
        )
        self.tiers = {
            "on": Tier(self.direct, free_port(), wakes, key, self.log, window_ms),
            "off": Tier(self.direct, free_port(), free_port(), key, self.log, 0),
        }
        for tier in self.tiers.values():
            tier.start(timeout=60)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.account(self.direct).list_queue()
                break
            except Exception:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.05)

    def account(self, url: str) -> Any:
        from mns.account import Account

        from mnsd.ground.settings import DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_SECRET

        return Account(url, DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_SECRET)

    def queue(self, url: str, name: str, create: bool = False) -> Any:
        from mns.queue import QueueMeta

        q = self.account(url).get_queue(name)
        if create:
            meta = QueueMeta()
            meta.set_visibilitytimeout(120)
            q.create(meta)
        q.set_encoding(False)
        return q

    def stop(self) -> None:
        for tier in self.tiers.values():
            tier.stop()
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


class Round:
    """One round's clients on one queue: their calls' latencies (ms) by operation, who received what, what failed."""

    def __init__(self, front: Front, url: str, name: str) -> None:
        self.front, self.url, self.name = front, url, name
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

    def produce(self, worker: int, each: int, begin: threading.Barrier) -> None:
        from mns.queue import Message

        q = self.front.queue(self.url, self.name)
        begin.wait()
        for n in range(each):
            try:
                self.timed("send", lambda n=n: q.send_message(Message(f"p{worker}-{n}")))
            except Exception as error:  # noqa: BLE001 (counted: the round is then invalid)
                self.failures.append(error)

    def consume(self, receives: int, begin: threading.Barrier) -> None:
        q = self.front.queue(self.url, self.name)
        begin.wait()
        for _ in range(receives):
            try:
                message = self.timed("receive", lambda: q.receive_message(5))
                with self.lock:
                    self.owners[message.message_body] += 1
                self.timed("delete", lambda m=message: q.delete_message(m.receipt_handle))
            except Exception as error:  # noqa: BLE001
                self.failures.append(error)

    def drain(self) -> None:
        """What is left, received directly (every message sent must be received exactly once)."""
        q = self.front.queue(self.front.direct, self.name)
        while True:
            try:
                left = q.batch_receive_message(16, 1)
            except Exception:  # noqa: BLE001 (MessageNotExist: none left)
                return
            for message in left:
                self.owners[message.message_body] += 1
            q.batch_delete_message([m.receipt_handle for m in left])


def round_trip(front: Front, mode: str, producers: int, consumers: int, each: int) -> dict[str, Any]:
    """One round through the holder `mode` names: its calls' latencies (ms) by operation, and what was received."""
    from mns.queue import Message

    name = f"coalescing-{mode}-{secrets.token_hex(4)}"
    backlog = front.queue(front.direct, name, create=True)
    total = producers * each
    for start in range(0, total, 16):  # (not timed: receives find a message at once)
        backlog.batch_send_message([Message(f"backlog-{n}") for n in range(start, min(start + 16, total))])
    run = Round(front, front.tiers[mode].url, name)
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


def main() -> None:
    from wait_tier.coalesce import WINDOW_MS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="sqlite", choices=("sqlite", "moto"))
    parser.add_argument("--window-ms", type=float, default=WINDOW_MS)
    parser.add_argument("--producers", type=int, default=16)
    parser.add_argument("--consumers", type=int, default=16)
    parser.add_argument("--each", type=int, default=40, help="single sends per producer per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds each way, alternating")
    args = parser.parse_args()
    use_local_aws_defaults()

    front = Front(Path(tempfile.mkdtemp(prefix="mns-coalescing-bench-")), args.engine, args.window_ms)
    results: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    try:
        for n in range(args.rounds):
            for mode in ("off", "on") if n % 2 else ("on", "off"):
                results[mode].append(round_trip(front, mode, args.producers, args.consumers, args.each))
                got = results[mode][-1]
                print(mode, f"{got['seconds']:.1f} s", {op: f"{pct(v, 50):.1f}" for op, v in got["latencies"].items()})
        load = os.getloadavg()
    finally:
        front.stop()

    merged = {
        mode: {op: [x for r in rounds for x in r["latencies"][op]] for op in OPERATIONS}
        for mode, rounds in results.items()
    }
    rows = []
    for op in (*OPERATIONS, "all"):
        on = [x for o in OPERATIONS for x in merged["on"][o]] if op == "all" else merged["on"][op]
        off = [x for o in OPERATIONS for x in merged["off"][o]] if op == "all" else merged["off"][op]
        rows.append(
            [op, len(on), f"{pct(off, 50):.2f}", f"{pct(on, 50):.2f}", f"{pct(on, 50) - pct(off, 50):+.2f}",
             f"{pct(off, 99):.2f}", f"{pct(on, 99):.2f}", f"{pct(on, 99) - pct(off, 99):+.2f}"]
        )  # fmt: skip
    counts: Counter[str] = Counter()
    for r in results["on"]:
        counts.update(r["counts"])
    calls = sum(r["calls"] for r in results["on"])
    origin_requests = calls - counts["coalesced"] + counts["batches"]
    messages = sum(args.producers * args.each for _ in results["on"])
    lost = sum(r["lost"] for rounds in results.values() for r in rounds)
    twice = sum(r["twice"] for rounds in results.values() for r in rounds)
    failed = sum(len(r["failures"]) for rounds in results.values() for r in rounds)
    added_p50 = pct([x for o in OPERATIONS for x in merged["on"][o]], 50) - pct(
        [x for o in OPERATIONS for x in merged["off"][o]], 50
    )
    added_p99 = pct([x for o in OPERATIONS for x in merged["on"][o]], 99) - pct(
        [x for o in OPERATIONS for x in merged["off"][o]], 99
    )
    print(f"added p50 {added_p50:+.2f} ms, p99 {added_p99:+.2f} ms; lost {lost}, twice {twice}, failed {failed}")

    by_kind = [
        [kind, counts[f"{kind}.batches"], counts[f"{kind}.coalesced"],
         f"{counts[f'{kind}.coalesced'] / counts[f'{kind}.batches']:.1f}" if counts[f"{kind}.batches"] else "-"]
        for kind in OPERATIONS
    ]  # fmt: skip
    body = f"""
Options: `--engine {args.engine} --window-ms {args.window_ms:g} --producers {args.producers} --consumers {args.consumers}
--each {args.each} --rounds {args.rounds}`. Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.

{args.producers} producers (single SendMessage) and {args.consumers} consumers (single ReceiveMessage, then
DeleteMessage) on one queue with a backlog, through the holder with coalescing on (window {args.window_ms:g} ms) and
off (window 0), the same server behind both, {args.rounds} rounds each way alternating; latency at the client
(Alibaba's Python SDK), ms.

{md_table(["operation", "calls (on)", "p50 off", "p50 on", "added p50", "p99 off", "p99 on", "added p99"], rows)}

Targets: added p50 <= 5 ms, p99 <= 20 ms. Measured over every call: **added p50 {added_p50:+.2f} ms, p99
{added_p99:+.2f} ms**.

How the holder passed on the calls with coalescing on: {calls:,} client calls, {origin_requests:,} requests to the
origin ({origin_requests / max(1, calls):.2f} per call; {origin_requests / max(1, messages):.2f} per message sent, received and
deleted); {counts["alone"]:,} passed on alone (a group of one).

{md_table(["operation", "batch calls", "requests they carried", "per batch"], by_kind)}

Messages lost: {lost}; received twice: {twice}; failed calls: {failed} (both modes, every round).
"""
    write_result("coalescing", "Coalescing: the added latency of single calls coalesced by the holder", body)


if __name__ == "__main__":
    main()
