"""The client patterns `bench.message_patterns` measures, and how a measured pattern is priced: all-in per front door
and capacity mode, beside MNS and SQS for the same calls (`bench.message_report` writes the tables from these).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench import all_in, cost_model, front_doors
from bench.cost_model import Usage
from bench.message_cost import BATCH
from bench.wire import Wire
from infra.observability import LogSettings

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
    coalesced: bool = False  # single calls coalesced as the wait tier's holder does (`bench.coalesced_calls`)


COALESCED = ", coalesced"
PATTERNS = {
    p.name: p
    for p in (
        Pattern("one at a time, one client", 1, 1, 1, 1, True, concurrent=False),
        Pattern("one at a time, one client, quiet queue", 1, 1, 1, 1, True, concurrent=False, queue=QUIET),
        Pattern("one at a time, 16 producers + 16 consumers", 16, CONSUMERS, 1, 1, True),
        Pattern("one at a time, 16 producers + 16 consumers" + COALESCED, 16, CONSUMERS, 1, 1, True, coalesced=True),
        Pattern("receive 16, delete each alone, 16 consumers", 1, CONSUMERS, BATCH, BATCH, True),
        Pattern(
            "receive 16, delete each alone, 16 consumers" + COALESCED, 1, CONSUMERS, BATCH, BATCH, True, coalesced=True
        ),
        Pattern("whole batches of 16", 1, 1, BATCH, BATCH, False, concurrent=False),
    )
}


@dataclass(frozen=True)
class Priced:
    """A measured pattern's $ per million messages by part, at a front door and log settings."""

    parts: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.parts.values())


def price(usage: Usage, door: str, observability: all_in.Observability, capacity: str = "on demand") -> Priced:
    """$ per million messages by part, at front door `door` (its logs too) and DynamoDB `capacity`."""
    parts = cost_model.per_million(usage, capacity=capacity)
    parts.pop("HTTP API")
    return Priced(
        {
            f"front door ({door})": front_doors.per_million(usage, door, observability.wire),
            **parts,
            **all_in.extras(usage, observability, door),
        }
    )


def observability(
    settings: LogSettings, measured: dict[str, Any] | None = None, wire: Mapping[str, Wire] | None = None
) -> all_in.Observability:
    """The billed log bytes of each operation under `settings`: the function's per invocation, the HTTP API's
    access log line and the ALB's entry (gzipped, in S3) per request (measured by `bench.log_bytes`); and the bytes
    each request form carries past the front door (`wire`, measured by `bench.front_door_cost.measure_wire`)."""
    from bench import log_bytes

    lines = measured or log_bytes.measure()
    return all_in.Observability(
        {op: float(request.function_bytes(settings)) for op, request in lines.items()},
        settings.tracing,
        {op: float(request.function_bytes(settings, monitored=False)) for op, request in lines.items()},
        {op: float(request.door_bytes(settings, "http-api")) for op, request in lines.items()},
        log_bytes.alb_gzipped_bytes(),
        wire or {},
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
