"""What enforcing the roles adds to a moto server's start (`MNS_ROLES`, `local_runtime.roles`), and what the synth
it reads costs once per change of the stack.

    .venv/bin/python -m bench.roles_start [--rounds 5]

Each round starts `python -m local_runtime` on the moto engine without, then with, `MNS_ROLES=<template>` (the
template cached, as the e2e servers read it), timed from the process's start until its first answer
(GET /queues, signed: the socket listens before the backend has started; with the roles, the function's services are
made on its first call). The synth is timed once into an empty cache.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from local_runtime.roles.template import cached_template
from tests.support.local_server import free_port, start_server, stop_server
from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A, server_env


def one_start(roles: bool, folder: Path) -> tuple[float, float]:
    port = free_port()
    env = server_env(port, MNS_ENGINE="moto")
    if not roles:
        env.pop("MNS_ROLES", None)
    started = time.perf_counter()
    proc = start_server(env, port, folder / f"server-{port}.log")
    up = time.perf_counter() - started
    try:
        client = RawClient(f"http://127.0.0.1:{port}", ACCOUNT_A[1], ACCOUNT_A[2])
        called = time.perf_counter()
        assert client.request("GET", "/queues").status == 200
        first = time.perf_counter() - called
    finally:
        stop_server(proc)
    return up, first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        cached_template(cache=Path(cache))
        synth = time.perf_counter() - started
    cached_template()
    results: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):
            for roles in (False, True):
                results[roles].append(one_start(roles, Path(folder)))
    print(f"synth into an empty cache (in-process, cdk-nag included): {synth:.1f} s")
    # The listening socket is bound before the backend starts: the first answer is when the server is ready.
    print("| server | start to first answer (GET /queues), median s | of which the first call, median s | rounds |")
    print("|---|---|---|---|")
    ready: dict[bool, float] = {}
    for roles, label in ((False, "moto, roles off"), (True, "moto, roles enforced (template cached)")):
        ready[roles] = statistics.median(up + first for up, first in results[roles])
        firsts = statistics.median(first for _, first in results[roles])
        print(f"| {label} | {ready[roles]:.2f} | {firsts:.2f} | {len(results[roles])} |")
    print(f"added per server start: {ready[True] - ready[False]:+.2f} s (median against median)")


if __name__ == "__main__":
    main()
