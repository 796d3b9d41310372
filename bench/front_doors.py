"""What each front door costs: per request, and fixed per month (always on, stated apart).

- `http-api` (the stack's default): API Gateway's HTTP API, $1.00 per million requests (first 300 million a month),
  each request metered per 512 KB of payload.
- `alb`: an Application Load Balancer with each operation's function as its target, priced from AWS's published
  Elastic Load Balancing prices (https://aws.amazon.com/elasticloadbalancing/pricing/, us-east-1, the figures of
  its pricing examples, read 2026-12-07): $0.0225 per ALB-hour, always on; $0.008 per LCU-hour, an LCU-hour being
  the largest, over the hour, of: 25 new connections a second, 3,000 active connections a minute, 0.4 GB processed
  (Lambda functions as targets; 1 GB for instances), 1,000 rule evaluations a second, where a request evaluates
  the listener's rules it processes less the first 10 (free). Priced here at the stack's ~40 listener rules, every
  request processing all of them (the worst order), clients keeping their connections (the SDKs do): rule
  evaluations are then the largest dimension for messages under ~1.6 KB a request.
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

from bench import all_in, cost_model
from bench.cost_model import HOURS_A_MONTH, MILLION, Usage
from bench.wait_tier import PUBLIC_IPV4_HOUR, tier_fixed_month

FRONT_DOORS = ("http-api", "alb", "wait-tier")
ALB_SOURCE = "https://aws.amazon.com/elasticloadbalancing/pricing/"
ALB_HOUR = 0.0225
ALB_LCU_HOUR = 0.008
LCU_NEW_CONNECTIONS_PER_SECOND = 25
LCU_ACTIVE_CONNECTIONS_PER_MINUTE = 3000
LCU_LAMBDA_BYTES_PER_HOUR = 0.4e9
LCU_RULE_EVALUATIONS_PER_SECOND = 1000
FREE_RULES = 10
LISTENER_RULES = 40


def alb_lcu_hours(requests: float, payload_bytes: float, new_connections: float = 0.0) -> float:
    """LCU-hours of `requests` carrying `payload_bytes` (requests and answers) and opening `new_connections`, spread
    evenly over the hours they take: the largest dimension's share."""
    rules = requests * max(0, LISTENER_RULES - FREE_RULES) / (LCU_RULE_EVALUATIONS_PER_SECOND * 3600)
    processed = payload_bytes / LCU_LAMBDA_BYTES_PER_HOUR
    connections = new_connections / (LCU_NEW_CONNECTIONS_PER_SECOND * 3600)
    return max(rules, processed, connections)


def per_million(usage: Usage, door: str) -> float:
    """The front door's per-request bill per million messages."""
    if door == "http-api":
        metered = sum(op.metered_requests for op in usage.operations.values())
        return usage.per_message(metered * cost_model.HTTP_API_REQUEST) * MILLION
    if door == "alb":
        requests = sum(op.requests for op in usage.operations.values())
        payload = sum(op.payload_bytes for op in usage.operations.values())
        return usage.per_message(alb_lcu_hours(requests, payload) * ALB_LCU_HOUR) * MILLION
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
    return (
        f"Front doors: HTTP API $1.00 per million requests (per 512 KB); Application Load Balancer ${ALB_HOUR} an hour "
        f"(always on, ${ALB_HOUR * HOURS_A_MONTH:.2f} a month) and ${ALB_LCU_HOUR} per LCU-hour (an LCU: "
        f"{LCU_NEW_CONNECTIONS_PER_SECOND} new connections/s, {LCU_ACTIVE_CONNECTIONS_PER_MINUTE:,} active connections/min, "
        f"{LCU_LAMBDA_BYTES_PER_HOUR / 1e9:g} GB/h processed for Lambda targets, {LCU_RULE_EVALUATIONS_PER_SECOND:,} "
        f"rule evaluations/s beyond the first {FREE_RULES} rules; at {LISTENER_RULES} listener rules, persistent "
        f"connections: ${alb_lcu_hours(MILLION, 0) * ALB_LCU_HOUR:.3f} per million requests), from {ALB_SOURCE} "
        "(us-east-1, read 2026-12-07); the wait tier's tasks calling function URLs: no per-request fee, the tier's fixed "
        "cost."
    )
