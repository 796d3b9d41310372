"""The local runtime on its embedded engine: lifecycle throughput against moto's SQS server, latency,
receive cost against queue depth, memory and start time.

Both servers run as their own processes (as a developer runs them); the clients are threads here.

    .venv/bin/python -m bench.local_engine [--quick]
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import ROOT, md_table, pct, use_local_aws_defaults, write_result

PYTHON = sys.executable
KEY_ID, KEY_SECRET = "LOCALACCESSKEYID", "LOCALACCESSKEYSECRET"
BODY = base64.b64encode(os.urandom(768)).decode()  # 1,024 characters
PRODUCERS = CONSUMERS = 4
DEADLINE = 120.0  # per lifecycle run: a slower server is measured over what it deleted by then


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Ours:
    """`python -m local_runtime` on a fresh data directory (the SQLite engine, or `engine`: `moto`)."""

    def __init__(self, data_dir: str, engine: str = "sqlite") -> None:
        from mns.account import Account

        self.port = free_port()
        env = dict(os.environ, MNS_PORT=str(self.port), MNS_DATA_DIR=data_dir, MNS_ENGINE=engine)
        self.log = open(Path(tempfile.gettempdir()) / f"mns-bench-{self.port}.log", "wb")  # noqa: SIM115
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "local_runtime"], cwd=ROOT, env=env, stdout=self.log, stderr=self.log
        )
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.account = lambda: Account(self.endpoint, KEY_ID, KEY_SECRET)
        account = self.account()
        while True:  # start to first answered request
            try:
                account.list_queue()
                break
            except Exception:
                if self.proc.poll() is not None or time.perf_counter() - started > 60:
                    raise
                time.sleep(0.01)
        self.start_seconds = time.perf_counter() - started

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


class MotoSqs:
    """moto's ThreadedMotoServer, in its own process."""

    def __init__(self) -> None:
        import boto3

        self.port = free_port()
        code = (
            "import logging, time\nlogging.getLogger('werkzeug').setLevel(logging.ERROR)\n"
            "from moto.server import ThreadedMotoServer\n"
            f"ThreadedMotoServer(port={self.port}, verbose=False).start()\n"
            "while True: time.sleep(3600)\n"
        )
        self.proc = subprocess.Popen([PYTHON, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc)
        self.client = lambda: boto3.client(
            "sqs",
            endpoint_url=f"http://127.0.0.1:{self.port}",
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@dataclass(frozen=True)
class Rate:
    deleted: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.deleted / self.seconds

    def __str__(self) -> str:
        return f"{self.per_second:,.0f}" + (
            "" if self.seconds < DEADLINE else f" ({self.deleted:,} in {DEADLINE:.0f} s)"
        )


def run_threads(work: list[tuple[Callable[[int], None], int]]) -> float:
    """Seconds until every thread (`n` of each function, given its index) has finished."""
    started = time.perf_counter()
    threads = [threading.Thread(target=target, args=(w,)) for target, n in work for w in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE + 30)
    return time.perf_counter() - started


def batch_taker(queue: Any, seen: Callable[[list[Any]], None] | None = None) -> Callable[[], int]:
    """One consumer's step through the SDK: a batch receive of 16 (1 s long poll), shown to `seen`, batch-deleted;
    how many it took (0 when the queue had none)."""
    from mns.mns_exception import MNSExceptionBase

    queue.set_encoding(False)

    def take() -> int:
        try:
            got = queue.batch_receive_message(16, 1)
        except MNSExceptionBase as exc:
            if exc.type == "MessageNotExist":
                return 0
            raise
        if seen is not None:
            seen(got)
        queue.batch_delete_message([m.receipt_handle for m in got])
        return len(got)

    return take


def lifecycle(
    total: int,
    send_batch: Callable[[int], Callable[[int], None]],
    consume: Callable[[int], Callable[[], int]],
    consumers: int = CONSUMERS,
) -> Rate:
    """PRODUCERS threads send `total`, `consumers` threads receive and delete them (until DEADLINE)."""
    received = [0]
    finished = [0.0]  # when the last message was deleted (consumers still in a long poll then end later)
    lock = threading.Lock()
    done = threading.Event()
    errors: list[BaseException] = []
    deadline = time.monotonic() + DEADLINE

    def produce(worker: int) -> None:
        try:
            send = send_batch(worker)
            for _ in range(worker, total // 16, PRODUCERS):  # (a batch is 16 messages, or 10 + 6 for SQS)
                if done.is_set() or time.monotonic() > deadline:
                    return
                send(16)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def consumer(worker: int) -> None:
        try:
            take = consume(worker)
            while not done.is_set() and time.monotonic() < deadline:
                got = take()
                with lock:
                    received[0] += got
                    if received[0] >= total and not done.is_set():
                        finished[0] = time.perf_counter()
                        done.set()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            done.set()

    started = time.perf_counter()
    elapsed = run_threads([(produce, PRODUCERS), (consumer, consumers)])
    if errors:
        raise errors[0]
    return Rate(received[0], finished[0] - started if finished[0] else elapsed)


def ours_lifecycle(server: Ours, name: str, total: int) -> Rate:
    from mns.queue import Message, QueueMeta

    server.account().get_queue(name).create(QueueMeta())

    def send_batch(worker: int) -> Callable[[int], None]:
        queue = server.account().get_queue(name)
        queue.set_encoding(False)
        return lambda n: queue.batch_send_message([Message(BODY) for _ in range(n)])

    def consume(worker: int) -> Callable[[], int]:
        return batch_taker(server.account().get_queue(name))

    return lifecycle(total, send_batch, consume)


def sqs_batch_taker(
    client: Any,
    url: str,
    seen: Callable[[list[dict[str, Any]]], None] | None = None,
    attributes: list[str] | None = None,
) -> Callable[[], int]:
    """One SQS consumer's step through boto3: a batch receive of 10 (1 s long poll, with `attributes`), shown to
    `seen`, batch-deleted; how many it took."""

    def take() -> int:
        extra = {"AttributeNames": attributes} if attributes else {}
        got = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, **extra).get(
            "Messages", []
        )
        if seen is not None:
            seen(got)
        if got:
            entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
            client.delete_message_batch(QueueUrl=url, Entries=entries)
        return len(got)

    return take


def sqs_lifecycle(sqs: MotoSqs, name: str, total: int) -> Rate:
    url = sqs.client().create_queue(QueueName=name)["QueueUrl"]

    def send_batch(worker: int) -> Callable[[int], None]:
        client = sqs.client()

        def send(n: int) -> None:
            for start in range(0, n, 10):  # SQS batches hold 10 at most
                entries = [{"Id": str(i), "MessageBody": BODY} for i in range(start, min(n, start + 10))]
                client.send_message_batch(QueueUrl=url, Entries=entries)

        return send

    def consume(worker: int) -> Callable[[], int]:
        return sqs_batch_taker(sqs.client(), url)

    return lifecycle(total, send_batch, consume)


def single_client(server: Ours, n: int) -> dict[str, list[float]]:
    from mns.queue import Message, QueueMeta

    queue = server.account().get_queue("single")
    queue.create(QueueMeta())
    queue.set_encoding(False)
    latencies: dict[str, list[float]] = {"send": [], "receive": [], "delete": []}
    for i in range(n + 20):
        t0 = time.perf_counter()
        queue.send_message(Message(BODY))
        t1 = time.perf_counter()
        handle = queue.receive_message(0).receipt_handle
        t2 = time.perf_counter()
        queue.delete_message(handle)
        t3 = time.perf_counter()
        if i >= 20:  # warm-up
            for op, ms in (("send", t1 - t0), ("receive", t2 - t1), ("delete", t3 - t2)):
                latencies[op].append(ms * 1000)
    return latencies


def fill(server: Ours, data_dir: str, name: str, depth: int) -> None:
    """A queue created over HTTP, filled to `depth` by writing into the engine directly (fast)."""
    import secrets

    from mns.queue import QueueMeta

    from mnsd.access.keys import StaticKeyStore
    from mnsd.control.catalog import Catalog
    from mnsd.ground.settings import Settings
    from mnsd.model.messages import Message, body_md5
    from mnsd.storage.sqlite import sqlite_storage

    server.account().get_queue(name).create(QueueMeta(vis_timeout=3600))
    storage = sqlite_storage(data_dir)
    account = StaticKeyStore(Settings.from_env({}).credentials).default.account_id
    queue = Catalog(storage.meta).get_queue(account, name)
    assert queue is not None
    now = int(time.time() * 1000)
    md5 = body_md5(BODY)
    for start in range(0, depth, 1000):
        batch = [
            Message(queue.queue_id, f"{secrets.token_hex(8).upper()}-{n}", 1 + n % 16, now + n, now + n, 0, 0, now + n,
                    now + n, now // 1000 + 86400, md5, BODY)
            for n in range(start, min(depth, start + 1000))
        ]  # fmt: skip
        storage.messages.put(batch)
    storage.database.close()


def receive_p50(server: Ours, names: list[str], n: int) -> dict[str, float]:
    """p50 of `n` single receives per queue, taken in turn from each (so load on the machine hits all alike)."""
    queues = {name: server.account().get_queue(name) for name in names}
    times: dict[str, list[float]] = {name: [] for name in names}
    for queue in queues.values():
        queue.set_encoding(False)
    for _ in range(n):  # received messages stay in flight: the receives must not slow down for them
        for name, queue in queues.items():
            t0 = time.perf_counter()
            queue.receive_message(0)
            times[name].append((time.perf_counter() - t0) * 1000)
    return {name: pct(values, 50) for name, values in times.items()}


def main(argv: list[str] | None = None) -> None:
    use_local_aws_defaults()
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args(argv)
    sizes = [320, 800] if args.quick else [2000, 20000]  # multiples of 16
    depths = [100, 1000, 2000] if args.quick else [100, 10_000, 100_000]
    single_n = 50 if args.quick else 300

    rows: list[list[object]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as data_dir:
        server = Ours(data_dir)
        start_seconds = server.start_seconds
        sqs = MotoSqs()
        try:
            for total in sizes:
                cpu = cpu_seconds(server.proc.pid)
                ours = ours_lifecycle(server, f"life{total}", total)
                busy = (cpu_seconds(server.proc.pid) - cpu) / ours.seconds
                theirs = sqs_lifecycle(sqs, f"life{total}", total)
                ratio = f"{ours.per_second / theirs.per_second:.1f}x"
                rows.append([f"{total:,}", str(ours), f"{busy:.0%}", str(theirs), ratio])
                print(rows[-1], flush=True)
        finally:
            sqs.stop()
        latencies = single_client(server, single_n)
        for depth in depths:
            fill(server, data_dir, f"depth{depth}", depth)
        rss = rss_mb(server.proc.pid)
        p50 = receive_p50(server, [f"depth{depth}" for depth in depths], 60)
        depth_rows: list[list[object]] = [[f"{depth:,}", f"{p50[f'depth{depth}']:.2f}"] for depth in depths]
        print(depth_rows, flush=True)
        server.stop()

    lifecycle_table = md_table(["messages", "ours msg/s", "our server's CPU", "moto SQS msg/s", "ours / SQS"], rows)
    latency_table = md_table(
        ["operation", "p50 ms", "p99 ms"],
        [[op, f"{pct(v, 50):.2f}", f"{pct(v, 99):.2f}"] for op, v in latencies.items()],
    )
    growth = p50[f"depth{depths[-1]}"] / p50[f"depth{depths[0]}"]
    depth_table = md_table(["depth (messages, 1 KB)", "receive p50 ms"], depth_rows)
    notes.append(f"receive p50 growth from depth {depths[0]:,} to {depths[-1]:,}: {growth:.2f}x")
    body = f"""
Ours: `python -m local_runtime` (SQLite engine, WAL, synchronous=NORMAL, data in a temporary
directory), driven by the official SDK (`mns`, encoding off). moto SQS: `ThreadedMotoServer` in its
own process, driven by boto3. The clients are threads of the benchmark process.

## Lifecycle: {PRODUCERS} producer and {CONSUMERS} consumer threads
Producers batch-send (16 per request for ours, 10 + 6 for SQS whose batches hold 10 at most),
consumers batch-receive (16, or 10 for SQS) with 1 s long polls and batch-delete what they got;
messages/s = messages deleted / time until all were deleted, or until {DEADLINE:.0f} s (then the count
deleted by then is shown). 1 KB bodies. "Our server's CPU": CPU time the server process used during
the run over its wall time (100 % = one core; the server's Python threads share one GIL).

{lifecycle_table}

## One client, one message at a time ({single_n} lifecycles after 20 warm-up)

{latency_table}

## Receive against queue depth
A queue filled to the depth (priorities 1..16; written into the engine's database directly, for speed),
then 60 single receives over HTTP from each queue, taken in turn (received messages stay in flight).

{depth_table}

{notes[0]}

## Server
- Resident memory (VmRSS) of the server holding the queues above ({depths[-1]:,} messages of 1 KB in the
  deepest): {rss:,.0f} MB
- `python -m local_runtime` start to the first answered request: {start_seconds:.2f} s
"""
    print(body)
    if not args.quick:
        write_result("local_engine", "The local runtime on its embedded engine", body)


if __name__ == "__main__":
    main()
