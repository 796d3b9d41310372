"""One client's request latency against the local servers of several checkouts, side by side in one run: each
checkout's `python -m local_runtime` (SQLite engine, its own code through `PYTHONPATH`, a fresh data directory),
and one SDK client that sends, receives and deletes a message on each server in turn, the order rotating each step
so that a drift of the machine falls on all alike. Prints p50, p90 and the mean of a step (three requests on a
kept-alive connection), in ms.

    python -m bench.request_latency_ab LABEL=DIR [LABEL=DIR ...] [--steps 1500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import pct
from bench._servers import free_port


def start(checkout: Path, data: str) -> tuple[subprocess.Popen[bytes], Any]:
    from mns.account import Account
    from mns.queue import QueueMeta

    from mnsd.ground.settings import DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_SECRET

    port = free_port()
    env = dict(
        os.environ,
        MNS_PORT=str(port),
        MNS_ENGINE="sqlite",
        MNS_DATA_DIR=data,
        POWERTOOLS_LOG_LEVEL="WARNING",
        PYTHONPATH=f"{checkout / 'layers/mnsd/python'}{os.pathsep}{checkout}",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "local_runtime"], cwd=checkout, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    account = Account(f"http://127.0.0.1:{port}", DEFAULT_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_SECRET)
    deadline = time.monotonic() + 60
    while True:
        try:
            account.list_queue()
            break
        except Exception:
            if time.monotonic() > deadline or process.poll() is not None:
                process.terminate()
                raise
            time.sleep(0.1)
    queue = account.get_queue("latency")
    queue.create(QueueMeta())
    queue.set_encoding(False)
    return process, queue


def main(argv: list[str] | None = None) -> None:
    from mns.queue import Message

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs="+", help="LABEL=DIR")
    parser.add_argument("--steps", type=int, default=1500)
    args = parser.parse_args(argv)
    labelled = [(label, Path(path).resolve()) for label, _, path in (c.partition("=") for c in args.checkouts)]
    processes, queues = [], {}
    with tempfile.TemporaryDirectory() as data:
        try:
            for label, checkout in labelled:
                process, queues[label] = start(checkout, os.path.join(data, label))
                processes.append(process)
            times: dict[str, list[float]] = {label: [] for label in queues}
            labels = list(queues)
            for step in range(args.steps):
                for label in labels[step % len(labels) :] + labels[: step % len(labels)]:
                    queue = queues[label]
                    started = time.perf_counter()
                    queue.send_message(Message("x"))
                    queue.delete_message(queue.receive_message(0).receipt_handle)
                    times[label].append((time.perf_counter() - started) * 1000)
        finally:
            for process in processes:
                process.terminate()
                process.wait(30)
    for label, found in times.items():
        print(
            f"{label}: p50 {pct(found, 50):.2f} ms, p90 {pct(found, 90):.2f} ms, mean {statistics.mean(found):.2f} ms"
        )


if __name__ == "__main__":
    main()
