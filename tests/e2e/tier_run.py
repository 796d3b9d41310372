"""The local server behind the wait tier (Debian's Pushpin and the waker, `wait_tier/`), for the end-to-end tests
and the benchmarks: the server in its own process, the tier in this one (so a test can kill it, count its origin
calls, or lose its hints)."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mns.account import Account
from mns.mns_exception import MNSExceptionBase, MNSServerException

from tests.local_server import free_port, start_server, stop_server
from wait_tier import pushpin
from wait_tier.tier import Tier


@dataclass
class TierRun:
    tier: Tier
    origin: str  # the server's own URL: the direct route (no hold)
    key: str  # the Grip-Sig key

    @property
    def url(self) -> str:
        return self.tier.url

    def restart(self, kill: bool = True) -> None:
        """The tier stopped (killed: as a crash) and started again: all it held is dropped. Clients reach the new
        instance on a new port, as they reach a new task on AWS (condure cannot bind the old port again while the
        connections it had linger in TIME_WAIT); the waker keeps its port, which the server posts wakes to."""
        self.tier.stop(kill=kill)
        self.tier.port = free_port()
        self.tier.start()


@contextmanager
def tier_server(directory: Path, env: Callable[..., dict[str, str]], **extra: str) -> Iterator[TierRun]:
    """A server (SQLite, its data in `directory`) behind a tier of its own; `env(port, **extra)` its environment."""
    if not pushpin.installed():
        raise RuntimeError("Debian's pushpin is needed (`make pushpin` installs it)")
    port, public, waker, control = (free_port() for _ in range(4))
    key = secrets.token_urlsafe(24)
    tier = Tier(f"http://127.0.0.1:{port}", public, control, waker, key, directory / "pushpin")
    server_env = env(
        port,
        MNS_ENGINE="sqlite",
        MNS_DATA_DIR=str(directory / "data"),
        MNS_GRIP_KEY=key,
        MNS_WAIT_TIER_WAKE_URL=tier.wake_url,
        **extra,
    )
    proc = start_server(server_env, port, directory / "server.log")
    try:
        tier.start()
        try:
            yield TierRun(tier, f"http://127.0.0.1:{port}", key)
        finally:
            tier.stop()
    finally:
        stop_server(proc)


def receive_later(account: Callable[[], Account], queue: str, wait: int, batch: int = 0) -> Future:
    """A receive started now in a thread of its own (its own SDK client): its future gives (messages, when)."""
    future: Future = Future()

    def run() -> None:
        q = account().get_queue(queue)
        q.set_encoding(False)
        try:
            got = q.batch_receive_message(batch, wait) if batch else [q.receive_message(wait)]
            future.set_result((got, time.time()))
        except MNSServerException as exc:
            future.set_result(([], time.time()) if exc.type == "MessageNotExist" else exc)
        except MNSExceptionBase as exc:
            future.set_result(exc)

    threading.Thread(target=run, daemon=True).start()
    return future


def holds(tier: Tier) -> int:
    """How many holds the tier's waker has given a channel so far."""
    assert tier.waker is not None
    return tier.waker.holds


def until_held(tier: Tier, target: int, timeout: float = 10.0) -> None:
    """Wait until the waker has seen `target` holds in all, and Pushpin subscribed them (a few tens of ms later)."""
    assert tier.waker is not None
    deadline = time.monotonic() + timeout
    while tier.waker.holds < target:
        assert time.monotonic() < deadline, f"{tier.waker.holds} holds, wanted {target}"
        time.sleep(0.01)
    time.sleep(0.1)
