"""What a message's work costs on AWS at list prices: the arithmetic of `bench/message_cost.py`, apart from the
measuring so that it can be checked on its own (tests/unit/test_message_cost.py).

Prices: us-east-1 list prices as of PRICES_DATE (the date `bench/wait_tier.py` checked them on). What is not
measured is named here with its source: the billed duration of an API request on Lambda (a model from
`bench/results/lambda_cost.md`'s CPU per DynamoDB call), and the wait tier's wasted origin calls per message
(`bench/results/wait_tier.md`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bench.wait_tier import ORIGIN_CALL_SECONDS
from infra.capacity import ROUTE_MEMORY, Capacity

PRICES_DATE = "2026-11-26"
MILLION = 1e6
HTTP_API_REQUEST = 1.00 / MILLION  # first 300 M a month; metered in 512 KB increments
HTTP_API_METERED_BYTES = 512 * 1024
LAMBDA_REQUEST = 0.20 / MILLION
LAMBDA_ARM_GB_SECOND = 0.0000133334
WRITE_UNIT = 0.625 / MILLION  # DynamoDB on demand, per write request unit
READ_UNIT = 0.125 / MILLION  # per read request unit
STORAGE_GB_MONTH = 0.25  # DynamoDB Standard table class
STORAGE_ITEM_OVERHEAD = 100  # bytes DynamoDB adds to each item (and index entry) it stores
PROVISIONED_WCU_HOUR = 0.00065
PROVISIONED_RCU_HOUR = 0.00013
SQS_STANDARD_REQUEST = 0.40 / MILLION  # beyond the free tier
SQS_FIFO_REQUEST = 0.50 / MILLION
SQS_CHUNK_BYTES = 64 * 1024  # each 64 KB chunk of a request's payload is billed as one request
SQS_BATCH = 10
HOURS_A_MONTH = 730

# The billed duration of one API request (not measured on Lambda): its own work (decode, signature, encode) plus,
# per DynamoDB call, the caller's CPU (2.65 ms at a full vCPU, bench/results/lambda_cost.md, scaled to the
# function's share of a vCPU: memory / 1,769 MB) and a round trip.
HANDLER_MS = 5.0
CPU_PER_CALL_FULL_VCPU_MS = 2.65
LATENCY_PER_CALL_MS = 5.0
VCPU_MEMORY_MB = 1769
# Memory of the functions that serve each operation (infra/api.py): the receive route's, every other route's.
MEMORY_MB = {"send": ROUTE_MEMORY, "receive": Capacity().receive_memory, "delete": ROUTE_MEMORY}
# How long a message stays stored on a busy queue (its storage is billed for that long): an assumption.
RESIDENCE_HOURS = 1.0
# With the wait tier: each receive of a busy queue is one origin call, as it is one invocation without the tier;
# held receives asked again and finding nothing add 0.13 origin calls per message (bench/results/wait_tier.md,
# 100 receives held on one queue), each billed ORIGIN_CALL_SECONDS at the receive route's memory and reading 0.5
# units; and each wake the services post is one HTTP API request. The tier's own fixed cost (Fargate, about $24 a
# month) is not per message and left out.
TIER_WASTED_CALLS_PER_MESSAGE = 0.13
TIER_READ_UNITS_PER_CALL = 0.5


@dataclass
class Operation:
    """What one kind of API request (send, receive, delete) did over a run: requests, their DynamoDB calls, and
    the requests the HTTP API meters (one per 512 KB of a request's payload, the larger of request and answer)."""

    requests: int = 0
    dynamodb_calls: int = 0
    metered_requests: int = 0
    payload_bytes: int = 0

    def count(self, calls: int, payload_bytes: int) -> None:
        """One request more, with its DynamoDB calls and payload."""
        self.requests += 1
        self.dynamodb_calls += calls
        self.payload_bytes += payload_bytes
        self.metered_requests += max(1, math.ceil(payload_bytes / HTTP_API_METERED_BYTES))


@dataclass
class Usage:
    """What `messages` messages' lives (send, receive, delete) used."""

    messages: int
    write_units: float = 0.0  # the table's
    index_write_units: float = 0.0  # the ready index's
    read_units: float = 0.0
    stored_bytes: float = 0.0  # table and index bytes a message keeps while stored, overhead included
    left_bytes: float = 0.0  # bytes it leaves after its delete, until TTL removes them (its retention period)
    retention_seconds: int = 0
    wakes: int = 0  # wakes the services would post to the wait tier
    lost_claims: int = 0  # conditional claims that failed (another consumer took the lease or pack first)
    empty_receives: int = 0  # receives that found nothing to take
    operations: dict[str, Operation] = field(default_factory=lambda: {op: Operation() for op in MEMORY_MB})

    def per_message(self, value: float) -> float:
        return value / self.messages


def lambda_seconds(operation: str, calls_per_request: float) -> float:
    share = min(1.0, MEMORY_MB[operation] / VCPU_MEMORY_MB)
    per_call = CPU_PER_CALL_FULL_VCPU_MS / share + LATENCY_PER_CALL_MS
    return (HANDLER_MS + calls_per_request * per_call) / 1000


def storage_month(usage: Usage) -> float:
    """GB-months a message's items take: while it lives (RESIDENCE_HOURS), and what its delete leaves behind
    until TTL removes it at the end of the retention period (DynamoDB's TTL deletes up to days later: at least)."""
    stored = usage.stored_bytes * RESIDENCE_HOURS + usage.left_bytes * usage.retention_seconds / 3600
    return stored / 1024**3 / HOURS_A_MONTH


def per_million(usage: Usage, tier: bool = False) -> dict[str, float]:
    """$ per million messages by part (HTTP API, Lambda, DynamoDB writes, reads, storage; the wait tier's share
    when `tier`)."""
    api = lambda_cost = 0.0
    for name, op in usage.operations.items():
        if not op.requests:
            continue
        api += op.metered_requests * HTTP_API_REQUEST
        seconds = lambda_seconds(name, op.dynamodb_calls / op.requests)
        lambda_cost += op.requests * (LAMBDA_REQUEST + seconds * MEMORY_MB[name] / 1024 * LAMBDA_ARM_GB_SECOND)
    parts = {
        "HTTP API": api,
        "Lambda": lambda_cost,
        "DynamoDB writes": (usage.write_units + usage.index_write_units) * WRITE_UNIT,
        "DynamoDB reads": usage.read_units * READ_UNIT,
        "storage": storage_month(usage) * STORAGE_GB_MONTH * usage.messages,
    }
    if tier:
        wasted = TIER_WASTED_CALLS_PER_MESSAGE * usage.messages
        call = LAMBDA_REQUEST + ORIGIN_CALL_SECONDS * MEMORY_MB["receive"] / 1024 * LAMBDA_ARM_GB_SECOND
        parts["wait tier"] = usage.wakes * HTTP_API_REQUEST + wasted * (call + TIER_READ_UNITS_PER_CALL * READ_UNIT)
    return {name: usage.per_message(value) * MILLION for name, value in parts.items()}


def sqs_per_million(body_bytes: int, batch: int, fifo: bool) -> float:
    """SQS: send, receive and delete of a million messages, in batches of `batch` (10 at most), each request
    billed per 64 KB chunk of its payload (the deletes' is small)."""
    batch = min(batch, SQS_BATCH)
    chunks = max(1, math.ceil(batch * body_bytes / SQS_CHUNK_BYTES))
    requests_per_message = (2 * chunks + 1) / batch
    return requests_per_message * (SQS_FIFO_REQUEST if fifo else SQS_STANDARD_REQUEST) * MILLION


def provisioned_per_million(unit_hour: float, utilisation: float) -> float:
    """$ per million units on provisioned capacity used at `utilisation` of what is provisioned."""
    return unit_hour / (3600 * utilisation) * MILLION


def break_even_utilisation() -> dict[str, float]:
    """The utilisation of provisioned capacity below which on demand is cheaper (writes, reads)."""
    return {
        "writes": provisioned_per_million(PROVISIONED_WCU_HOUR, 1.0) / (WRITE_UNIT * MILLION),
        "reads": provisioned_per_million(PROVISIONED_RCU_HOUR, 1.0) / (READ_UNIT * MILLION),
    }


def prices_line() -> str:
    return (
        f"Prices: us-east-1 list prices as of {PRICES_DATE}: HTTP API $1.00 per million requests (metered per 512 KB); "
        f"Lambda arm64 ${LAMBDA_ARM_GB_SECOND}/GB-s and $0.20 per million requests (send and delete at "
        f"{MEMORY_MB['send']} MB, receive at {MEMORY_MB['receive']} MB, infra/api.py); DynamoDB on demand $0.625 per "
        f"million write units, $0.125 per million read units, storage ${STORAGE_GB_MONTH} per GB-month (a message "
        f"stored {RESIDENCE_HOURS:g} h, what its delete leaves until the retention period ends); provisioned ${PROVISIONED_WCU_HOUR} per WCU-hour, ${PROVISIONED_RCU_HOUR} "
        "per RCU-hour; SQS $0.40 (standard) and $0.50 (FIFO) per million requests, batches of 10, a request billed "
        "per 64 KB chunk."
    )
