"""What a message costs on AWS: DynamoDB write and read units per message and $ per million, all-in, beside SQS.

    python -m bench.message_cost [--rounds N] [--body B] [--batch N] [--queue Q]   (all cases: bench/results)

Measured through the services over the DynamoDB engine on moto (in process, simulated clock), every DynamoDB call
billed by DynamoDB's size rules by the recording client (`tests/support/recording.py`: table writes, the ready index's
writes, reads), for each body (64 B, 1 KB JSON-like, 1 KB incompressible, 60 KB incompressible), sent and
received one at a time and by batches of 16, deleted alike (one by one, or in one batch delete), on (a batch send
within MNS's limits, at most 16 messages and 64 KB of bodies: 60 KB bodies are sent one per request):

- a quiet standard queue (the engine reads its leases from the table);
- an indexed standard queue: one that has been busy. The engine turns a queue's ready index on for good when a
  receive reads 100 leases it cannot take (in flight, delayed), its receives lose many claims or it grows stripes
  (`mnsd.storage.dynamodb.placement.stripes`); this one held 112 messages in flight, a receive read past them, and after
  the index settled receives built it. The bench checks that the measured receives read only the index;
- a FIFO queue, every message in one group (a FIFO queue keeps no ready index).

Then $ per million messages (send + receive + delete) at list prices (`bench/cost_model.py`), with and without
the wait tier, beside SQS's; and the utilisation of provisioned capacity at which it costs what on demand does.
Left out: the request's body size in Lambda's duration (the model prices DynamoDB calls, not bytes handled),
the operation log's stream consumer (filtered to LoggingEnabled queues), the wait tier's fixed cost.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import cost_model
from bench._common import md_table, write_result
from bench.bodies import BODIES
from bench.capacity import ACCOUNT, SimulatedClock, no_real_sleeps
from bench.cost_model import Usage
from migrate.batching import cut
from mnsd.storage.capacity import item_size
from tests.support.recording import recorded_moto_services

BATCH = 16
HELD_TO_INDEX = 112  # messages held in flight to make a queue busy (a receive reading past 100 indexes it)
# Wire bytes around each message (XML elements, ids, receipt handle), for the HTTP API's 512 KB metering.
SEND_ENVELOPE_BYTES = 200
RECEIVE_ENVELOPE_BYTES = 500
DELETE_HANDLE_BYTES = 120


QUEUES = ("standard, quiet", "standard, indexed", "FIFO, one group")


@dataclass(frozen=True)
class Case:
    body: str
    batch: int
    queue: str

    @property
    def fifo(self) -> bool:
        return self.queue.startswith("FIFO")


class CountedWakes:
    """A notifier that counts the wakes the services would post to the wait tier (one per notify or due)."""

    def __init__(self) -> None:
        self.count = 0

    def wait(self, queue_id: str, seconds: float) -> None:
        pass

    def notify(self, queue_id: str, count: int = 1) -> None:
        self.count += 1

    def due(self, queue_id: str, at_ms: int) -> None:
        self.count += 1


class Bench:
    """The services over moto with a recording client; one queue per case."""

    def __init__(self, seed: int = 7, wrap: Any = None) -> None:
        import boto3

        from tests.support.by_name import QueuesByName

        random.seed(seed)  # (the engine's random page starts)
        self.rng = random.Random(seed)
        self.clock = SimulatedClock()
        self.wakes = CountedWakes()
        self.mock, services, self.recorder = recorded_moto_services(self.clock, notifier=self.wakes, wrap=wrap)
        self.queues = QueuesByName(services)
        self.table = services.settings.message_table
        self.raw = boto3.client("dynamodb", region_name="us-east-1")
        self.made = 0

    def close(self) -> None:
        self.mock.stop()

    def inputs(self, body: str, n: int, fifo: bool) -> list[Any]:
        """`n` messages, each with its own body of the kind named `body` (bodies near 1 KB land either side of
        the inline limit: each its own draw, as real ones)."""
        from mnsd.model.inputs import MessageInput

        group = "g" if fifo else ""
        return [MessageInput(BODIES[body](self.rng), None, 8, message_group_id=group) for _ in range(n)]

    def create(self, case: Case) -> str:
        from mnsd.model.queues import QueueAttributeChanges

        self.made += 1
        name = f"cost-{self.made}"
        kind = "fifo" if case.fifo else None
        self.queues.create_queue(ACCOUNT, name, QueueAttributeChanges(visibility_timeout="43200", queue_type=kind))
        return name

    def index_reads(self) -> list[str]:
        """The index each Query of the message table recorded since the last reset read ("" for the table)."""
        return [c.index for c in self.recorder.calls if c.op == "Query" and c.table == self.table]

    def make_busy(self, name: str) -> None:
        """Hold HELD_TO_INDEX messages in flight, receive past them (the queue turns its ready index on), let the
        index settle and receives build it until a receive reads only the index; then delete the held ones."""
        from mnsd.ground import errors

        for _ in range(HELD_TO_INDEX // BATCH):
            self.queues.send(ACCOUNT, name, self.inputs("64 B", BATCH, False))
            self.clock.t += BATCH / 80
        held: list[str] = []
        while len(held) < HELD_TO_INDEX:
            held += [r.receipt_handle for r in self.queues.receive(ACCOUNT, name, BATCH, 0)]
        for step in range(40):
            self.clock.t += self.queues.settings.index_settle_seconds + 1 if step == 1 else 1
            self.recorder.reset()
            try:
                self.queues.receive(ACCOUNT, name, BATCH, 0)
            except errors.MessageNotExist:
                pass
            reads = self.index_reads()
            if step and reads and all(reads):
                break
        else:
            raise AssertionError("the queue's receives never read only its ready index")
        for start in range(0, len(held), BATCH):
            self.queues.batch_delete(ACCOUNT, name, held[start : start + BATCH])

    def stored_bytes(self, queue_id: str) -> int:
        """Bytes the queue's items and ready-index entries take, DynamoDB's per-item overhead included."""
        total = 0
        for index in (None, *(i["IndexName"] for i in self._indexes())):
            kwargs: dict[str, Any] = {"TableName": self.table, **({"IndexName": index} if index else {})}
            for page in self.raw.get_paginator("scan").paginate(**kwargs):
                for item in page["Items"]:
                    if item["pk"]["S"].split("#")[0] == queue_id:
                        total += item_size(item) + cost_model.STORAGE_ITEM_OVERHEAD
        return total

    def _indexes(self) -> list[dict[str, Any]]:
        return self.raw.describe_table(TableName=self.table)["Table"].get("GlobalSecondaryIndexes", [])

    def measure(self, case: Case, rounds: int) -> tuple[Usage, bool]:
        """Usage of `rounds` lifecycles of `case.batch` messages (the container warm), and whether every receive
        read the ready index only."""
        name = self.create(case)
        if case.queue == "standard, indexed":
            self.make_busy(name)
        self.queues.send(ACCOUNT, name, self.inputs(case.body, 1, case.fifo))  # warm, as a busy container is
        self.queues.delete(ACCOUNT, name, self.queues.receive(ACCOUNT, name, 1, 0)[0].receipt_handle)
        queue = self.queues.get_queue(ACCOUNT, name)
        usage = Usage(
            messages=rounds * case.batch,
            body_bytes=len(BODIES[case.body](random.Random(0))),
            retention_seconds=queue.attributes.message_retention_period,
        )
        self.recorder.reset()
        self.wakes.count = 0
        before = self.stored_bytes(queue.queue_id)
        only_index = True
        for round_ in range(rounds):
            self.clock.t += 1
            only_index &= self.lifecycle(name, case, usage, before if round_ == 0 else None)
        calls = self.recorder.calls
        usage.write_units = sum(c.wcu for c in calls)
        usage.index_write_units = sum(c.index_wcu for c in calls)
        usage.read_units = sum(c.rcu for c in calls)
        usage.index_read_units = sum(c.rcu for c in calls if c.op == "Query" and c.index)
        usage.wakes = self.wakes.count
        return usage, only_index

    def lifecycle(self, name: str, case: Case, usage: Usage, stored_before: int | None) -> bool:
        """Send `case.batch` messages, receive them all, delete them, counted into `usage` (with the bytes stored
        and left behind per message, measured against `stored_before` when given); whether the receives read the
        ready index only."""
        from mnsd.ground import errors

        n, size = case.batch, len(BODIES[case.body](random.Random(0)))
        queue_id = self.queues.get_queue(ACCOUNT, name).queue_id
        for request in cut(self.inputs(case.body, n, case.fifo), lambda m: len(m.body.encode("utf-8"))):
            # as many BatchSendMessage requests as MNS's limits need (60 KB bodies: one each)
            payload = len(request) * (size + SEND_ENVELOPE_BYTES)
            self.call(usage, "send", payload, n > 1, self.queues.send, name, request)
        if stored_before is not None:
            usage.stored_bytes = (self.stored_bytes(queue_id) - stored_before) / n
        handles: list[str] = []
        only_index = True
        for _ in range(10 * n):
            if len(handles) == n:
                break
            start, want = len(self.recorder.calls), n - len(handles)
            try:
                payload = want * (size + RECEIVE_ENVELOPE_BYTES)
                got = self.call(usage, "receive", payload, n > 1, self.queues.receive, name, want, 0)
            except errors.MessageNotExist:
                got = []
            handles += [r.receipt_handle for r in got]
            reads = [c.index for c in self.recorder.calls[start:] if c.op == "Query" and c.table == self.table]
            only_index = only_index and bool(reads) and all(reads)
        assert len(handles) == n, f"{case}: received {len(handles)} of {n}"
        if n == 1:
            self.call(usage, "delete", DELETE_HANDLE_BYTES, False, self.queues.delete, name, handles[0])
        else:
            self.call(usage, "delete", n * DELETE_HANDLE_BYTES, True, self.queues.batch_delete, name, handles)
        if stored_before is not None:
            usage.left_bytes = (self.stored_bytes(queue_id) - stored_before) / n
        return only_index

    def call(self, usage: Usage, op: str, payload: int, batch: bool, fn: Callable[..., Any], *args: Any) -> Any:
        """One API request of kind `op` (`fn(ACCOUNT, *args)`, a batch call or not), its DynamoDB calls, payload and
        messages counted."""
        start = len(self.recorder.calls)
        got: Any = None
        try:
            got = fn(ACCOUNT, *args)
            return got
        finally:
            usage.operations[op].count(
                len(self.recorder.calls) - start, payload, messages=carried_messages(op, args, got), batch=batch
            )


def carried_messages(op: str, args: tuple[Any, ...], got: Any) -> int:
    """The messages a request carried: those sent, those received (0 when it found none), the handles deleted."""
    if op == "receive":
        return len(got) if got else 0
    sent_or_deleted = args[1]
    return len(sent_or_deleted) if isinstance(sent_or_deleted, list) else 1


def cases(bodies: list[str], batches: list[int], queues: list[str]) -> list[Case]:
    return [Case(body, batch, queue) for queue in queues for body in bodies for batch in batches]


def run(rounds: int, bodies: list[str], batches: list[int], queues: list[str]) -> list[tuple[Case, Usage, bool]]:
    """Each case on tables of its own (what deleted messages leave until TTL stays out of the next case's scans)."""
    no_real_sleeps()
    results = []
    for case in cases(bodies, batches, queues):
        bench = Bench()
        try:
            usage, only_index = bench.measure(case, max(1, rounds // case.batch))
        finally:
            bench.close()
        results.append((case, usage, only_index))
        print(case, f"{usage.per_message(usage.write_units + usage.index_write_units):.2f} write units", flush=True)
    return results


def money(value: float) -> str:
    return f"${value:.3f}" if value < 1 else f"${value:.2f}"


def table(results: list[tuple[Case, Usage, bool]]) -> str:
    rows = []
    for case, usage, only_index in results:
        parts = cost_model.per_million(usage)
        with_tier = cost_model.per_million(usage, tier=True)
        size = len(BODIES[case.body](random.Random(0)))
        queue = case.queue + (" (read the index only)" if only_index else "") if "indexed" in case.queue else case.queue
        rows.append(
            [
                queue,
                case.body,
                "one at a time" if case.batch == 1 else f"batches of {case.batch}",
                f"{usage.per_message(usage.write_units):.2f} + {usage.per_message(usage.index_write_units):.2f}",
                f"{usage.per_message(usage.read_units):.2f}",
                f"{sum(op.dynamodb_calls for op in usage.operations.values()) / usage.messages:.2f}",
                money(parts["HTTP API"]),
                money(parts["Lambda"]),
                money(parts["DynamoDB writes"] + parts["DynamoDB reads"]),
                money(parts["storage"]),
                f"**{money(sum(parts.values()))}**",
                money(sum(with_tier.values())),
                money(cost_model.sqs_per_million(size, case.batch, case.fifo)),
            ]
        )
    headers = [
        "queue",
        "body",
        "sent, received, deleted",
        "write units / message (table + index)",
        "read units / message",
        "DynamoDB calls / message",
        "HTTP API",
        "Lambda",
        "DynamoDB units",
        "DynamoDB storage",
        "total, $ per million messages",
        "with the wait tier",
        "SQS",
    ]
    return md_table(headers, rows)


def summary(results: list[tuple[Case, Usage, bool]]) -> str:
    """One row per queue and body: write units and all-in $ per million, one at a time and batched by 16, beside
    SQS's (the README's table)."""
    by_key = {(case.queue, case.body, case.batch): usage for case, usage, _ in results}
    rows = []
    for queue, body in dict.fromkeys((case.queue, case.body) for case, _, _ in results):
        size = len(BODIES[body](random.Random(0)))
        row: list[object] = [queue.replace("standard, ", ""), body]
        for batch in (1, BATCH):
            usage = by_key.get((queue, body, batch))
            if usage is None:
                row += ["", ""]
                continue
            units = usage.per_message(usage.write_units + usage.index_write_units)
            row += [f"{units:.2f}", f"**{money(sum(cost_model.per_million(usage).values()))}**"]
        sqs = [money(cost_model.sqs_per_million(size, batch, "FIFO" in queue)) for batch in (1, BATCH)]
        rows.append([*row, " / ".join(sqs)])
    headers = [
        "queue",
        "body",
        "write units / message, one at a time",
        "$ per million, one at a time",
        "write units / message, batches of 16",
        "$ per million, batches of 16",
        "SQS (one at a time / batches of 10)",
    ]
    return md_table(headers, rows)


def break_even_lines() -> str:
    even = cost_model.break_even_utilisation()
    at = {u: cost_model.provisioned_per_million(cost_model.PROVISIONED_WCU_HOUR, u) for u in (0.3, 0.5, 0.7)}
    return (
        f"Provisioned capacity costs what on demand does at **{even['writes']:.1%}** utilisation of the provisioned "
        f"write capacity ({even['reads']:.1%} for reads): ${cost_model.PROVISIONED_WCU_HOUR} a WCU-hour is "
        f"${cost_model.provisioned_per_million(cost_model.PROVISIONED_WCU_HOUR, 1.0):.3f} per million writes used "
        f"fully, against $0.625 on demand. Per million write units at "
        + ", ".join(f"{u:.0%} utilisation ${v:.3f}" for u, v in at.items())
        + " (auto-scaling's target of 70 % keeps it near the last)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=64, help="messages per case")
    parser.add_argument("--body", action="append", choices=list(BODIES))
    parser.add_argument("--batch", type=int, action="append", choices=[1, BATCH])
    parser.add_argument("--queue", action="append", choices=list(QUEUES))
    args = parser.parse_args()
    results = run(args.rounds, args.body or list(BODIES), args.batch or [1, BATCH], args.queue or list(QUEUES))
    body = f"""
{cost_model.prices_line()}

Per message, over its life (send, receive, delete), measured through the services over the DynamoDB engine on moto
with the recording client (DynamoDB's size rules: table writes, the ready index's writes, reads); $ per million
messages all-in (HTTP API, Lambda requests and duration, DynamoDB on demand, storage), and with the wait tier's
share (its wasted origin calls; a life whose send, receive and delete come through the tier posts no wake, its
wakes going back in the answers, bench/results/wait_tier.md; not the tier's fixed cost); SQS's list price for the
same traffic.

{summary(results)}

Every case, with reads, DynamoDB calls and the parts of the bill:

{table(results)}

{break_even_lines()}

Lambda duration per request is a model, not measured on AWS: the functions' CPU measured off Lambda at a full vCPU
(bench/results/lambda_cpu.md) scaled to the function's share of a vCPU: the handler's {cost_model.handler_cpu_line()}
per client request, {cost_model.per_message_cpu_line()} per message beyond one a batch carries, and
{cost_model.CPU_PER_CALL_FULL_VCPU_MS} ms per DynamoDB call; and a {cost_model.LATENCY_PER_CALL_MS:g} ms round trip per
call. Left out: the body's size in that duration, the operation log's stream consumer (LoggingEnabled queues only), the wait tier's fixed cost (about $24 a
month, bench/results/wait_tier.md).
"""
    print(body)
    if not (args.body or args.batch or args.queue):
        write_result("message_cost", "What a message costs on AWS, per million, beside SQS", body)


if __name__ == "__main__":
    main()
