"""The local server's resources under connection churn: `python -m local_runtime` (SQLite engine) in a subprocess
under an open-file limit, driven by clients that open a new connection per request (as a PHP-FPM worker, an SDK
without keep-alive or a test suite making a new `Account` per test would) and others that keep theirs, sending
requests the SDK signed; its open files
(`/proc/PID/fd`), threads and resident memory read as the requests go, every send acknowledged.

    .venv/bin/python -m bench.connection_churn            # 100,000 requests, half of them on new connections
    .venv/bin/python -m bench.connection_churn 20000      # fewer
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import ROOT, md_table, write_result

ACCOUNT = ("1000000000000001", "CHURNKEYID", "CHURNKEYSECRET")
FILES = 256  # macOS's default open-file limit


@dataclass(frozen=True)
class Usage:
    files: int
    threads: int
    rss_kb: int


def usage(pid: int) -> Usage:
    """A process's open files, threads and resident memory, from /proc."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return Usage(len(os.listdir(f"/proc/{pid}/fd")), int(status["Threads"]), int(status["VmRSS"].split()[0]))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _open_files(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in the child, before it runs the server
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return apply


@contextmanager
def local_server(folder: Path, files: int = FILES, engine: str = "sqlite") -> Iterator[tuple[subprocess.Popen, str]]:
    """`python -m local_runtime` (data and log in `folder`) under an open-file limit of `files`, until the block ends:
    (its process, its endpoint)."""
    port = _free_port()
    env = {
        **os.environ,
        "MNS_PORT": str(port),
        "MNS_ENGINE": engine,
        "MNS_DATA_DIR": str(folder / "data"),
        "MNS_CREDENTIALS": ":".join(ACCOUNT),
    }
    with open(folder / "server.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "local_runtime"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=log,
            preexec_fn=_open_files(files),
        )
    try:
        deadline = time.monotonic() + 60
        while "Press Ctrl-C" not in (folder / "server.log").read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {(folder / 'server.log').read_text()}")
            time.sleep(0.05)
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def account(endpoint: str, keep_alive: bool) -> Any:
    from mns.account import Account

    client = Account(endpoint, ACCOUNT[1], ACCOUNT[2])
    client.mns_client.set_keep_alive(keep_alive)
    return client


def create_queue(endpoint: str, name: str) -> None:
    from mns.queue import QueueMeta

    account(endpoint, True).get_queue(name).create(QueueMeta())


def active_messages(endpoint: str, name: str) -> int:
    return int(account(endpoint, True).get_queue(name).get_attributes().active_messages)


def signed_send(endpoint: str, queue: str) -> tuple[str, dict[str, str], bytes]:
    """A SendMessage request to `queue`, signed now by the SDK's own signer: (path, headers, body). Sent again and
    again, it stores a new message each time (its signature stays valid for minutes)."""
    from mns.mns_http import RequestInternal

    client = account(endpoint, True).mns_client
    body = b'<?xml version="1.0" encoding="UTF-8"?><Message xmlns="http://mns.aliyuncs.com/doc/v1/">' + (
        b"<MessageBody>churn</MessageBody></Message>"
    )
    request = RequestInternal("POST", f"/queues/{queue}/messages", data=body)
    client.build_header(type("Request", (), {"request_id": None})(), request)
    return request.uri, dict(request.header), body


def sends(
    endpoint: str, queue: str, count: int, clients: int, fresh: Callable[[int], bool], on_sent: Any = None
) -> int:
    """`count` SendMessage requests by `clients` HTTP clients (client `n` opens a new connection per request when
    `fresh(n)`, else keeps one), each acknowledged (`201`, else raised); `on_sent(done)` is told the running total
    every 100. The requests are signed once (as the SDK signs): the clients spend their time on the connections."""
    import http.client

    path, headers, body = signed_send(endpoint, queue)
    host, port = endpoint.split("://", 1)[1].split(":")
    done = [0]
    lock = threading.Lock()
    failures: list[BaseException] = []

    def client(n: int, share: int) -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            for _ in range(share):
                if fresh(n):
                    connection.close()
                connection.request("POST", path, body, {**headers, "Connection": "close" if fresh(n) else "keep-alive"})
                answer = connection.getresponse()
                answer.read()
                if answer.status != 201:
                    raise RuntimeError(f"a send answered {answer.status}")
                with lock:
                    done[0] += 1
                    if on_sent is not None and done[0] % 100 == 0:
                        on_sent(done[0])
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=client, args=(n, count // clients + (n < count % clients))) for n in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return done[0]


def soak(endpoint: str, pid: int, count: int, every: int = 5000) -> list[tuple[int, Usage, float]]:
    """`count` sends, half by clients with a new connection per request, half by kept-alive ones: the server's usage
    (and the seconds elapsed) every `every` sends."""
    create_queue(endpoint, "soak")
    started = time.monotonic()
    readings = [(0, usage(pid), 0.0)]

    def read(done: int) -> None:
        if done % every == 0:
            readings.append((done, usage(pid), time.monotonic() - started))

    sends(endpoint, "soak", count, 4, lambda n: n % 2 == 0, read)
    return readings


def main() -> None:
    import tempfile

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as folder, local_server(Path(folder)) as (proc, endpoint):
        readings = soak(endpoint, proc.pid, count, every=max(100, count // 20))
        acknowledged = active_messages(endpoint, "soak")
    rows = [[done, u.files, u.threads, f"{u.rss_kb / 1024:.1f}", f"{seconds:.0f}"] for done, u, seconds in readings]
    for row in rows:
        print(row, flush=True)
    table = md_table(["sends done", "open files", "threads", "RSS MB", "seconds"], rows)
    body = f"""
`python -m local_runtime` (SQLite engine) under `ulimit -n {FILES}`, {count:,} SendMessage requests (signed by the
official Python SDK's signer) by 4 HTTP clients, two opening a new connection per request and two keeping theirs; the
server process read from /proc every {max(100, count // 20):,} sends. Messages in the queue at the end: {acknowledged:,}.

{table}

Before this change each connection's thread kept an SQLite connection open for ever: open files grew from 15 to the
limit and sends failed (`500`, "unable to open database file") after about 120 connections under 256 files.
"""
    print(body)
    write_result("connection_churn", "The local server's open files, threads and memory under connection churn", body)


if __name__ == "__main__":
    main()
