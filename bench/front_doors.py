"""What each front door costs: per request, and fixed per month (always on, stated apart).

- `http-api` (the stack's default): API Gateway's HTTP API, $1.00 per million requests (first 300 million a month),
  each request metered per 512 KB of payload.
- `alb`: an Application Load Balancer with each operation's function as its target, priced from AWS's published
  Elastic Load Balancing prices (https://aws.amazon.com/elasticloadbalancing/pricing/, us-east-1, the figures of
  its pricing examples, read 2026-12-07): $0.0225 per ALB-hour, always on; $0.008 per LCU-hour, an LCU-hour being
  the largest, over the hour, of: 25 new connections a second, 3,000 active connections a minute, 0.4 GB processed
  (Lambda functions as targets; 1 GB for instances, containers and IP addresses), 1,000 rule evaluations a second,
  a request's rule evaluations being the listener rules it goes through (in priority order, to the first that
  matches) less the first 10, which are free. Per request (`alb_lcu_hours`): the rules of its route
  (`mnsd.request.listener`: a send goes through 1, a delete 3, a receive 6; none billed) and the bytes it and its
  answer carry, measured per form (`bench.wire`, `bench.front_door_cost.measure_wire`): between the client and the
  load balancer (headers included) and, as ALB's ProcessedBytes counts "traffic to and from clients and Lambda
  functions" (ALB_BYTES_SOURCE), between the load balancer and the function (the event and the answer, JSON); with
  the wait tier behind it (a coalesced pattern) the tier's tasks are IP targets (1 GB an LCU-hour), the clients'
  bytes counted. Processed bytes are then the largest dimension: a 1 KB message's send, receive and delete carry
  about 11 KB, 5 KB of it between the client and the load balancer. Clients keep their connections (the SDKs do): the connections' dimensions
  depend on how many clients there are, not on their requests, and are priced where the clients are counted (the
  estate, `connections_lcu`).
- `wait-tier`: the wait tier's always-on tasks as the front door (a design: deployed, `-c waitTier=grip` puts the tier
  behind the HTTP API or the ALB, which still bill each request), calling each operation's function by its
  function URL (no per-request fee: Lambda bills its invocation as it does behind the HTTP API); the tier's fixed
  cost (`bench.wait_tier.tier_fixed_month`, at its two tasks' floor: the tasks an estate's request rate would need
  beyond them, up to `infra.wait_tier.MAX_TASKS`, are not measured). Its other job, coalescing concurrent single
  requests into batch calls, is measured by `bench.message_patterns`' coalesced patterns (`bench.coalesced_calls`).

What each door writes to logs per request (`bench.log_bytes`, priced by `bench.all_in`): the HTTP API its access log
line to CloudWatch Logs; the ALB its access log entry to S3 (gzipped; each node's file every 5 minutes a PUT, fixed
here); the wait tier nothing. Not priced: the flow logs of the ALB's VPC (a record per connection and 10-minute
interval, not per request: clients that keep their connections write a few a month).
"""

from __future__ import annotations

from collections.abc import Mapping

from bench import all_in, cost_model
from bench.cost_model import HOURS_A_MONTH, MILLION, Usage
from bench.wait_tier import PUBLIC_IPV4_HOUR, tier_fixed_month
from bench.wire import Wire

FRONT_DOORS = ("http-api", "alb", "wait-tier")
ALB_SOURCE = "https://aws.amazon.com/elasticloadbalancing/pricing/"
ALB_BYTES_SOURCE = (
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html"
)
ALB_HOUR = 0.0225
ALB_LCU_HOUR = 0.008
LCU_NEW_CONNECTIONS_PER_SECOND = 25
LCU_ACTIVE_CONNECTIONS_PER_MINUTE = 3000
LCU_LAMBDA_BYTES_PER_HOUR = 0.4e9
LCU_TARGET_BYTES_PER_HOUR = 1e9  # instances, containers and IP addresses as targets (the wait tier's tasks)
LCU_RULE_EVALUATIONS_PER_SECOND = 1000
FREE_RULES = 10
CLIENT_KEEP_ALIVE_SECONDS = 3600  # ALB's client keep-alive duration by default (the stack sets none)
METHODS = {"send": "POST", "receive": "GET", "delete": "DELETE"}  # of `/queues/{queue}/messages`, single and batch


def rules_processed(operation: str) -> int:
    """The listener rules a request of `operation` goes through: every rule before its own, and its own."""
    from mnsd.request.listener import rule_for

    rule = rule_for(METHODS[operation], "/queues/q/messages")
    assert rule is not None
    return rule.priority


def processed_bytes(usage: Usage, wire: Mapping[str, Wire]) -> dict[str, float]:
    """The bytes the usage's client requests and their answers carry (`bench.wire`), by side: between the clients and
    the load balancer, and between it and the functions."""
    carried = dict.fromkeys(wire, 0.0)
    for name, op in usage.operations.items():
        for (batch, messages), requests in op.forms.items():
            for side, model in wire.items():
                carried[side] += requests * model.carried(name, batch, messages, usage.body_bytes)
    return carried


def alb_lcu_hours(usage: Usage, wire: Mapping[str, Wire]) -> dict[str, float]:
    """LCU-hours of the usage's client requests by the dimensions that follow requests, spread evenly over the hours
    they take (ALB bills the largest): the bytes processed, ALB's ProcessedBytes ("HTTP header and HTTP payload ...
    traffic to and from clients and Lambda functions", ALB_BYTES_SOURCE): the clients' and the functions' (the event
    and the answer) at 0.4 GB an LCU-hour; with the wait tier behind the load balancer (a coalesced pattern) the
    clients' at 1 GB, the tier's tasks being IP targets (the hop to them, not named there, not counted; counted, it
    would about double the figure); and the rule evaluations beyond the first 10 rules."""
    carried = processed_bytes(usage, wire)
    if usage.origin is not None:
        processed = carried["clients"] / LCU_TARGET_BYTES_PER_HOUR
    else:
        processed = (carried["clients"] + carried["functions"]) / LCU_LAMBDA_BYTES_PER_HOUR
    evaluations = sum(op.requests * max(0, rules_processed(name) - FREE_RULES) for name, op in usage.operations.items())
    return {"processed bytes": processed, "rule evaluations": evaluations / (LCU_RULE_EVALUATIONS_PER_SECOND * 3600)}


def connections_lcu(connections: float) -> dict[str, float]:
    """LCUs an hour of `connections` clients' connections kept alive: active ones, and the new ones as ALB closes each
    after its keep-alive duration."""
    return {
        "active connections": connections / LCU_ACTIVE_CONNECTIONS_PER_MINUTE,
        "new connections": connections / CLIENT_KEEP_ALIVE_SECONDS / LCU_NEW_CONNECTIONS_PER_SECOND,
    }


def alb_hour(usage: Usage, wire: Mapping[str, Wire], lifecycles_an_hour: float, connections: float) -> dict[str, float]:
    """LCUs of each dimension in an hour of a steady load: `lifecycles_an_hour` of the usage's pattern from
    `connections` clients' kept-alive connections (ALB bills the largest)."""
    per_lifecycle = {name: hours / usage.messages for name, hours in alb_lcu_hours(usage, wire).items()}
    return {
        **{name: value * lifecycles_an_hour for name, value in per_lifecycle.items()},
        **connections_lcu(connections),
    }


def alb_connections_month(
    usage: Usage, wire: Mapping[str, Wire], lifecycles_an_hour: float, connections: float
) -> float:
    """What the connections' dimensions add a month above the requests' (`per_million`), $: nothing while the
    requests' bytes or rules are the largest dimension."""
    hour = alb_hour(usage, wire, lifecycles_an_hour, connections)
    requests = max(hour["processed bytes"], hour["rule evaluations"])
    return max(0.0, max(hour.values()) - requests) * ALB_LCU_HOUR * HOURS_A_MONTH


def per_million(usage: Usage, door: str, wire: Mapping[str, Wire] | None = None) -> float:
    """The front door's per-request bill per million messages (the ALB's from the measured bytes on the `wire`)."""
    if door == "http-api":
        metered = sum(op.metered_requests for op in usage.operations.values())
        return usage.per_message(metered * cost_model.HTTP_API_REQUEST) * MILLION
    if door == "alb":
        if not wire:
            raise ValueError("the load balancer's processed bytes need the bytes measured on the wire")
        return usage.per_message(max(alb_lcu_hours(usage, wire).values()) * ALB_LCU_HOUR) * MILLION
    if door == "wait-tier":
        return 0.0
    raise ValueError(f"front door must be one of {FRONT_DOORS}, not {door!r}")


def fixed_month(door: str) -> dict[str, float]:
    """The front door's always-on cost, $ a month."""
    if door == "alb":
        return {
            "Application Load Balancer (hours)": ALB_HOUR * HOURS_A_MONTH,
            # internet-facing: a public IPv4 address a node, one in each of its two subnets (`infra.load_balancer`)
            f"public IPv4 addresses ({all_in.ALB_NODES})": all_in.ALB_NODES * PUBLIC_IPV4_HOUR * HOURS_A_MONTH,
            f"ALB access log files (S3 PUTs, {all_in.ALB_NODES} nodes, every 5 min)": all_in.alb_log_files_month(),
        }
    if door == "wait-tier":
        return {f"wait tier as front door: {name}": value for name, value in tier_fixed_month().items()}
    return {}


def prices_line() -> str:
    rules = ", ".join(f"{op} {rules_processed(op)}" for op in METHODS)
    return (
        f"Front doors: HTTP API $1.00 per million requests (per 512 KB); Application Load Balancer ${ALB_HOUR} an hour "
        f"(always on, ${ALB_HOUR * HOURS_A_MONTH:.2f} a month) and ${ALB_LCU_HOUR} per LCU-hour (an LCU: "
        f"{LCU_NEW_CONNECTIONS_PER_SECOND} new connections/s, {LCU_ACTIVE_CONNECTIONS_PER_MINUTE:,} active connections/min, "
        f"{LCU_LAMBDA_BYTES_PER_HOUR / 1e9:g} GB/h processed for Lambda targets ({LCU_TARGET_BYTES_PER_HOUR / 1e9:g} GB/h "
        f"for IP targets: the wait tier's tasks), {LCU_RULE_EVALUATIONS_PER_SECOND:,} rule evaluations/s, a request's "
        f"evaluations the rules it goes through less the first {FREE_RULES}; ALB bills the largest dimension of each "
        f"hour), from {ALB_SOURCE} (us-east-1, read 2026-12-07). Rules a request goes through to its own: {rules} "
        "(none billed); bytes processed as measured per request form, headers included, between the client and the "
        f"load balancer and between it and the function (the event and its answer: ALB's ProcessedBytes counts both, "
        f"{ALB_BYTES_SOURCE}), "
        "the largest dimension; clients keep their connections (the connections' dimensions, which follow the number "
        "of clients, are priced in the estate); the wait tier's tasks calling function URLs: no per-request fee, the "
        "tier's fixed cost."
    )
