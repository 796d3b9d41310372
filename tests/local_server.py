"""The local runtime as a test process: `python -m local_runtime` on a free loopback port."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
