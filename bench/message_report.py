"""The report of `bench/message_patterns.py`: measured usages priced all-in per front door, beside SQS and MNS, the
fixed monthly costs and the 500-queue estate."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Mapping
from typing import Any

from bench import all_in, cost_model, front_doors
from bench._common import md_table
from bench.bodies import BODIES
from bench.cost_model import Usage
from bench.message_patterns import (
    CNY_PER_USD,
    ESTATE_MESSAGES_A_QUEUE,
    ESTATE_QUEUES,
    MNS_CNY_PER_MILLION,
    MNS_QUEUE_MONTH_USD,
    PATTERNS,
    RATE_DATE,
    Pattern,
    mns_per_million,
    price,
    sqs_per_million,
)
from mnsd.metrics import QUEUE_GAUGES

# What each monitored queue publishes under single-message traffic: its EMF counts on the request path (sent, sent
# size, received, deleted, empty receives) and the sampler's gauges.
REQUEST_PATH_METRICS = 5
METRICS_PER_QUEUE = REQUEST_PATH_METRICS + len(QUEUE_GAUGES)
ESTATE_PATTERN = "one at a time, one client"
ESTATE_PATTERNS = (ESTATE_PATTERN, "one at a time, one client, quiet queue")


def money(value: float) -> str:
    return f"${value:.3f}" if value < 1 else f"${value:,.2f}"


def stack_template(**context: object) -> dict[str, Any]:
    """The stack as `cdk synth` makes it (cdk-nag included), its CloudFormation template."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.nag import build

    with tempfile.TemporaryDirectory() as outdir:
        app = cdk.App(context={"aws:cdk:bundling-stacks": [], **context}, outdir=outdir)
        stack = build(app, env=cdk.Environment(region="us-east-1"))
        app.synth()
        template = dict(Template.from_stack(stack).to_json())
        return template


def fixed_costs(template: Mapping[str, Any], tracing: bool) -> dict[str, float]:
    from infra.metrics import SAMPLER_MEMORY_MB

    return all_in.fixed_month(template, tracing, SAMPLER_MEMORY_MB)


Results = Mapping[tuple[str, str], Usage]


def report(
    results: Results, doors: list[str], observed: Mapping[str, all_in.Observability], template: Mapping[str, Any]
) -> str:
    stack = observed["the stack's"]
    fixed = fixed_costs(template, stack.tracing)
    sections = [
        cost_model.prices_line(),
        front_doors.prices_line(),
        all_in_line(),
        mns_line(),
        "## Per million messages, all-in (the stack's log and tracing settings)\n\n" + totals(results, doors, observed),
        "## The parts (each front door's figure is its own; the other parts are the same at every door)\n\n"
        + parts_table(results, observed),
        "## What was measured\n\n" + measured_table(results),
        "## Logs per request\n\n" + logs_table(observed),
        "## Fixed a month (always on, not per message)\n\n" + fixed_table(fixed, doors),
        "## The estate: 500 queues, a million single-message lifecycles a month each\n\n"
        + estate(results, doors, stack, fixed),
    ]
    return "\n\n".join(sections)


def all_in_line() -> str:
    return (
        f"All-in items: CloudWatch Logs ${all_in.LOGS_INGESTED_GB} per GB ingested and ${all_in.LOGS_STORED_GB_MONTH} "
        f"per GB-month stored (one month's retention); X-Ray ${all_in.XRAY_TRACE * 1e6:.2f} per million traces, "
        f"{all_in.XRAY_SAMPLED:.0%} sampled (default rule); the daily export of the message table "
        f"${all_in.EXPORT_GB} per GB, kept {all_in.EXPORT_KEPT_DAYS} days in S3 at ${all_in.S3_GB_MONTH} per GB-month; "
        f"point-in-time recovery ${all_in.PITR_GB_MONTH} per GB-month; alarms ${all_in.ALARM_MONTH}, dashboard "
        f"${all_in.DASHBOARD_MONTH:.2f}, secrets ${all_in.SECRET_MONTH}, custom metrics ${all_in.CUSTOM_METRIC_MONTH} a "
        f"month each; Glue ${all_in.GLUE_DPU_HOUR} per DPU-hour."
    )


def mns_line() -> str:
    return (
        f"MNS: about CNY {MNS_CNY_PER_MILLION:g} per million requests, at CNY {CNY_PER_USD} to the US dollar "
        f"({RATE_DATE}): ${MNS_CNY_PER_MILLION / CNY_PER_USD:.3f} per million requests; the issue's queue fee "
        f"${MNS_QUEUE_MONTH_USD} per queue-month. SQS: $0.40 per million requests (standard), batches of up to 10, "
        "a request billed per 64 KB chunk."
    )


def size_of(body: str) -> int:
    return len(BODIES[body](random.Random(0)))


def totals(results: Results, doors: list[str], observed: Mapping[str, all_in.Observability]) -> str:
    rows = []
    for (pattern, body), usage in results.items():
        row: list[object] = [pattern, body]
        stack = observed["the stack's"]
        row += [f"**{money(price(usage, door, stack).total)}**" for door in doors]
        row.append(money(price(usage, "http-api", observed["before"]).total))
        row += [money(sqs_per_million(PATTERNS[pattern], size_of(body))), money(mns_per_million(usage))]
        rows.append(row)
    headers = ["pattern", "body", *doors, "http-api, the previous log settings", "SQS", "MNS (requests)"]
    return md_table(headers, rows)


def parts_table(results: Results, observed: Mapping[str, all_in.Observability]) -> str:
    rows = []
    names: list[str] = []
    for (pattern, body), usage in results.items():
        parts = price(usage, "http-api", observed["the stack's"]).parts
        alb = front_doors.per_million(usage, "alb")
        names = names or [n for n in parts if not n.startswith("front door")]
        rows.append(
            [pattern, body, money(parts["front door (http-api)"]), money(alb), *(money(parts[n]) for n in names)]
        )
    return md_table(["pattern", "body", "HTTP API", "ALB (LCUs)", *names], rows)


def measured_table(results: Results) -> str:
    rows = []
    for (pattern, body), usage in results.items():
        ops = usage.operations
        rows.append(
            [
                pattern,
                body,
                f"{usage.per_message(usage.write_units):.2f} + {usage.per_message(usage.index_write_units):.2f}",
                f"{usage.per_message(usage.read_units):.2f}",
                " / ".join(f"{usage.per_message(ops[op].requests):.3f}" for op in ("send", "receive", "delete")),
                f"{usage.per_message(sum(op.dynamodb_calls for op in ops.values())):.2f}",
                usage.lost_claims,
                usage.empty_receives,
            ]
        )
    headers = [
        "pattern",
        "body",
        "write units / message (table + ready index)",
        "read units / message",
        "requests / message (send / receive / delete)",
        "DynamoDB calls / message",
        "lost claims",
        "empty receives",
    ]
    return md_table(headers, rows)


def logs_table(observed: Mapping[str, all_in.Observability]) -> str:
    rows = [
        [
            name,
            *(f"{o.log_bytes.get(op, 0):.0f} B" for op in ("send", "receive", "delete")),
            "on" if o.tracing else "off",
        ]
        for name, o in observed.items()
    ]
    return md_table(["log settings", "send", "receive", "delete", "X-Ray"], rows)


def fixed_table(fixed: Mapping[str, float], doors: list[str]) -> str:
    rows = [[name, money(value)] for name, value in fixed.items()]
    rows.append(["**the stack, total**", f"**{money(sum(fixed.values()))}**"])
    for door in doors:
        for name, value in front_doors.fixed_month(door).items():
            rows.append([f"{door}: {name}", money(value)])
    rows.append(
        [
            f"each monitored queue: {METRICS_PER_QUEUE} metrics (metricsDefault=true monitors every queue)",
            money(all_in.queue_metrics_month(METRICS_PER_QUEUE)),
        ]
    )
    return md_table(["part", "$ a month"], rows)


def estate(results: Results, doors: list[str], stack: all_in.Observability, fixed: Mapping[str, float]) -> str:
    millions = ESTATE_QUEUES * ESTATE_MESSAGES_A_QUEUE / cost_model.MILLION
    body = "1 KB incompressible"
    rows = []
    stack_fixed = sum(fixed.values())
    metrics = ESTATE_QUEUES * all_in.queue_metrics_month(METRICS_PER_QUEUE)
    for pattern in ESTATE_PATTERNS:
        usage = results.get((pattern, body))
        if usage is None:
            continue
        for door in doors:
            per_message = price(usage, door, stack.unmonitored()).total * millions
            monitored = price(usage, door, stack).total * millions
            door_fixed = sum(front_doors.fixed_month(door).values())
            total = per_message + stack_fixed + door_fixed
            rows.append(
                [
                    "quiet" if "quiet" in pattern else "busy (indexed)",
                    door,
                    money(per_message),
                    money(stack_fixed + door_fixed),
                    f"**{money(total)}**",
                    money(monitored + stack_fixed + door_fixed + metrics),
                ]
            )
    usage = results.get((ESTATE_PATTERN, body))
    if usage is None:
        return "(not measured: run with the one-client patterns and 1 KB bodies)"
    mns = millions * mns_per_million(usage) + ESTATE_QUEUES * MNS_QUEUE_MONTH_USD
    sqs = millions * sqs_per_million(PATTERNS[ESTATE_PATTERN], size_of(body))
    table = md_table(
        [
            "queues",
            "front door",
            "per-message parts",
            "fixed (stack + front door)",
            "all-in a month, queues not monitored",
            f"every queue monitored (its EMF lines, and {money(metrics)} of metrics)",
        ],
        rows,
    )
    return (
        f"{ESTATE_QUEUES} standard queues, {ESTATE_MESSAGES_A_QUEUE:,} lifecycles a month each (0.39 a second), "
        f"{body} bodies, one at a time from one client ({millions:g} million lifecycles); a queue that slow stays "
        f"quiet unless its consumers fall behind:\n\n{table}\n\n"
        f"MNS: **{money(mns)}** a month (requests and queue fees); SQS: {money(sqs)}."
    )


def pattern_of(name: str) -> Pattern:
    return PATTERNS[name]
