"""What a message costs as clients really send, receive and delete it, all-in, per front door, beside SQS and MNS.

    python -m bench.message_patterns [--messages N] [--body B] [--pattern P] [--front-door D] [--context NAME=VALUE]

`--context` prices the stack as `cdk deploy -c NAME=VALUE` would deploy it (e.g. `capacityTargetPercent=90`: the
templates are synthesized with it and the model reads it, `bench.cost_model.deployed_with`); a run with any option
prints its report and leaves `bench/results/message_patterns.md` as it is.

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
import contextlib
import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from bench import cost_model, front_doors
from bench.bodies import BODIES
from bench.capacity import ACCOUNT, no_real_sleeps
from bench.coalesced_calls import Coalescer
from bench.cost_model import Operation, Usage
from bench.message_cost import (
    BATCH,
    DELETE_HANDLE_BYTES,
    RECEIVE_ENVELOPE_BYTES,
    SEND_ENVELOPE_BYTES,
    Bench,
    Case,
    carried_messages,
)
from bench.pattern_prices import (
    BACKLOG,
    CALL_SECONDS,
    INDEXED,
    PATTERNS,
    Pattern,
    observability,
)
from infra.observability import LogSettings
from local_runtime.moto_client import SerializedClient


def serve_sends(queues: Any, name: str, messages: list[Any]) -> list[Any]:
    """Coalesced single sends of a queue: batch sends of 16 messages and 64 KB at most, each one pack
    (`mnsd.request.coalesced._serve_sends`); each message's own result."""
    from mnsd.model.inputs import MAX_BATCH, MAX_BATCH_BYTES
    from mnsd.queues import addresses

    queue = queues.services.addresses.queue(ACCOUNT, name, addresses.SEND)
    results: list[Any] = []
    part: list[Any] = []
    size = 0
    for message in messages:
        length = len(message.body.encode("utf-8"))
        if part and (len(part) == MAX_BATCH or size + length > MAX_BATCH_BYTES):
            results += queues.services.messages.send(queue, part)
            part, size = [], 0
        part.append(message)
        size += length
    return results + (queues.services.messages.send(queue, part) if part else [])


def serve_deletes(queues: Any, name: str, handles: list[str]) -> list[Any]:
    """Coalesced single deletes: batch deletes of distinct handles, 16 at most (`mnsd.request.coalesced.
    _serve_deletes`); each one's error, or None."""
    from mnsd.model.inputs import MAX_BATCH

    queue = queues.get_queue(ACCOUNT, name)
    outcomes: dict[int, Any] = {}
    rest = list(range(len(handles)))
    while rest:
        part: list[int] = []
        later: list[int] = []
        for i in rest:
            (later if handles[i] in {handles[j] for j in part} or len(part) == MAX_BATCH else part).append(i)
        failures = dict(queues.services.messages.batch_delete(queue, [handles[i] for i in part]))
        outcomes.update({i: failures.get(handles[i]) for i in part})
        rest = later
    return [outcomes[i] for i in range(len(handles))]


def serve_receives(queues: Any, name: str, asks: list[Any]) -> list[Any]:
    """Coalesced single receives (the client's wait 0): one claim for 16 at most (`MessageService.receive_each`);
    each one's message, None (nothing to take), or its error."""
    from mnsd.ground import errors
    from mnsd.model.inputs import MAX_BATCH
    from mnsd.queues.messages import Ask, Claimed

    queue = queues.get_queue(ACCOUNT, name)
    outcomes: list[Any] = []
    for start in range(0, len(asks), MAX_BATCH):
        part = [Ask(0, None, None) for _ in asks[start : start + MAX_BATCH]]
        for outcome in queues.services.messages.receive_each(queue, part):
            if isinstance(outcome, errors.MnsError):
                outcomes.append(outcome)
            else:
                outcomes.append(outcome.received[0] if isinstance(outcome, Claimed) else None)
    return outcomes


SERVERS: dict[str, Callable[[Any, str, list[Any]], list[Any]]] = {
    "send": serve_sends,
    "delete": serve_deletes,
    "receive": serve_receives,
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
        self.coalescer: Coalescer | None = None

    def close(self) -> None:
        self.bench.close()

    def request(self, run: Run, op: str, payload: int, batch: bool, fn: Callable[..., Any], *args: Any) -> Any:
        """One API request (a batch call or not), its DynamoDB calls counted (this thread's) into the run's usage with
        the messages it carried (and, coalescing, as an invocation of its own at the origin: the holder passes it on
        alone)."""
        start = self.counted.mine()
        got: Any = None
        try:
            got = fn(ACCOUNT, *args)
            return got
        finally:
            with run.lock:
                messages = carried_messages(op, args, got)
                run.usage.operations[op].count(self.counted.mine() - start, payload, messages=messages, batch=batch)
                if run.usage.origin is not None:
                    run.usage.origin[op].count(self.counted.mine() - start, payload)

    def coalesced(self, run: Run, op: str, payload: int, name: str, item: Any) -> Any:
        """One single API request through the coalescer: counted as the client's request, its DynamoDB calls in the
        batch call that carried it (`serve`)."""
        assert self.coalescer is not None
        got: Any = None
        try:
            got = self.coalescer.call(op, name, (payload, item), lambda items: self.serve(run, op, name, items))
            return got
        finally:
            took = not (got is None or isinstance(got, BaseException))
            with run.lock:  # (a receive that found nothing carried no message)
                run.usage.operations[op].count(0, payload, messages=int(took or op != "receive"))

    def serve(self, run: Run, op: str, name: str, items: list[tuple[int, Any]]) -> list[Any]:
        """A coalesced group at the origin: one invocation (alone, or the batch call), served as
        `mnsd.request.coalesced` serves the accepted requests of a queue."""
        start = self.counted.mine()
        try:
            return SERVERS[op](self.bench.queues, name, [item for _, item in items])
        finally:
            with run.lock:
                assert run.usage.origin is not None
                run.usage.origin[op].count(self.counted.mine() - start, sum(p for p, _ in items), carried=len(items))

    def waiting(self) -> AbstractContextManager[None]:
        """A client thread waiting for work: idle to the coalescer (no call of its can join a group meanwhile)."""
        return self.coalescer.idle() if self.coalescer is not None else contextlib.nullcontext()

    def measure(self) -> Usage:
        bench, pattern = self.bench, self.pattern
        name = bench.create(Case(self.body, pattern.send_batch, INDEXED))
        bench.make_busy(name)
        for _ in range(BACKLOG // BATCH):
            bench.queues.send(ACCOUNT, name, bench.inputs(self.body, BATCH, False))
        queue = bench.queues.get_queue(ACCOUNT, name)
        run = Run(
            Usage(
                messages=self.messages,
                body_bytes=self.size,
                retention_seconds=queue.attributes.message_retention_period,
            ),
            self.messages,
        )
        if pattern.coalesced:
            self.coalescer = Coalescer(bench.clock, pattern.producers + pattern.consumers)
            run.usage.origin = {op: Operation() for op in run.usage.operations}
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
        usage.index_read_units = sum(c.rcu for c in calls if c.op == "Query" and c.index)
        usage.lost_claims = sum(1 for c in calls if c.op == "UpdateItem" and c.failed_condition)
        usage.wakes = bench.wakes.count
        left = bench.stored_bytes(queue.queue_id) - before  # what the run's deletes left (the backlog stays)
        usage.left_bytes = max(0.0, left) / len(run.delivered)
        usage.stored_bytes = self.stored_per_message()
        if self.coalescer is not None:
            usage.batch_sizes = self.coalescer.batch_sizes
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
                if n == 1 and self.coalescer is not None:
                    result = self.coalesced(run, "send", self.size + SEND_ENVELOPE_BYTES, name, inputs[0])
                    assert result.error is None, result.error
                elif n == 1:
                    self.request(
                        run, "send", self.size + SEND_ENVELOPE_BYTES, False, self.bench.queues.send, name, inputs
                    )
                else:
                    payload = n * (self.size + SEND_ENVELOPE_BYTES)
                    results = self.request(run, "send", payload, True, self.bench.queues.send, name, inputs)
                    assert all(r.error is None for r in results)
        except BaseException as error:  # noqa: BLE001 (reported by the run)
            run.errors.append(error)
        finally:
            if self.coalescer is not None:
                self.coalescer.leave()

    def consume(self, run: Run, name: str) -> None:
        try:
            while not run.errors:
                n = run.take(self.pattern.receive_batch)
                if not n:
                    with run.lock:
                        if run.left == 0 and len(run.delivered) >= run.usage.messages:
                            return
                    with self.waiting():
                        time.sleep(0.001)  # (another consumer's receive may give some back)
                    continue
                got = self.receive(run, name, n)
                run.give_back(n - len(got))
                with run.lock:
                    run.delivered += [r.message.message_id for r in got]
                if not got:
                    with self.waiting():
                        time.sleep(0.001)  # (real time: let the producers in)
                    continue
                self.delete(run, name, [r.receipt_handle for r in got])
        except BaseException as error:  # noqa: BLE001 (reported by the run)
            run.errors.append(error)
        finally:
            if self.coalescer is not None:
                self.coalescer.leave()

    def delete(self, run: Run, name: str, handles: list[str]) -> None:
        """Each message deleted by its own request (coalesced when coalescing), or all in one batch delete."""
        queues = self.bench.queues
        if not self.pattern.delete_alone:
            self.request(run, "delete", len(handles) * DELETE_HANDLE_BYTES, True, queues.batch_delete, name, handles)
            return
        for handle in handles:
            if self.coalescer is None:
                self.request(run, "delete", DELETE_HANDLE_BYTES, False, queues.delete, name, handle)
                continue
            failed = self.coalesced(run, "delete", DELETE_HANDLE_BYTES, name, handle)
            if failed is not None:
                raise failed

    def receive(self, run: Run, name: str, n: int) -> list[Any]:
        """A receive of up to `n` (a single one coalesced when coalescing): what it got (nothing: an empty receive)."""
        from mnsd.ground import errors

        payload = n * (self.size + RECEIVE_ENVELOPE_BYTES)
        try:
            if n == 1 and self.coalescer is not None:
                outcome = self.coalesced(run, "receive", payload, name, None)
                if isinstance(outcome, errors.MnsError):
                    raise outcome
                got = [] if outcome is None else [outcome]
            else:
                batch = self.pattern.receive_batch > 1
                got = self.request(run, "receive", payload, batch, self.bench.queues.receive, name, n, 0)
        except errors.MessageNotExist:
            got = []
        if not got:
            with run.lock:
                run.usage.empty_receives += 1
        return list(got)


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=256, help="messages per pattern")
    parser.add_argument("--body", action="append", choices=list(BODIES))
    parser.add_argument("--pattern", action="append", choices=list(PATTERNS))
    parser.add_argument("--front-door", action="append", choices=list(front_doors.FRONT_DOORS))
    parser.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="price the stack deployed with `-c NAME=VALUE` (e.g. capacityTargetPercent=90); the result is printed, "
        "not written",
    )
    args = parser.parse_args()
    context = dict(item.split("=", 1) for item in args.context)
    with cost_model.deployed_with(context):
        text = priced(args, context)
    print(text)
    if not (args.body or args.pattern or args.front_door or context):
        from bench._common import write_result

        write_result("message_patterns", "What a message costs as clients send it, all-in, per front door", text)


def priced(args: argparse.Namespace, context: dict[str, str]) -> str:
    """The report of the run `args` ask for, of the stack deployed with `context`."""
    import os

    from bench import log_bytes
    from bench._common import use_local_aws_defaults
    from bench.front_door_cost import measure_wire
    from bench.message_report import deployed_memory, report, stack_template

    use_local_aws_defaults()
    no_real_sleeps()
    template = stack_template(**context)
    deployed = deployed_memory(template)
    assert deployed == cost_model.MEMORY_MB, (
        f"the routes are deployed at {deployed} MB, priced at {cost_model.MEMORY_MB}"
    )
    provisioned_template = stack_template(**{**context, "capacity": "provisioned"})
    lines = log_bytes.measure()
    wire = measure_wire()
    observed = {
        "the stack's": observability(LogSettings(), lines, wire),
        "before": observability(LogSettings.previous(), lines, wire),
    }
    load = os.getloadavg()
    results = run(
        args.body or ["1 KB incompressible", "64 B"],
        [PATTERNS[p] for p in args.pattern or PATTERNS],
        args.messages,
    )
    load_after = os.getloadavg()
    text = report(results, args.front_door or list(front_doors.FRONT_DOORS), observed, template, provisioned_template)
    chosen = "".join(f" `--context {name}={value}`" for name, value in context.items())
    return (
        f"Options: `--messages {args.messages}`{chosen}. Load average (1 / 5 / 15 min) at the start "
        f"{' / '.join(f'{v:.1f}' for v in load)}, at the end {' / '.join(f'{v:.1f}' for v in load_after)} (a shared "
        "machine: the figures are counts on simulated time, not timings, and do not depend on it; the batch sizes of "
        "the coalesced patterns follow the threads' real interleaving).\n\n" + text
    )


if __name__ == "__main__":
    main()
