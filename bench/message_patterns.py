"""What a message costs as clients really send, receive and delete it, all-in, per front door, beside SQS and MNS.

    python -m bench.message_patterns [--messages N] [--body B] [--pattern P] [--front-door D]

The patterns, on a busy (indexed) standard queue (`bench.message_cost.Bench.make_busy`) unless named:

- one at a time, one client: send one, receive one, delete it by its handle, in turn (`bench.message_cost`'s
  single case);
- the same on a quiet queue (one that never held many messages in flight: no ready index), as a queue of a few
  messages a second is;
- one at a time, 16 producers + 16 consumers: 16 threads each send single messages, 16 threads each receive one
  and delete it, all at once on one queue;
- receive 16, delete each alone, 16 consumers: one producer sends batches of 16; 16 consumer threads each receive
  up to 16 and delete each message by its own request;
- whole batches of 16: one producer sends batches of 16, one consumer receives 16 and deletes them in one batch
  delete, in turn (today's headline, `bench.message_cost`).

Real concurrency: the threads go through the services over moto with the recording client (`tests/support/recording.py`,
DynamoDB's billing rules), each DynamoDB call made alone as DynamoDB makes each atomically (`local_runtime.
moto_client.SerializedClient`'s reason) and the simulated clock moved 1 ms by each; races between calls stay real.
Counted: lost claims (conditional claims that failed: another consumer took the lease or pack first), empty
receives, each request's DynamoDB calls (Lambda's duration), retries included. A standing backlog of 64 messages
is sent before the consumers start (a busy queue is seldom empty); the run stops when the consumers have received
as many messages as the producers sent.

All-in, per million messages: the front door (`bench.front_doors`), Lambda, DynamoDB units and storage
(`bench.cost_model`), CloudWatch Logs at the stack's log settings (bytes measured by `bench.log_bytes`), X-Ray at the
stack's tracing, the daily export and point-in-time recovery (`bench.all_in`). The fixed monthly costs are stated
apart, and the estate of 500 queues at a million single-message lifecycles a month each priced with them.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import all_in, cost_model, front_doors
from bench.bodies import BODIES
from bench.capacity import ACCOUNT, no_real_sleeps
from bench.cost_model import Usage
from bench.message_cost import (
    BATCH,
    DELETE_HANDLE_BYTES,
    RECEIVE_ENVELOPE_BYTES,
    SEND_ENVELOPE_BYTES,
    Bench,
    Case,
)
from infra.observability import LogSettings
from local_runtime.moto_client import SerializedClient

INDEXED = "standard, indexed"
QUIET = "standard, quiet"
BACKLOG = 64
CALL_SECONDS = 0.001  # simulated time each DynamoDB call takes
CONSUMERS = 16


@dataclass(frozen=True)
class Pattern:
    name: str
    producers: int
    consumers: int
    send_batch: int
    receive_batch: int
    delete_alone: bool
    concurrent: bool = True
    queue: str = INDEXED


PATTERNS = {
    p.name: p
    for p in (
        Pattern("one at a time, one client", 1, 1, 1, 1, True, concurrent=False),
        Pattern("one at a time, one client, quiet queue", 1, 1, 1, 1, True, concurrent=False, queue=QUIET),
        Pattern("one at a time, 16 producers + 16 consumers", 16, CONSUMERS, 1, 1, True),
        Pattern("receive 16, delete each alone, 16 consumers", 1, CONSUMERS, BATCH, BATCH, True),
        Pattern("whole batches of 16", 1, 1, BATCH, BATCH, False, concurrent=False),
    )
}


class CountedCalls(list[Any]):
    """The recorder's list of calls, counting each thread's (the calls of the request it is making) and moving the
    simulated clock by each call. The calls are made one at a time (`SerializedClient`: DynamoDB's per-call
    atomicity; moto's backend is not thread-safe), so each is appended by the thread that made it."""

    def __init__(self, clock: Any) -> None:
        super().__init__()
        self.clock = clock
        self.local = threading.local()

    def append(self, call: Any) -> None:
        super().append(call)
        self.clock.t += CALL_SECONDS
        self.local.count = self.mine() + 1

    def mine(self) -> int:
        return int(getattr(self.local, "count", 0))


@dataclass
class Run:
    """One concurrent run's shared counts. Consumers take what they ask for from `left` before a receive and give
    back what it did not return: together they receive exactly the run's messages."""

    usage: Usage
    left: int
    delivered: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    errors: list[BaseException] = field(default_factory=list)

    def take(self, n: int) -> int:
        with self.lock:
            n = min(n, self.left)
            self.left -= n
            return n

    def give_back(self, n: int) -> None:
        with self.lock:
            self.left += n


class Concurrent:
    """A pattern's producers and consumers as threads through the services (a busy queue, warm)."""

    def __init__(self, pattern: Pattern, body: str, messages: int) -> None:
        self.pattern, self.body, self.messages = pattern, body, messages
        self.bench = Bench(wrap=lambda client, recorder: SerializedClient(client))
        self.counted = CountedCalls(self.bench.clock)
        self.bench.recorder.calls = self.counted
        self.size = len(BODIES[body](random.Random(0)))

    def close(self) -> None:
        self.bench.close()

    def request(self, run: Run, op: str, payload: int, fn: Callable[..., Any], *args: Any) -> Any:
        """One API request, its DynamoDB calls counted (this thread's) into the run's usage."""
        start = self.counted.mine()
        try:
            return fn(ACCOUNT, *args)
        finally:
            with run.lock:
                run.usage.operations[op].count(self.counted.mine() - start, payload)

    def measure(self) -> Usage:
        bench, pattern = self.bench, self.pattern
        name = bench.create(Case(self.body, pattern.send_batch, INDEXED))
        bench.make_busy(name)
        for _ in range(BACKLOG // BATCH):
            bench.queues.send(ACCOUNT, name, bench.inputs(self.body, BATCH, False))
        queue = bench.queues.get_queue(ACCOUNT, name)
        run = Run(
            Usage(messages=self.messages, retention_seconds=queue.attributes.message_retention_period), self.messages
        )
        before = bench.stored_bytes(queue.queue_id)
        bench.recorder.reset()
        bench.wakes.count = 0
        per_producer = self.messages // pattern.producers
        threads = [
            threading.Thread(target=self.produce, args=(run, name, per_producer)) for _ in range(pattern.producers)
        ]
        threads += [threading.Thread(target=self.consume, args=(run, name)) for _ in range(pattern.consumers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        if run.errors:
            raise run.errors[0]
        assert not any(thread.is_alive() for thread in threads), "a client thread did not finish"
        assert len(set(run.delivered)) == len(run.delivered), "a message was received twice"
        usage = run.usage
        calls = bench.recorder.calls
        usage.write_units = sum(c.wcu for c in calls)
        usage.index_write_units = sum(c.index_wcu for c in calls)
        usage.read_units = sum(c.rcu for c in calls)
        usage.lost_claims = sum(1 for c in calls if c.op == "UpdateItem" and c.failed_condition)
        usage.wakes = bench.wakes.count
        left = bench.stored_bytes(queue.queue_id) - before  # what the run's deletes left (the backlog stays)
        usage.left_bytes = max(0.0, left) / len(run.delivered)
        usage.stored_bytes = self.stored_per_message()
        return usage

    def stored_per_message(self) -> float:
        """Bytes a message of this body takes while stored (measured on a fresh queue of the bench's tables)."""
        bench = self.bench
        name = bench.create(Case(self.body, self.pattern.send_batch, INDEXED))
        queue_id = bench.queues.get_queue(ACCOUNT, name).queue_id
        before = bench.stored_bytes(queue_id)
        bench.queues.send(ACCOUNT, name, bench.inputs(self.body, self.pattern.send_batch, False))
        return (bench.stored_bytes(queue_id) - before) / self.pattern.send_batch

    def produce(self, run: Run, name: str, count: int) -> None:
        try:
            n = self.pattern.send_batch
            for _ in range(count // n):
                inputs = self.bench.inputs(self.body, n, False)
                if n == 1:
                    self.request(run, "send", self.size + SEND_ENVELOPE_BYTES, self.bench.queues.send, name, inputs)
                else:
                    results = self.request(
                        run, "send", n * (self.size + SEND_ENVELOPE_BYTES), self.bench.queues.send, name, inputs
                    )
                    assert all(r.error is None for r in results)
        except BaseException as error:  # noqa: BLE001 (reported by the run)
            run.errors.append(error)

    def consume(self, run: Run, name: str) -> None:
        from mnsd.ground import errors

        queues = self.bench.queues
        try:
            while not run.errors:
                n = run.take(self.pattern.receive_batch)
                if not n:
                    with run.lock:
                        if run.left == 0 and len(run.delivered) >= run.usage.messages:
                            return
                    time.sleep(0.001)  # (another consumer's receive may give some back)
                    continue
                try:
                    got = self.request(
                        run, "receive", n * (self.size + RECEIVE_ENVELOPE_BYTES), queues.receive, name, n, 0
                    )
                except errors.MessageNotExist:
                    got = []
                    with run.lock:
                        run.usage.empty_receives += 1
                run.give_back(n - len(got))
                with run.lock:
                    run.delivered += [r.message.message_id for r in got]
                if not got:
                    time.sleep(0.001)  # (real time: let the producers in)
                    continue
                handles = [r.receipt_handle for r in got]
                if self.pattern.delete_alone:
                    for handle in handles:
                        self.request(run, "delete", DELETE_HANDLE_BYTES, queues.delete, name, handle)
                else:
                    self.request(run, "delete", len(handles) * DELETE_HANDLE_BYTES, queues.batch_delete, name, handles)
        except BaseException as error:  # noqa: BLE001 (reported by the run)
            run.errors.append(error)


def measure(pattern: Pattern, body: str, messages: int) -> Usage:
    """The usage of `messages` lifecycles of `body` bodies in `pattern`, on a busy standard queue."""
    if not pattern.concurrent:
        bench = Bench()
        try:
            case = Case(body, pattern.send_batch, pattern.queue)
            usage, only_index = bench.measure(case, max(1, messages // pattern.send_batch))
        finally:
            bench.close()
        assert only_index == (pattern.queue == INDEXED), (
            "a busy queue's receives read the index only, a quiet one's not"
        )
        return usage
    run = Concurrent(pattern, body, messages)
    try:
        return run.measure()
    finally:
        run.close()


@dataclass(frozen=True)
class Priced:
    """A measured pattern's $ per million messages by part, at a front door and log settings."""

    parts: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.parts.values())


def price(usage: Usage, door: str, observability: all_in.Observability) -> Priced:
    parts = cost_model.per_million(usage)
    parts.pop("HTTP API")
    return Priced(
        {
            f"front door ({door})": front_doors.per_million(usage, door),
            **parts,
            **all_in.extras(usage, observability),
        }
    )


def observability(settings: LogSettings, measured: dict[str, Any] | None = None) -> all_in.Observability:
    """The billed log bytes per request of each operation under `settings` (measured by `bench.log_bytes`)."""
    from bench import log_bytes

    lines = measured or log_bytes.measure()
    return all_in.Observability(
        {op: float(request.billed_bytes(settings)) for op, request in lines.items()},
        settings.tracing,
        {op: float(request.billed_bytes(settings, monitored=False)) for op, request in lines.items()},
    )


def mns_per_million(usage: Usage) -> float:
    """MNS: every request at MNS's request price (`MNS_REQUEST_USD`)."""
    requests = sum(op.requests for op in usage.operations.values())
    return usage.per_message(requests) * MNS_REQUEST_USD * cost_model.MILLION


# MNS (Alibaba Cloud, Chinese mainland): about CNY 2 per million requests; converted at USD 1 = CNY 7.10 (the rate
# of 2026-12-07 used here; `issues show 48` used the same ≈ $0.28 per million). The queue fee: $3.34 per
# queue-month (a figure of the issue, kept as it gave it).
MNS_CNY_PER_MILLION = 2.0
CNY_PER_USD = 7.10
RATE_DATE = "2026-12-07"
MNS_REQUEST_USD = MNS_CNY_PER_MILLION / CNY_PER_USD / cost_model.MILLION
MNS_QUEUE_MONTH_USD = 3.34
ESTATE_QUEUES = 500
ESTATE_MESSAGES_A_QUEUE = 1_000_000


def sqs_per_million(pattern: Pattern, size: int) -> float:
    """SQS for the same calls: one request per send, receive and delete call (batches of up to 10), per 64 KB chunk."""
    chunks = max(1, -(-min(pattern.send_batch, cost_model.SQS_BATCH) * size // cost_model.SQS_CHUNK_BYTES))
    send = chunks / min(pattern.send_batch, cost_model.SQS_BATCH)
    receive = chunks / min(pattern.receive_batch, cost_model.SQS_BATCH)
    delete = 1.0 if pattern.delete_alone else 1 / min(pattern.receive_batch, cost_model.SQS_BATCH)
    return (send + receive + delete) * cost_model.SQS_STANDARD_REQUEST * cost_model.MILLION


def run(bodies: list[str], patterns: list[Pattern], messages: int) -> dict[tuple[str, str], Usage]:
    results = {}
    for pattern in patterns:
        for body in bodies:
            usage = measure(pattern, body, messages)
            results[(pattern.name, body)] = usage
            print(pattern.name, body, f"{usage.per_message(usage.write_units + usage.index_write_units):.2f} write units,",
                  f"{usage.lost_claims} lost claims", flush=True)  # fmt: skip
    return results


def main() -> None:
    from bench import log_bytes
    from bench._common import use_local_aws_defaults, write_result
    from bench.message_report import report, stack_template

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=256, help="messages per pattern")
    parser.add_argument("--body", action="append", choices=list(BODIES))
    parser.add_argument("--pattern", action="append", choices=list(PATTERNS))
    parser.add_argument("--front-door", action="append", choices=list(front_doors.FRONT_DOORS))
    args = parser.parse_args()
    use_local_aws_defaults()
    no_real_sleeps()
    lines = log_bytes.measure()
    observed = {
        "the stack's": observability(LogSettings(), lines),
        "before": observability(LogSettings.previous(), lines),
    }
    results = run(
        args.body or ["1 KB incompressible", "64 B"],
        [PATTERNS[p] for p in args.pattern or PATTERNS],
        args.messages,
    )
    text = report(results, args.front_door or list(front_doors.FRONT_DOORS), observed, stack_template())
    print(text)
    if not (args.body or args.pattern or args.front_door):
        write_result("message_patterns", "What a message costs as clients send it, all-in, per front door", text)


if __name__ == "__main__":
    main()
