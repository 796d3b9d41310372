"""Drain throughput of `python -m migrate` between two `make run` servers (`python -m local_runtime`, the embedded
SQLite engine, each its own process and data folder): messages/s moved from the source's queues to the target's.

    python -m bench.migrate_drain [--messages 5000] [--queues 8] [--parallel 4] [--body 1KB|16-60KB]

The source's queues are filled first (incompressible bodies: base64 of random bytes, 1 KB each or 16 to 60 KB
uniformly; sent in the batches the service takes, at most 16 messages and 64 KB; one in four queues FIFO with five
groups), `migrate apply` copies the queues, then `migrate drain` is timed; the figures are its own summary's.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aliyunsdkcore.client import AcsClient
from aliyunsdkcore.request import CommonRequest
from mns.account import Account
from mns.queue import Message, QueueMeta

from migrate.batching import cut
from migrate.cli import main
from mnsclient.messages import body_bytes

KEY = ("1000000000000001", "BENCHKEY", "BENCHSECRET")
BODY_SIZES = {"1KB": (1024, 1024), "16-60KB": (16 * 1024, 60 * 1024)}  # characters of base64: bytes on the wire


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(folder: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "MNS_PORT": str(port), "MNS_DATA_DIR": str(folder), "MNS_ENGINE": "sqlite"}
    env.update(MNS_ACCOUNT_ID=KEY[0], MNS_ACCESS_KEY_ID=KEY[1], MNS_ACCESS_KEY_SECRET=KEY[2])
    log = open(folder / "server.log", "ab")  # noqa: SIM115 (the server's for its life)
    proc = subprocess.Popen([sys.executable, "-m", "local_runtime"], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("a server did not start")


def _fill(endpoint: str, queues: int, messages: int, sizes: tuple[int, int]) -> int:
    """The source's queues made and filled: the bodies' bytes in all."""
    account, rng = Account(endpoint, KEY[1], KEY[2]), random.Random(1)
    client = AcsClient(KEY[1], KEY[2], "cn-hangzhou")
    for i in range(queues):
        if i % 4 != 3:
            account.get_queue(f"bench-q{i}").create(QueueMeta())
            continue
        request = CommonRequest(domain=endpoint.split("://")[1], version="2022-01-19", action_name="CreateQueue")
        request.set_protocol_type("http")
        request.set_method("POST")
        request.add_body_params("QueueName", f"bench-q{i}")
        request.add_body_params("QueueType", "fifo")  # SDK 1.3.0's QueueMeta has no type: Mns-open, as Terraform
        client.do_action_with_exception(request)
    total = 0
    for i in range(queues):
        queue = account.get_queue(f"bench-q{i}")
        queue.set_encoding(False)
        share = range(i, messages, queues)
        numbers = list(share)
        for start in range(0, len(numbers), 16):
            batch = []
            for n in numbers[start : start + 16]:
                body = base64.b64encode(rng.randbytes(3 * rng.randint(*sizes) // 4)).decode()
                total += len(body)
                batch.append(Message(body, None, None, f"g{n % 5}") if i % 4 == 3 else Message(body, 0, 1 + n % 16))
            for run in cut(batch, lambda m: body_bytes(m.message_body)):
                queue.batch_send_message(run)
    return total


def run(messages: int, queues: int, parallel: int, sizes: tuple[int, int] = BODY_SIZES["1KB"]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "source").mkdir()
        (Path(folder) / "target").mkdir()
        source, source_url = _server(Path(folder) / "source")
        target, target_url = _server(Path(folder) / "target")
        try:
            body_total = _fill(source_url, queues, messages, sizes)
            env = {
                "ALIBABA_CLOUD_ENDPOINT": source_url,
                "ALIBABA_CLOUD_ACCESS_KEY_ID": KEY[1],
                "ALIBABA_CLOUD_ACCESS_KEY_SECRET": KEY[2],
                "MNS_ENDPOINT": target_url,
                "MNS_ACCESS_KEY_ID": KEY[1],
                "MNS_ACCESS_KEY_SECRET": KEY[2],
            }
            common = ["--aliyun-config", str(Path(folder) / "none.json")]
            assert main(["apply", *common], environ=env, out=io.StringIO(), err=io.StringIO()) == 0
            out = io.StringIO()
            state = ["--state", str(Path(folder) / "state"), "--parallel", str(parallel), "--json"]
            code = main(["drain", *common, *state], environ=env, out=out, err=io.StringIO())
            summary = json.loads(out.getvalue())
            assert code == 0 and summary["totals"]["moved"] == messages, summary
            seconds = summary["seconds"]
            return {
                "messages": messages,
                "seconds": seconds,
                "messages_per_second": messages / seconds,
                "body_megabytes_per_second": body_total / seconds / 1e6,
            }
        finally:
            source.terminate()
            target.terminate()
            source.wait()
            target.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--queues", type=int, default=8)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--body", choices=sorted(BODY_SIZES), default="1KB")
    args = parser.parse_args()
    result = run(args.messages, args.queues, args.parallel, BODY_SIZES[args.body])
    print(
        f"bodies {args.body}, queues {args.queues}, parallel {args.parallel}: {result['messages']} messages in "
        f"{result['seconds']:.2f} s, {result['messages_per_second']:.0f} messages/s, "
        f"{result['body_megabytes_per_second']:.1f} MB/s of bodies"
    )
