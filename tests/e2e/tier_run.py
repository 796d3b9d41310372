"""The local server behind the wait tier (the holder, `wait_tier/`, in a process of its own, as `make run
WAIT_TIER=holder` runs it), for the end-to-end tests: a test can kill the holder, read its counters, or move its
wake port (the server's wakes are then lost)."""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mns.account import Account
from mns.mns_exception import MNSExceptionBase, MNSServerException

from mnsd.waiting.contract import WAKE_PATH
from tests.support.local_server import free_port, start_server, stop_server
from wait_tier.tier import Tier, local_url


@dataclass
class TierRun:
    tier: Tier
    origin: str  # the server's own URL: the direct route (no hold)
    key: str  # the tier's key

    @property
    def url(self) -> str:
        return self.tier.url

    def stats(self) -> dict:
        return self.tier.stats()

    def restart(self, kill: bool = True, wake_port: int | None = None) -> None:
        """The holder stopped (killed: as a crash) and started again on the same port: all it held is dropped. With
        `wake_port`, it takes wakes there from now on (the server keeps posting to the port it was given)."""
        self.tier.stop(kill=kill)
        if wake_port is not None:
            self.tier.wake_port = wake_port
        self.tier.start()


@contextmanager
def tier_server(
    directory: Path,
    env: Callable[..., dict[str, str]],
    engine: str = "sqlite",
    coalesce_ms: float | None = None,
    **extra: str,
) -> Iterator[TierRun]:
    """A server (on `engine`, its data in `directory`) behind a holder of its own (its coalescing window `coalesce_ms`,
    None: the holder's default); `env(port, **extra)` its environment."""
    port, public, wakes = (free_port() for _ in range(3))
    key = secrets.token_urlsafe(24)
    log = open(directory / "tier.log", "wb")  # noqa: SIM115
    tier = Tier(f"http://127.0.0.1:{port}", public, wakes, key, log, coalesce_ms)
    server_env = env(
        port,
        MNS_ENGINE=engine,
        MNS_DATA_DIR=str(directory / "data"),
        MNS_WAIT_TIER_KEY=key,
        MNS_WAIT_TIER_WAKE_URL=local_url(wakes, WAKE_PATH),
        **extra,
    )
    proc = start_server(server_env, port, directory / "server.log")
    try:
        tier.start()
        try:
            yield TierRun(tier, f"http://127.0.0.1:{port}", key)
        finally:
            tier.stop()
            log.close()
    finally:
        stop_server(proc)


@contextmanager
def tier_pair(
    directory: Path, env: Callable[..., dict[str, str]], engine: str = "sqlite"
) -> Iterator[tuple[TierRun, TierRun]]:
    """A server behind two holders, as two tasks of the tier on AWS: each relays the wakes it takes to the other; the
    server posts its wakes (those of requests not through the tier) to the first one's wake port."""
    port, *ports = (free_port() for _ in range(5))
    key = secrets.token_urlsafe(24)
    logs = [open(directory / f"tier-{n}.log", "wb") for n in range(2)]  # noqa: SIM115
    first, second = (
        Tier(
            f"http://127.0.0.1:{port}",
            ports[n],
            ports[n + 2],
            key,
            logs[n],
            peers=[local_url(ports[2 + (1 - n)], WAKE_PATH)],
        )
        for n in range(2)
    )
    server_env = env(
        port,
        MNS_ENGINE=engine,
        MNS_DATA_DIR=str(directory / "data"),
        MNS_WAIT_TIER_KEY=key,
        MNS_WAIT_TIER_WAKE_URL=local_url(first.wake_port, WAKE_PATH),
    )
    proc = start_server(server_env, port, directory / "server.log")
    try:
        first.start()
        try:
            second.start()
            try:
                origin = f"http://127.0.0.1:{port}"
                yield TierRun(first, origin, key), TierRun(second, origin, key)
            finally:
                second.stop()
        finally:
            first.stop()
            for log in logs:
                log.close()
    finally:
        stop_server(proc)


def receive_later(account: Callable[[], Account], queue: str, wait: int, batch: int = 0) -> Future:
    """A receive started now in a thread of its own (its own SDK client): its future gives (messages, when)."""
    future: Future = Future()

    def run() -> None:
        q = account().get_queue(queue)
        q.set_encoding(False)
        try:
            got = q.batch_receive_message(batch, wait) if batch else [q.receive_message(10)]
            future.set_result((got, time.time()))
        except MNSServerException as exc:
            future.set_result(([], time.time()) if exc.type == "MessageNotExist" else exc)
        except MNSExceptionBase as exc:
            future.set_result(exc)

    threading.Thread(target=run, daemon=True).start()
    return future


def holds(run: TierRun) -> int:
    """How many holds the holder has made so far."""
    return int(run.stats()["holds"])


def until_held(run: TierRun, target: int, timeout: float = 10.0) -> None:
    """Wait until the holder has made `target` holds in all."""
    deadline = time.monotonic() + timeout
    while (seen := holds(run)) < target:
        assert time.monotonic() < deadline, f"{seen} holds, wanted {target}"
        time.sleep(0.01)


def consume(
    account, name: str, owners: Counter, stop: threading.Event, errors: list, deleter=None, at: dict | None = None
) -> None:
    """A consumer: receive (held by the tier), delete (through `deleter`'s client if given: the direct route), again;
    network errors (the tier restarting) retried. `at`: when each message was first received."""
    q = account().get_queue(name)
    q.set_encoding(False)
    deletes = q if deleter is None else deleter().get_queue(name)
    while not stop.is_set():
        try:
            message = q.receive_message(10)
        except MNSServerException as exc:
            if exc.type != "MessageNotExist":
                errors.append(exc)
            continue
        except MNSExceptionBase:
            time.sleep(0.2)
            q = account().get_queue(name)
            q.set_encoding(False)
            continue
        owners[message.message_body] += 1
        if at is not None:
            at.setdefault(message.message_body, time.time())
        try:
            deletes.delete_message(message.receipt_handle)
        except MNSExceptionBase as exc:
            errors.append(exc)


def run_consumers(account, name: str, count: int, owners: Counter, errors: list, deleter=None, at=None):
    stop = threading.Event()
    args = (account, name, owners, stop, errors, deleter, at)
    threads = [threading.Thread(target=consume, args=args, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    return stop, threads


def wait_for(owners: Counter, total: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(owners) < total and time.monotonic() < deadline:
        time.sleep(0.1)
