"""One holder in a process of its own (`python -m wait_tier`), as `make run WAIT_TIER=holder`, the end-to-end tests
and the benchmark start it: started, asked for its counters, stopped (or killed, as a crash)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mnsd.waiting import contract

ROOT = Path(__file__).resolve().parents[1]


def local_url(port: int, path: str = "") -> str:
    return f"http://127.0.0.1:{port}{path}"


@dataclass
class Tier:
    origin: str  # the service's URL
    port: int  # clients call this
    wake_port: int  # wakes and counters
    key: str  # the key the origin verifies the tier's requests with
    log: IO[bytes] | None = None
    coalesce_ms: float | None = None  # the coalescing window (`wait_tier.coalesce`; 0: off), None: the holder's default
    peers: list[str] = field(default_factory=list)  # the other holders' wake URLs, which wakes are relayed to
    process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        """Where clients call the holder (and, with `contract.WAKE_PATH` on `wake_port`, where wakes are posted)."""
        return local_url(self.port)

    def start(self, timeout: float = 30.0) -> Tier:
        env = dict(
            os.environ,
            WAIT_TIER_ORIGIN=self.origin,
            WAIT_TIER_KEY=self.key,
            WAIT_TIER_PORT=str(self.port),
            WAIT_TIER_WAKE_PORT=str(self.wake_port),
            PYTHONPATH=os.pathsep.join([str(ROOT / "layers" / "mnsd" / "python"), str(ROOT)]),
        )
        if self.coalesce_ms is not None:
            env["WAIT_TIER_COALESCE_MS"] = str(self.coalesce_ms)
        if self.peers:
            env["WAIT_TIER_PEERS"] = ",".join(self.peers)
        out = self.log if self.log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen([sys.executable, "-m", "wait_tier"], env=env, stdout=out, stderr=out)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(self.url + contract.READY_PATH, timeout=1):  # noqa: S310 (local)
                    return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the wait tier did not start") from None
                time.sleep(0.05)

    def stats(self) -> dict[str, Any]:
        """The holder's counters (`Holder.stats`)."""
        with urllib.request.urlopen(local_url(self.wake_port, contract.STATS_PATH), timeout=5) as answer:  # noqa: S310 (local)
            return dict(json.loads(answer.read()))

    def stop(self, kill: bool = False) -> None:
        """Stop the holder (SIGKILL when `kill`: a crash); what it held is gone."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.process.wait(30)
        self.process = None
