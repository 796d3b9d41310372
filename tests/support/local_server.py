"""The local runtime as a test process: `python -m local_runtime` on a free loopback port, and its clock."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """`python -m local_runtime` with `env`, once it accepts connections on `port`."""
    with open(log, "ab") as out:
        proc = subprocess.Popen([str(PYTHON), "-m", "local_runtime"], cwd=ROOT, env=env, stdout=out, stderr=out)
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early: {log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            if time.monotonic() > deadline:
                proc.terminate()
                raise RuntimeError(f"server did not start: {log.read_text()}") from None
            time.sleep(0.05)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


class ServerClock:
    """The clock of a local server started with `env()` (`MNS_CLOCK_FILE`, `local_runtime.clock.FileClock`): the
    wall clock plus an offset the test raises, so the server's time moves on without the test waiting for it.

    `now()` is the server's time as this process sees it; `at(monotonic)` the server's time when `time.monotonic()`
    read `monotonic` (a push endpoint's hit, say), from the record of every move."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0.0
        self.moves: list[tuple[float, float]] = [(float("-inf"), 0.0)]  # (time.monotonic(), offset from then on)
        self._write()

    def env(self) -> dict[str, str]:
        return {"MNS_CLOCK_FILE": str(self.path)}

    def now(self) -> float:
        return time.time() + self.offset

    def at(self, monotonic: float) -> float:
        offset = next(offset for since, offset in reversed(self.moves) if since <= monotonic)
        return monotonic - time.monotonic() + time.time() + offset

    def advance(self, seconds: float) -> None:
        """Move the server's time `seconds` forward (at once: what waits on it is due as soon as it looks)."""
        assert seconds >= 0, "the clock moves forward only"
        self.offset += seconds
        self.moves.append((time.monotonic(), self.offset))  # before the server can see it: a hit is never early
        self._write()

    def run_until(self, done: Callable[[], bool], until: float, step: float = 0.05, pause: float = 0.05) -> None:
        """Move the clock `step` seconds every `pause` real seconds (twice as fast as real time, by default) until
        `done()` or until the server's time is `until`."""
        while not done() and self.now() < until:
            self.advance(min(step, max(0.0, until - self.now())))
            time.sleep(pause)

    def _write(self) -> None:
        fresh = self.path.with_name(self.path.name + ".new")
        fresh.write_text(repr(self.offset))
        os.replace(fresh, self.path)  # a new file: the server's reader sees the change at once
