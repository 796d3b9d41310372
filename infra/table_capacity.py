"""How the tables buy their capacity: on demand (the default), or provisioned with auto-scaling (`-c
capacity=provisioned`): every table and the ready index get read and write capacity between a minimum and a
maximum, tracked to a target utilisation. Provisioned capacity costs what on demand does at about 29 % utilisation
and less above (docs/capacity.md; `python -m bench.message_cost` prints the break-even); what it brings is
throttling when load outruns the scaling, which the engine's retries answer as they answer any throttling
(`mnsd.storage.dynamodb.retries`: tried again until the request's deadline, then ServiceUnavailable, 503).

Context (cdk.json or `-c name=value`): capacity (onDemand | provisioned), and with provisioned capacityMinRead,
capacityMaxRead, capacityMinWrite, capacityMaxWrite (units per table, and per index), capacityTargetPercent.

The minimum is 1 unit each way by default: it is what a table or index nobody uses costs (an estate of queues keeps
the topic message table, the operation log and its index, and the ready index of quiet queues at their minimum), and
what the load keeps above it is priced by the load alone (docs/capacity.md, "The minimum").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from aws_cdk import aws_dynamodb as dynamodb

from infra.capacity import context_key

ON_DEMAND, PROVISIONED = "ondemand", "provisioned"
# DynamoDB's default table quota is 40,000 units each way; a partition serves at most 1,000 WCU and 3,000 RCU.
MAX_UNITS = 40_000


@dataclass(frozen=True)
class Provisioned:
    """Auto-scaling bounds of each table and index (context `capacityMinRead`, ...)."""

    min_read: int = 1
    max_read: int = 4000
    min_write: int = 1
    max_write: int = 4000
    target_percent: int = 70

    def __post_init__(self) -> None:
        for kind in ("read", "write"):
            least, most = getattr(self, f"min_{kind}"), getattr(self, f"max_{kind}")
            if not 1 <= least <= most <= MAX_UNITS:
                raise ValueError(f"capacity bounds of {kind}s must satisfy 1 <= min <= max <= {MAX_UNITS}")
        if not 20 <= self.target_percent <= 90:
            raise ValueError("capacityTargetPercent must be between 20 and 90 (auto-scaling's range)")

    @classmethod
    def from_context(cls, context: Callable[[str], object]) -> Provisioned | None:
        """None for on demand (no `capacity`, or `onDemand`)."""
        mode = str(context("capacity") or ON_DEMAND).strip().lower().replace("-", "").replace("_", "")
        if mode not in (ON_DEMAND, PROVISIONED):
            raise ValueError(f"capacity must be onDemand or provisioned, got {context('capacity')!r}")
        if mode == ON_DEMAND:
            return None
        values = {}
        for field in fields(cls):
            value = context(context_key(f"capacity_{field.name}"))  # capacityMinRead, ...
            if value is not None:
                values[field.name] = int(str(value))
        return cls(**values)

    def scale(self, table: dynamodb.Table, indexes: tuple[str, ...] = ()) -> None:
        """Target tracking of the table's (and its `indexes`') read and write utilisation."""
        reads = {"min_capacity": self.min_read, "max_capacity": self.max_read}
        writes = {"min_capacity": self.min_write, "max_capacity": self.max_write}
        scalable = [table.auto_scale_read_capacity(**reads), table.auto_scale_write_capacity(**writes)]
        for index in indexes:
            scalable += [
                table.auto_scale_global_secondary_index_read_capacity(index, **reads),
                table.auto_scale_global_secondary_index_write_capacity(index, **writes),
            ]
        for target in scalable:
            target.scale_on_utilization(target_utilization_percent=self.target_percent)


def table_billing(capacity: Provisioned | None) -> dict[str, Any]:
    """A table constructor's billing keywords: on demand, or provisioned at the minimum (auto-scaling takes it
    from there)."""
    if capacity is None:
        return {"billing_mode": dynamodb.BillingMode.PAY_PER_REQUEST}
    return {
        "billing_mode": dynamodb.BillingMode.PROVISIONED,
        "read_capacity": capacity.min_read,
        "write_capacity": capacity.min_write,
    }


def index_billing(capacity: Provisioned | None) -> dict[str, Any]:
    """A global secondary index's: nothing on demand (the table's mode), else its own minimum."""
    return {} if capacity is None else {"read_capacity": capacity.min_read, "write_capacity": capacity.min_write}
