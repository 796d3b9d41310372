"""The local server on `MNS_ENGINE=moto` with DynamoDB faults injected at its client's botocore layer (`tests.support.faults`):
every acknowledged message still received, no request over 30 s, every error a retryable MNS error; and a request
that meets no throttling answers as fast while others' are throttled.

Producers send (each message's body unique; a send answered 503 is sent again, as an application retries), consumers
receive and delete (a delete answered 503 is sent again) until every acknowledged message was deleted, through the
official Python SDK (which retries nothing itself). Sends answered twice (one lost answer, then the client's retry)
show as messages received twice: counted, not hidden (at-least-once).

    .venv/bin/python -m bench.dependency_faults
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench._common import md_table, pct, use_local_aws_defaults, write_result
from tests.support.faults import THROTTLE, Faults

VISIBILITY_SECONDS = 60
RETRYABLE = {"ServiceUnavailable"}  # (503: the Java SDK retries it on its own)
REQUEST_LIMIT_SECONDS = 30.0  # (API Gateway answers 504 at 30 s)


@dataclass
class Outcome:
    """What clients saw: request latencies (s) by operation, errors by code, bodies acknowledged, bodies received (with
    repeats)."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    acknowledged: set[str] = field(default_factory=set)
    received: Counter[str] = field(default_factory=Counter)
    deleted: set[str] = field(default_factory=set)
    refused_deletes: list[float] = field(default_factory=list)  # seconds from the receive to a delete's MessageNotExist
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, operation: str, call: Any, *args: Any) -> Any:
        """`call(*args)`, timed; an MNS error answered is counted, then raised."""
        from mns.mns_exception import MNSServerException

        started = time.monotonic()
        try:
            return call(*args)
        except MNSServerException as error:
            with self.lock:
                self.errors[error.type] += 1
            raise
        finally:
            with self.lock:
                self.latencies.setdefault(operation, []).append(time.monotonic() - started)

    @property
    def lost(self) -> set[str]:
        return self.acknowledged - set(self.received)

    @property
    def duplicates(self) -> int:
        return sum(count - 1 for count in self.received.values())

    @property
    def unretryable(self) -> Counter[str]:
        """Errors neither retryable nor a receive's "no message"."""
        return Counter({k: v for k, v in self.errors.items() if k not in RETRYABLE and k != "MessageNotExist"})

    @property
    def wrong_deletes(self) -> list[float]:
        """Deletes answered MessageNotExist while their receipt was valid (its visibility not over)."""
        return [age for age in self.refused_deletes if age < VISIBILITY_SECONDS]

    @property
    def slowest(self) -> float:
        return max((max(v) for v in self.latencies.values() if v), default=0.0)


def start_server() -> tuple[Any, Any]:
    """The local server on moto in this process, and a factory of its operator's SDK accounts (one per thread: the
    SDK's client is not thread-safe)."""
    from mns.account import Account

    from bench._servers import start_ours
    from mnsd.access.keys import StaticKeyStore

    server, _ = start_ours()
    key = StaticKeyStore(server.settings.credentials).default
    return server, lambda: Account(server.endpoint, key.key_id, key.secret)


def _until_done(outcome: Outcome, operation: str, call: Any, *args: Any) -> Any:
    """The call made again while answered 503 (as the application would)."""
    from mns.mns_exception import MNSServerException

    while True:
        try:
            return outcome.timed(operation, call, *args)
        except MNSServerException as error:
            if error.type != "ServiceUnavailable":
                raise
            time.sleep(0.05)


FIFO_QUEUE = (
    '<?xml version="1.0" encoding="UTF-8"?><Queue xmlns="http://mns.aliyuncs.com/doc/v1">'
    "<QueueType>fifo</QueueType><VisibilityTimeout>" + str(VISIBILITY_SECONDS) + "</VisibilityTimeout></Queue>"
)


def create_queue(account: Any, name: str, fifo: bool) -> None:
    """The queue `name` (visibility 60 s), FIFO through the SDK's own signing (its QueueMeta has no QueueType)."""
    from mns.mns_http import RequestInternal
    from mns.queue import QueueMeta

    if not fifo:
        meta = QueueMeta()
        meta.set_visibilitytimeout(VISIBILITY_SECONDS)
        account.get_queue(name).create(meta)
        return
    client = account.mns_client
    request = RequestInternal("PUT", f"/queues/{name}", data=FIFO_QUEUE.encode())
    client.build_header(type("Request", (), {"request_id": None})(), request)
    answer = client.http.send_request(request)
    if answer.status not in (201, 204):
        raise RuntimeError(f"FIFO queue {name} not created: {answer.status} {answer.data}")


def _produce(outcome: Outcome, account: Any, name: str, p: int, count: int, fifo: bool) -> None:
    from mns.queue import Message

    queue = account.get_queue(name)
    queue.set_encoding(False)
    for n in range(count):
        body = f"p{p}-{n}"
        message = Message(body)
        if fifo:
            message.set_message_group_id(f"g{(p * count + n) % 8}")
        _until_done(outcome, "send", queue.send_message, message)
        with outcome.lock:
            outcome.acknowledged.add(body)


def _consume(outcome: Outcome, account: Any, name: str, sending: threading.Event, seconds: float) -> None:
    from mns.mns_exception import MNSServerException

    queue = account.get_queue(name)
    queue.set_encoding(False)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with outcome.lock:
            if not sending.is_set() and outcome.acknowledged <= outcome.deleted:
                return
        asked = time.monotonic()  # (its messages were claimed after this)
        try:
            received = outcome.timed("receive", queue.batch_receive_message, 16, 1)
        except MNSServerException:
            continue
        for message in received:
            with outcome.lock:
                outcome.received[message.message_body] += 1
            try:
                _until_done(outcome, "delete", queue.delete_message, message.receipt_handle)
            except MNSServerException as error:
                if error.type != "MessageNotExist":
                    raise
                with outcome.lock:
                    outcome.refused_deletes.append(time.monotonic() - asked)
                continue
            with outcome.lock:
                outcome.deleted.add(message.message_body)


def run(
    account_of: Any, name: str, producers: int, per_producer: int, consumers: int, fifo: bool, seconds: float = 120
) -> Outcome:
    """Send `producers` x `per_producer` messages and receive and delete them with `consumers` clients (each its own
    SDK account: the SDK's client is not thread-safe), the consumers for `seconds` at most."""
    outcome = Outcome()
    _until_done(outcome, "create", create_queue, account_of(), name, fifo)
    sending = threading.Event()
    sending.set()
    threads = [
        threading.Thread(target=_produce, args=(outcome, account_of(), name, p, per_producer, fifo))
        for p in range(producers)
    ]
    threads += [
        threading.Thread(target=_consume, args=(outcome, account_of(), name, sending, seconds))
        for _ in range(consumers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads[:producers]:
        thread.join()
    sending.clear()
    for thread in threads[producers:]:
        thread.join()
    return outcome


def sends_while_others_throttled(account_of: Any, queries: Faults, count: int = 40) -> tuple[list[float], list[float]]:
    """Latencies (s) of `count` sends with nothing throttled, then while `queries` throttles every Query (receives)
    and six clients keep receiving."""
    from mns.mns_exception import MNSServerException
    from mns.queue import Message, QueueMeta

    name = f"quiet-{time.monotonic_ns()}"
    account_of().get_queue(name).create(QueueMeta())
    account_of().get_queue(f"{name}-busy").create(QueueMeta())
    sender = account_of().get_queue(name)

    def sends() -> list[float]:
        latencies = []
        for n in range(count):
            started = time.monotonic()
            sender.send_message(Message(f"m{n}"))
            latencies.append(time.monotonic() - started)
        return latencies

    before = sends()
    queries.rate = 1.0
    stop = threading.Event()

    def receive() -> None:
        queue = account_of().get_queue(f"{name}-busy")
        while not stop.is_set():
            try:
                queue.receive_message(0)
            except MNSServerException:
                pass

    receivers = [threading.Thread(target=receive) for _ in range(6)]
    for thread in receivers:
        thread.start()
    time.sleep(0.5)  # the receivers in their retries
    try:
        during = sends()
    finally:
        stop.set()
        queries.rate = 0.0
        for thread in receivers:
            thread.join()
    return before, during


def _row(name: str, outcome: Outcome, faults: Faults) -> list[object]:
    sends, receives, deletes = (outcome.latencies.get(k, []) for k in ("send", "receive", "delete"))
    errors = ", ".join(f"{code} x{n}" for code, n in sorted(outcome.errors.items())) or "-"
    return [
        name,
        f"{faults.calls} ({dict(faults.counts)})",
        len(outcome.acknowledged),
        len(outcome.lost),
        outcome.duplicates,
        f"{pct([s * 1000 for s in sends], 50):.0f} / {pct([s * 1000 for s in sends], 99):.0f}",
        f"{pct([s * 1000 for s in deletes], 50):.0f} / {pct([s * 1000 for s in deletes], 99):.0f}",
        f"{outcome.slowest:.2f}",
        f"{len(outcome.refused_deletes)} ({len(outcome.wrong_deletes)})",
        errors,
    ]


def main() -> None:
    use_local_aws_defaults()
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    server, account_of = start_server()
    rows = []
    try:
        for fifo, producers, each, consumers in ((True, 2, 40, 2), (False, 4, 150, 4)):
            faults = Faults(rate=0.2, seed=7).install(server.clients("dynamodb"))
            outcome = run(account_of, f"faults-{'fifo' if fifo else 'std'}", producers, each, consumers, fifo, 400)
            faults.rate = 0.0
            rows.append(_row("FIFO" if fifo else "standard", outcome, faults))
            print(rows[-1], flush=True)
        queries = Faults(rate=0.0, kinds=(THROTTLE,), operations=frozenset({"Query"})).install(
            server.clients("dynamodb")
        )
        before, during = sends_while_others_throttled(account_of, queries)
    finally:
        server.stop()
    table = md_table(
        [
            "queue",
            "DynamoDB calls (faults injected)",
            "sent, acknowledged",
            "lost",
            "received twice",
            "send p50 / p99 ms",
            "delete p50 / p99 ms",
            "slowest request s",
            "deletes refused (while the receipt held)",
            "errors answered",
        ],
        rows,
    )
    quiet = md_table(
        ["sends", "p50 ms", "p90 ms", "max ms"],
        [
            [label, f"{pct(v, 50) * 1000:.1f}", f"{pct(v, 90) * 1000:.1f}", f"{max(v) * 1000:.1f}"]
            for label, v in (("nothing throttled", before), ("every receive's Query throttled (6 clients)", during))
        ],
    )
    body = f"""
20 % of the local server's DynamoDB calls (moto) answered with a fault, injected at its botocore client: a third
throttling, a third a conflict with a transaction (`TransactionConflictException`, or a transaction cancelled for
`TransactionConflict`), a third a lost answer (the call applied, then a read timeout). Standard queue: 4 producers x
150 messages, 4 consumers; FIFO queue (8 groups): 2 producers x 40, 2 consumers (moto's FIFO path is slow: about
1.5 s a message with 4 consumers even without faults, on this machine). Consumers batch-receive 16 (wait 1 s) and
delete each (for 400 s at most), through the official Python SDK; a 503 is sent again by the client. "Lost":
acknowledged and never received; "deletes refused": answered MessageNotExist (in brackets, while the receipt still
held: a wrong answer); "errors answered": every error code clients saw (MessageNotExist: a receive that found
nothing within its 1 s wait).

{table}

A send that meets no throttling, while six other clients' receives have every Query throttled (each such receive
retried with backoff to its budget, then answered 503):

{quiet}
"""
    print(body)
    write_result("dependency_faults", "DynamoDB faults under the local server: nothing acknowledged lost", body)


if __name__ == "__main__":
    main()
