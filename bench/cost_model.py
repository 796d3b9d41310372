"""What a message's work costs on AWS at list prices: the arithmetic of `bench/message_cost.py`, apart from the
measuring so that it can be checked on its own (tests/unit/test_message_cost.py).

Prices: us-east-1 list prices as of PRICES_DATE (the date `bench/wait_tier.py` checked them on). What is not
measured is named here with its source: the billed duration of an API request on Lambda (a model from the functions'
CPU measured off Lambda, `bench/results/lambda_cpu.md`), and the wait tier's wasted origin calls per message
(`bench/results/wait_tier.md`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from bench.wait_tier import ORIGIN_CALL_SECONDS
from infra.capacity import ROUTE_MEMORY, Capacity
from infra.table_capacity import Provisioned

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
# Provisioned capacity (`-c capacity=provisioned`), per unit-hour of capacity provisioned, used or not:
# https://aws.amazon.com/dynamodb/pricing/provisioned/ (us-east-1; the same rates AWS long published as $0.0065 an
# hour per 10 WCU and per 50 RCU).
PROVISIONED_SOURCE = "https://aws.amazon.com/dynamodb/pricing/provisioned/"
PROVISIONED_WCU_HOUR = 0.00065
PROVISIONED_RCU_HOUR = 0.00013
CAPACITY_MODES = ("on demand", "provisioned")
SQS_STANDARD_REQUEST = 0.40 / MILLION  # beyond the free tier
SQS_FIFO_REQUEST = 0.50 / MILLION
SQS_CHUNK_BYTES = 64 * 1024  # each 64 KB chunk of a request's payload is billed as one request
SQS_BATCH = 10
HOURS_A_MONTH = 730

# The billed duration of one invocation (not measured on Lambda): the function's CPU at its share of a vCPU (memory /
# 1,769 MB) and a round trip per DynamoDB call. The CPU at a full vCPU is measured (`python -m bench.lambda_cpu`,
# bench/results/lambda_cpu.md: the route functions invoked warm, against DynamoDB in another process, medians of 3
# runs): the handler's own per client request the invocation serves, per message beyond one a batch carries
# ((batch of 16 less single) / 15), and per DynamoDB call the caller's (the calls alone against a stub; the handler
# figures are the invocation's CPU less its calls at this figure).
HANDLER_CPU_FULL_VCPU_MS = {"send": 1.67, "receive": 2.84, "delete": 1.35}
HANDLER_CPU_PER_MESSAGE_FULL_VCPU_MS = {"send": 0.249, "receive": 0.593, "delete": 0.120}
CPU_PER_CALL_FULL_VCPU_MS = 1.23
LATENCY_PER_CALL_MS = 5.0
VCPU_MEMORY_MB = 1769


# Context values given on the bench's command line (`--context name=value`), as `-c name=value` gives them to a
# deploy: set for a run by `deployed_with`, empty otherwise.
_CHOSEN: dict[str, object] = {}


def stack_context() -> dict[str, object]:
    """The stack's CDK context as `cdk.json` gives it (what a deploy without `-c` options uses), with the values a
    run chose (`deployed_with`) over it."""
    import json
    from pathlib import Path

    document = json.loads((Path(__file__).resolve().parent.parent / "cdk.json").read_text())
    return {**document.get("context", {}), **_CHOSEN}


@contextmanager
def deployed_with(context: Mapping[str, object]) -> Iterator[None]:
    """Price the stack deployed with `context` (`-c name=value` each) inside the block."""
    saved = dict(_CHOSEN)
    _CHOSEN.update(context)
    try:
        yield
    finally:
        _CHOSEN.clear()
        _CHOSEN.update(saved)


def stack_provisioning() -> Provisioned:
    """The auto-scaling the stack sets up with `-c capacity=provisioned` and `cdk.json`'s context otherwise."""
    context = {**stack_context(), "capacity": "provisioned"}
    provisioned = Provisioned.from_context(context.get)
    assert provisioned is not None
    return provisioned


# Memory of the functions that serve each operation, as infra/api.py deploys them: the long-poll (receive) route at
# `Capacity.receive_memory` (cdk.json's `receiveMemory`), every other route at ROUTE_MEMORY.
MEMORY_MB = {
    "send": ROUTE_MEMORY,
    "receive": Capacity.from_context(stack_context().get).receive_memory,
    "delete": ROUTE_MEMORY,
}
# How long a message stays stored on a busy queue (its storage is billed for that long): an assumption.
RESIDENCE_HOURS = 1.0
# With the wait tier: each receive of a busy queue is one origin call, as it is one invocation without the tier;
# held receives asked again and finding nothing add 0.13 origin calls per message (bench/results/wait_tier.md,
# 100 receives held on one queue), each billed ORIGIN_CALL_SECONDS at the receive route's memory and reading 0.5
# units. A wake the services post is one HTTP API request, but a request that came through the tier posts none: its
# wakes go back in its answer (`mnsd.waiting.wakes.carried`; bench/results/wait_tier.md measured 0.00 wake posts a
# message sent through the tier). With `-c waitTier=grip` a message's send, receive and delete all come through the
# tier, so its life posts none (TIER_WAKE_POSTS_PER_WAKE); what is not measured here (ChangeMessageVisibility,
# rewinds, pushes, redrives) still posts its wakes. The tier's own fixed cost (Fargate, about $24 a month) is not
# per message and left out.
TIER_WASTED_CALLS_PER_MESSAGE = 0.13
TIER_READ_UNITS_PER_CALL = 0.5
TIER_WAKE_POSTS_PER_WAKE = 0.0


@dataclass
class Operation:
    """What one kind of API request (send, receive, delete) did over a run: requests, their DynamoDB calls, and
    the requests the HTTP API meters (one per 512 KB of a request's payload, the larger of request and answer).

    Counted at the origin (`Usage.origin`, coalesced calls), a "request" is one invocation of the function and
    `carried` the clients' requests it served."""

    requests: int = 0
    dynamodb_calls: int = 0
    metered_requests: int = 0
    payload_bytes: int = 0
    carried: int = 0
    # requests by form: (a batch call, the messages it carried: sent, received or deleted; 0 a receive that found
    # nothing), what the bytes on the wire follow (`bench.wire`)
    forms: dict[tuple[bool, int], int] = field(default_factory=dict)

    def count(self, calls: int, payload_bytes: int, carried: int = 1, messages: int = 1, batch: bool = False) -> None:
        """One request (or invocation carrying `carried` requests) more, with its DynamoDB calls and payload, in its
        form (a batch call or not, carrying `messages` messages)."""
        self.requests += 1
        self.carried += carried
        self.dynamodb_calls += calls
        self.payload_bytes += payload_bytes
        self.metered_requests += max(1, math.ceil(payload_bytes / HTTP_API_METERED_BYTES))
        self.forms[(batch, messages)] = self.forms.get((batch, messages), 0) + 1

    @property
    def messages(self) -> int:
        """The messages the requests carried (by their forms)."""
        return sum(messages * requests for (_, messages), requests in self.forms.items())


@dataclass
class Usage:
    """What `messages` messages' lives (send, receive, delete) used."""

    messages: int
    body_bytes: int = 0  # each message's body
    write_units: float = 0.0  # the table's
    index_write_units: float = 0.0  # the ready index's
    read_units: float = 0.0  # the table's and the ready index's
    index_read_units: float = 0.0  # the ready index's share of `read_units` (its Queries)
    stored_bytes: float = 0.0  # table and index bytes a message keeps while stored, overhead included
    left_bytes: float = 0.0  # bytes it leaves after its delete, until TTL removes them (its retention period)
    retention_seconds: int = 0
    wakes: int = 0  # wakes the services tell the wait tier (posted without the tier, carried in answers through it)
    lost_claims: int = 0  # conditional claims that failed (another consumer took the lease or pack first)
    empty_receives: int = 0  # receives that found nothing to take
    operations: dict[str, Operation] = field(default_factory=lambda: {op: Operation() for op in MEMORY_MB})
    # What reached the functions when the clients' calls were coalesced (one invocation per batch call or call
    # passed on alone); None: each client request is its own invocation (`operations`).
    origin: dict[str, Operation] | None = None
    batch_sizes: dict[str, list[int]] = field(default_factory=dict)  # coalesced: each batch call's size, by operation

    def per_message(self, value: float) -> float:
        return value / self.messages

    @property
    def invocations(self) -> dict[str, Operation]:
        """What Lambda ran: the origin's invocations when coalesced, else one per client request."""
        return self.origin if self.origin is not None else self.operations


def lambda_seconds(
    operation: str, calls_per_request: float, carried_per_request: float = 1.0, messages_per_request: float = 0.0
) -> float:
    """The modelled billed duration of one invocation: its handling (per client request it serves, and per message
    beyond one a batch call carries) and its DynamoDB calls, their CPU at the share of a vCPU the memory the
    operation's route is deployed at gives, and a round trip per call."""
    share = min(1.0, MEMORY_MB[operation] / VCPU_MEMORY_MB)
    beyond = max(0.0, messages_per_request - carried_per_request)
    cpu = (
        HANDLER_CPU_FULL_VCPU_MS[operation] * carried_per_request
        + HANDLER_CPU_PER_MESSAGE_FULL_VCPU_MS[operation] * beyond
        + CPU_PER_CALL_FULL_VCPU_MS * calls_per_request
    )
    return (cpu / share + calls_per_request * LATENCY_PER_CALL_MS) / 1000


def invocation_seconds(operation: str, op: Operation) -> float:
    """`lambda_seconds` of the mean invocation of `op` (its calls, client requests and messages per invocation)."""
    return lambda_seconds(
        operation, op.dynamodb_calls / op.requests, (op.carried or op.requests) / op.requests, op.messages / op.requests
    )


def handler_cpu_line() -> str:
    """The model's handler CPU per client request at a full vCPU, by operation."""
    return ", ".join(f"{op} {ms} ms" for op, ms in HANDLER_CPU_FULL_VCPU_MS.items())


def per_message_cpu_line() -> str:
    """The model's handler CPU per message beyond one a batch carries, by operation."""
    return ", ".join(f"{op} {ms} ms" for op, ms in HANDLER_CPU_PER_MESSAGE_FULL_VCPU_MS.items())


def unit_price(capacity: str, write: bool) -> float:
    """$ per write (or read) unit consumed: on demand per request unit; provisioned, per unit-second of the capacity
    auto-scaling keeps under a steady load, consumed / the stack's target utilisation (`infra.table_capacity`)."""
    if capacity == "on demand":
        return WRITE_UNIT if write else READ_UNIT
    if capacity == "provisioned":
        hour = PROVISIONED_WCU_HOUR if write else PROVISIONED_RCU_HOUR
        return hour / 3600 / (stack_provisioning().target_percent / 100)
    raise ValueError(f"capacity must be one of {CAPACITY_MODES}, not {capacity!r}")


def dynamodb_per_million(usage: Usage, capacity: str) -> dict[str, float]:
    """$ per million messages of DynamoDB's units, the table's and the ready index's apart (each provisioned and
    scaled on its own: `infra.tables`)."""
    write, read = unit_price(capacity, True), unit_price(capacity, False)
    units = {
        "table writes": usage.write_units * write,
        "ready index writes": usage.index_write_units * write,
        "table reads": (usage.read_units - usage.index_read_units) * read,
        "ready index reads": usage.index_read_units * read,
    }
    return {name: usage.per_message(value) * MILLION for name, value in units.items()}


def storage_month(usage: Usage) -> float:
    """GB-months a message's items take: while it lives (RESIDENCE_HOURS), and what its delete leaves behind
    until TTL removes it at the end of the retention period (DynamoDB's TTL deletes up to days later: at least)."""
    stored = usage.stored_bytes * RESIDENCE_HOURS + usage.left_bytes * usage.retention_seconds / 3600
    return stored / 1024**3 / HOURS_A_MONTH


def lambda_cost(usage: Usage) -> float:
    """Lambda's requests and modelled duration over the run, $, per invocation (`Usage.invocations`)."""
    cost = 0.0
    for name, op in usage.invocations.items():
        if not op.requests:
            continue
        seconds = invocation_seconds(name, op)
        cost += op.requests * (LAMBDA_REQUEST + seconds * MEMORY_MB[name] / 1024 * LAMBDA_ARM_GB_SECOND)
    return cost


def lambda_per_million(usage: Usage) -> float:
    return usage.per_message(lambda_cost(usage)) * MILLION


def per_million(usage: Usage, tier: bool = False, capacity: str = "on demand") -> dict[str, float]:
    """$ per million messages by part (HTTP API, Lambda, DynamoDB writes, reads at `capacity`, storage; the wait
    tier's share when `tier`)."""
    api = sum(op.metered_requests for op in usage.operations.values()) * HTTP_API_REQUEST
    parts = {
        "HTTP API": api,
        "Lambda": lambda_cost(usage),
        "DynamoDB writes": (usage.write_units + usage.index_write_units) * unit_price(capacity, True),
        "DynamoDB reads": usage.read_units * unit_price(capacity, False),
        "storage": storage_month(usage) * STORAGE_GB_MONTH * usage.messages,
    }
    if tier:
        wasted = TIER_WASTED_CALLS_PER_MESSAGE * usage.messages
        call = LAMBDA_REQUEST + ORIGIN_CALL_SECONDS * MEMORY_MB["receive"] / 1024 * LAMBDA_ARM_GB_SECOND
        posts = usage.wakes * TIER_WAKE_POSTS_PER_WAKE
        parts["wait tier"] = posts * HTTP_API_REQUEST + wasted * (call + TIER_READ_UNITS_PER_CALL * READ_UNIT)
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
        f"stored {RESIDENCE_HOURS:g} h, what its delete leaves until the retention period ends); provisioned "
        f"(`-c capacity=provisioned`) ${PROVISIONED_WCU_HOUR} per WCU-hour, ${PROVISIONED_RCU_HOUR} per RCU-hour "
        f"({PROVISIONED_SOURCE}), for the capacity auto-scaling keeps under a steady load: the units consumed / its "
        f"target utilisation of {stack_provisioning().target_percent} % (infra/table_capacity.py), the table's and the "
        "ready index's each on its own, i.e. "
        f"${unit_price('provisioned', True) * MILLION:.3f} per million write units and "
        f"${unit_price('provisioned', False) * MILLION:.4f} per million read units consumed; SQS $0.40 (standard) and $0.50 (FIFO) per million requests, batches of 10, a request billed "
        "per 64 KB chunk."
    )
