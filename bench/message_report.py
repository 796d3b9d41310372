"""The report of `bench/message_patterns.py`: measured usages priced all-in per front door and DynamoDB capacity mode,
beside SQS and MNS and the issue's targets, the fixed monthly costs and the 500-queue estate."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Mapping
from typing import Any

from bench import all_in, cost_model, front_doors
from bench._common import md_table
from bench.bodies import BODIES
from bench.cost_model import CAPACITY_MODES, Usage
from bench.cost_targets import ESTATE_MONTH, PER_MILLION, verdict
from bench.pattern_prices import (
    CNY_PER_USD,
    ESTATE_MESSAGES_A_QUEUE,
    ESTATE_QUEUES,
    MNS_CNY_PER_MILLION,
    MNS_QUEUE_MONTH_USD,
    PATTERNS,
    RATE_DATE,
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
OPERATIONS = ("send", "receive", "delete")
Results = Mapping[tuple[str, str], Usage]


def money(value: float) -> str:
    return f"${value:.3f}" if value < 1 else f"${value:,.2f}"


def stack_template(**context: object) -> dict[str, Any]:
    """The stack as `cdk synth` makes it (cdk-nag included) with `context`, its CloudFormation template."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.nag import build

    with tempfile.TemporaryDirectory() as outdir:
        app = cdk.App(context={"aws:cdk:bundling-stacks": [], **context}, outdir=outdir)
        stack = build(app, env=cdk.Environment(region="us-east-1"))
        app.synth()
        template = dict(Template.from_stack(stack).to_json())
        return template


def deployed_memory(template: Mapping[str, Any]) -> dict[str, int]:
    """The memory (MB) of the function of each operation's route in a synthesized template."""
    from bench.log_bytes import ROUTES

    memory = {}
    for resource in template.get("Resources", {}).values():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        handler = resource["Properties"].get("Handler", "")
        for op, route in ROUTES.items():
            if handler == f"{route}.handler":
                memory[op] = int(resource["Properties"].get("MemorySize", 128))
    return memory


def fixed_costs(template: Mapping[str, Any], tracing: bool) -> dict[str, float]:
    from infra.metrics import SAMPLER_MEMORY_MB

    return all_in.fixed_month(template, tracing, SAMPLER_MEMORY_MB)


def door_label(pattern: str, door: str) -> str:
    """A door as a pattern runs at it: a coalesced pattern through the wait tier, behind the HTTP API or the ALB
    (`-c waitTier=grip`: the tier takes the send, receive and delete routes) or as the front door itself."""
    if PATTERNS[pattern].coalesced and door != "wait-tier":
        return f"{door} + wait tier"
    return door


def report(
    results: Results,
    doors: list[str],
    observed: Mapping[str, all_in.Observability],
    template: Mapping[str, Any],
    provisioned_template: Mapping[str, Any],
) -> str:
    stack = observed["the stack's"]
    fixed = fixed_costs(template, stack.tracing)
    minimum = all_in.provisioned_minimum_month(provisioned_template)
    sections = [
        cost_model.prices_line(),
        front_doors.prices_line(),
        all_in_line(),
        mns_line(),
        "## Per million messages, all-in, by front door and DynamoDB capacity\n\n"
        + totals(results, doors, observed)
        + "\n\n"
        + coalesced_note()
        + "\n\n"
        + capacity_note(),
        "## The issue's targets\n\n" + targets(results, doors, stack),
        "## The parts, on demand (the front door's figure and its logs are its own; the rest the same at every door)\n\n"
        + parts_table(results, doors, stack),
        "## The message table's export: before and after\n\n" + export_table(results, doors, stack),
        "## DynamoDB by capacity mode, the table's and the ready index's units apart\n\n" + dynamodb_table(results),
        "## What was measured\n\n" + measured_table(results),
        "## Coalescing (the wait tier's door)\n\n" + coalescing(results),
        "## Lambda\n\n" + lambda_table(results),
        "## The load balancer's capacity units\n\n" + lcu_table(results, stack),
        "## Logs per request, by front door\n\n" + logs_table(observed),
        "## Fixed a month (always on, not per message)\n\n" + fixed_table(fixed, doors, minimum),
        "## The estate: 500 queues, a million single-message lifecycles a month each\n\n"
        + estate(results, doors, stack, fixed, provisioned_template),
    ]
    return "\n\n".join(sections)


def all_in_line() -> str:
    return (
        f"All-in items: CloudWatch Logs ${all_in.LOGS_INGESTED_GB} per GB ingested and ${all_in.LOGS_STORED_GB_MONTH} "
        f"per GB-month stored (one month's retention): each function invocation's lines, and the HTTP API's access "
        f"log line per request when it is the front door; an ALB's access log in S3 (gzipped, kept "
        f"{all_in.ACCESS_LOG_KEPT_DAYS} days at ${all_in.S3_GB_MONTH} per GB-month); X-Ray "
        f"${all_in.XRAY_TRACE * 1e6:.2f} per million traces, {all_in.XRAY_SAMPLED:.0%} sampled (default rule); the "
        "message table not exported (the backlog snapshot reads each queue's counts once a day, a fixed cost per "
        f"queue; before: a daily full export, ${all_in.EXPORT_GB} per GB, kept {all_in.EXPORT_KEPT_DAYS} days in S3 at "
        f"${all_in.S3_GB_MONTH} per GB-month, in its own table below); point-in-time recovery ${all_in.PITR_GB_MONTH} per GB-month; alarms "
        f"${all_in.ALARM_MONTH}, dashboard ${all_in.DASHBOARD_MONTH:.2f}, secrets ${all_in.SECRET_MONTH}, custom "
        f"metrics ${all_in.CUSTOM_METRIC_MONTH} a month each; Glue ${all_in.GLUE_DPU_HOUR} per DPU-hour."
    )


def mns_line() -> str:
    return (
        f"MNS: about CNY {MNS_CNY_PER_MILLION:g} per million requests, at CNY {CNY_PER_USD} to the US dollar "
        f"({RATE_DATE}): ${MNS_CNY_PER_MILLION / CNY_PER_USD:.3f} per million requests; the issue's queue fee "
        f"${MNS_QUEUE_MONTH_USD} per queue-month. SQS: $0.40 per million requests (standard), batches of up to 10, "
        "a request billed per 64 KB chunk."
    )


def coalesced_note() -> str:
    return (
        "A coalesced row runs through the wait tier (`-c waitTier=grip`: the tier takes the send, receive and delete "
        "routes and calls each route's function by its URL): behind the HTTP API or the ALB, which bill and log each "
        "client request as without it, or as the front door itself (`wait-tier`, no per-request fee); the tier's "
        "fixed cost is apart (the fixed table). The other rows have no tier in the path."
    )


def capacity_note() -> str:
    provisioned = cost_model.stack_provisioning()
    return (
        "Provisioned: the capacity auto-scaling keeps under a steady load, the units consumed divided by its target "
        f"utilisation ({provisioned.target_percent} %, `infra.table_capacity.Provisioned`), the table's and the ready "
        "index's each scaled on its own. Auto-scaling keeps at least its minimum "
        f"({provisioned.min_write} WCU and {provisioned.min_read} RCU a table and an index): a table or index whose "
        "load keeps more costs nothing beyond its load, and only the part of the minimum above the load is a fixed "
        "cost, stated apart (the fixed table gives each minimum whole, an idle stack's; the estate counts the part its "
        "load leaves unused). A load that moves faster than "
        "auto-scaling (it scales up after about two minutes above the target) is throttled and retried, or needs more "
        "headroom: these figures are a steady load's."
    )


def size_of(body: str) -> int:
    return len(BODIES[body](random.Random(0)))


def column(door: str, capacity: str) -> str:
    return f"{door}, {capacity}"


def totals(results: Results, doors: list[str], observed: Mapping[str, all_in.Observability]) -> str:
    stack = observed["the stack's"]
    rows = []
    for (pattern, body), usage in results.items():
        row: list[object] = [pattern, body]
        for door in doors:
            for capacity in CAPACITY_MODES:
                row.append(f"**{money(price(usage, door, stack, capacity).total)}**")
        row.append(money(price(usage, "http-api", observed["before"]).total))
        row += [money(sqs_per_million(PATTERNS[pattern], size_of(body))), money(mns_per_million(usage))]
        rows.append(row)
    headers = [
        "pattern",
        "body",
        *(column(d, c) for d in doors for c in CAPACITY_MODES),
        "http-api, on demand, the previous log settings",
        "SQS",
        "MNS (requests)",
    ]
    return md_table(headers, rows)


def targets(results: Results, doors: list[str], stack: all_in.Observability) -> str:
    """Each target beside every front door's and capacity's figure (the coalesced pattern at the wait tier)."""
    rows = []
    for target in PER_MILLION:
        for door in doors:
            for capacity in CAPACITY_MODES:
                figures = [
                    (pattern, price(results[(pattern, target.body)], door, stack, capacity).total)
                    for pattern in target.patterns
                    if (pattern, target.body) in results
                ]
                for pattern, value in figures:
                    rows.append(
                        [
                            target.label + (", coalesced" if PATTERNS[pattern].coalesced else ""),
                            column(door_label(pattern, door), capacity),
                            f"<= {money(target.usd)}",
                            money(value),
                            f"**{verdict(value, target.usd)}**",
                        ]
                    )
    return md_table(["target, per million messages all-in", "front door, capacity", "target", "measured", ""], rows)


def parts_table(results: Results, doors: list[str], stack: all_in.Observability) -> str:
    rows = []
    names: list[str] = []
    for (pattern, body), usage in results.items():
        priced = {door: price(usage, door, stack).parts for door in doors}
        first = next(iter(priced.values()))
        shared = [n for n in first if not n.startswith("front door") and n not in DOOR_PARTS]
        names = names or shared
        row: list[object] = [pattern, body]
        for door, parts in priced.items():
            row += [money(parts[f"front door ({door})"]), *door_logs(parts)]
        rows.append([*row, *(money(first[n]) for n in names)])
    door_headers = [h for d in doors for h in (f"{d}: door", f"{d}: CloudWatch Logs", f"{d}: ALB logs (S3)")]
    return md_table(["pattern", "body", *door_headers, *names], rows)


DOOR_PARTS = ("CloudWatch Logs", "ALB access logs (S3)")


def export_table(results: Results, doors: list[str], stack: all_in.Observability) -> str:
    """Per pattern: the message table's export as the stack made it (a daily full export), as an incremental export
    would bill it, and as it is now (none); and the all-in totals before and now at every door, provisioned."""
    rows = []
    for (pattern, body), usage in results.items():
        full = all_in.message_table_export_per_million(usage, "full")
        row: list[object] = [
            pattern,
            body,
            money(full),
            money(all_in.message_table_export_per_million(usage, "incremental")),
            money(all_in.export_per_million(usage)),
        ]
        for door in doors:
            now = price(usage, door, stack, "provisioned").total
            row.append(f"{money(now + full)} -> **{money(now)}**")
        rows.append(row)
    headers = [
        "pattern",
        "body",
        "daily full export (before; `backlogSnapshot=export`)",
        "daily incremental export (not built)",
        "now (`backlogSnapshot=counts`)",
        *(f"all-in, {door}, provisioned: before -> now" for door in doors),
    ]
    return (
        md_table(headers, rows)
        + "\n\nThe backlog snapshot's own cost is per queue, not per message: "
        + f"${all_in.snapshot_month(1):.5f} a queue-month at most ({all_in.SNAPSHOT_READ_UNITS_PER_QUEUE:g} read "
        + "units a queue a day, the dearest shape of bench/results/sampler.md, and "
        + f"{all_in.SNAPSHOT_CPU_SECONDS_PER_QUEUE * 1000:g} ms of the function's time), "
        + f"{money(all_in.snapshot_month(ESTATE_QUEUES))} a month for the estate's {ESTATE_QUEUES} queues (in its "
        + "fixed part below). An incremental export is billed by the change data processed from the continuous "
        + "backups, every write of the message's items each its whole item (here: its write units of the table, a KB "
        + "each), at $0.10 per GB (a minimum of 10 MB an export), and the job would have to keep the backlog's state "
        + "between runs (the previous snapshot and the day's changes)."
    )


def door_logs(parts: Mapping[str, float]) -> list[str]:
    return [money(parts[name]) for name in DOOR_PARTS]


def dynamodb_table(results: Results) -> str:
    rows = []
    for (pattern, body), usage in results.items():
        row: list[object] = [pattern, body]
        for capacity in CAPACITY_MODES:
            units = cost_model.dynamodb_per_million(usage, capacity)
            row += [money(v) for v in units.values()] + [f"**{money(sum(units.values()))}**"]
        rows.append(row)
    kinds = ("table writes", "ready index writes", "table reads", "ready index reads", "total")
    return md_table(["pattern", "body", *(f"{c}: {k}" for c in CAPACITY_MODES for k in kinds)], rows)


def measured_table(results: Results) -> str:
    rows = []
    for (pattern, body), usage in results.items():
        ops, calls = usage.operations, usage.invocations
        rows.append(
            [
                pattern,
                body,
                f"{usage.per_message(usage.write_units):.2f} + {usage.per_message(usage.index_write_units):.2f}",
                f"{usage.per_message(usage.read_units - usage.index_read_units):.2f} + "
                f"{usage.per_message(usage.index_read_units):.2f}",
                " / ".join(f"{usage.per_message(ops[op].requests):.3f}" for op in OPERATIONS),
                " / ".join(f"{usage.per_message(calls[op].requests):.3f}" for op in OPERATIONS),
                f"{usage.per_message(sum(op.dynamodb_calls for op in calls.values())):.2f}",
                usage.lost_claims,
                usage.empty_receives,
            ]
        )
    headers = [
        "pattern",
        "body",
        "write units / message (table + ready index)",
        "read units / message (table + ready index)",
        "client requests / message (send / receive / delete)",
        "Lambda invocations / message (send / receive / delete)",
        "DynamoDB calls / message",
        "lost claims",
        "empty receives",
    ]
    return md_table(headers, rows)


def coalescing(results: Results) -> str:
    from bench.pattern_prices import CALL_SECONDS
    from wait_tier.coalesce import WINDOW_MS

    rows = []
    for (pattern, body), usage in results.items():
        if not PATTERNS[pattern].coalesced:
            continue
        for op in OPERATIONS:
            sizes = usage.batch_sizes.get(op, [])
            if not sizes:
                continue
            batches = [s for s in sizes if s > 1]
            rows.append(
                [
                    pattern,
                    body,
                    op,
                    sum(sizes),
                    len(sizes),
                    len(batches),
                    f"{sum(batches) / len(batches):.1f}" if batches else "-",
                    max(sizes),
                    " / ".join(
                        str(sum(1 for s in sizes if lo <= s <= hi)) for lo, hi in ((1, 1), (2, 4), (5, 8), (9, 16))
                    ),
                ]
            )
    table = md_table(
        [
            "pattern",
            "body",
            "operation",
            "client calls",
            "calls to the origin",
            "batch calls",
            "requests a batch call, mean",
            "largest",
            "calls carrying 1 / 2-4 / 5-8 / 9-16",
        ],
        rows,
    )
    return (
        "The wait tier's coalescing, run with the pattern's threads (`bench.coalesced_calls`): single sends, single "
        f"receives and single deletes of one queue arriving within the holder's window ({WINDOW_MS:g} ms, "
        "`wait_tier.coalesce.WINDOW_MS`) of simulated time on the bench's clock (each DynamoDB call "
        f"{CALL_SECONDS * 1000:g} ms, one at a time) go to the origin as one call, served as "
        "`mnsd.request.coalesced` serves them (one batch send, one batch delete, one claim for the receives: the "
        "message service's `send`, `batch_delete`, `receive_each`); at most 16 a call; a receive of 16 is passed on "
        "alone, as the holder passes it. The window passes when other threads' calls move the clock past it, or at "
        "once when every client thread waits (time passing with nothing else to do).\n\n"
        f"{table}\n\n"
        "Left out (not realistic here): the HTTP hops client - holder - origin and their latency (the added latency is "
        "`bench/results/coalescing.md`'s, measured through the real holder); the pipeline each request of a batch call "
        "passes through at the origin (signature, request limit, permission; no DynamoDB call while the queue's "
        "record is cached, as for a request alone); a batch invocation's log lines are taken as a single request's "
        "(the handler flushes its metrics once an invocation: one EMF line). The clock moves only with DynamoDB calls "
        "(all clients' calls one after another, 1 ms each): a client's own time between its calls (its round trips, "
        "its work) is not on it, so clients answered together call again together and fall into one group. These "
        "batches are those of clients calling again at once (a saturated, closed loop), larger than what the real "
        "holder coalesced over HTTP on this machine (`bench/results/coalescing.md`: 5.2 to 6.0 requests a batch call "
        "saturated, 3.0 to 3.3 at 10 calls a second a client): clients that pace their calls get smaller batches, "
        "and a figure between this one and the uncoalesced pattern's."
    )


def lambda_table(results: Results) -> str:
    rows = []
    for (pattern, body), usage in results.items():
        if body != "1 KB incompressible":
            continue
        cells = []
        for op in OPERATIONS:
            calls = usage.invocations[op]
            if not calls.requests:
                cells.append("-")
                continue
            seconds = cost_model.invocation_seconds(op, calls)
            cells.append(f"{seconds * 1000:.0f} ms")
        rows.append([pattern, *cells, money(cost_model.lambda_per_million(usage))])
    memory = cost_model.MEMORY_MB
    return (
        f"Deployed memory (`infra.api`): send and delete at {memory['send']} MB (`infra.capacity.ROUTE_MEMORY`), receive "
        f"at {memory['receive']} MB (`receiveMemory`, cdk.json; the synthesized template's functions checked against "
        "these). Billed duration is the model of `bench.cost_model.lambda_seconds`, not measured on Lambda: "
        "the functions' CPU measured off Lambda at a full vCPU (bench/results/lambda_cpu.md), scaled to the function's "
        f"share of a vCPU ({memory['send']} or {memory['receive']} / {cost_model.VCPU_MEMORY_MB} MB): the handler's "
        f"{cost_model.handler_cpu_line()} per client request an invocation serves, and per message beyond one a batch carries "
        f"{cost_model.per_message_cpu_line()}; per DynamoDB call {cost_model.CPU_PER_CALL_FULL_VCPU_MS} ms, plus a "
        f"{cost_model.LATENCY_PER_CALL_MS:g} ms round trip. "
        "Per invocation (1 KB bodies):\n\n"
        + md_table(["pattern", "send", "receive", "delete", "Lambda, $ per million messages"], rows)
    )


def logs_table(observed: Mapping[str, all_in.Observability]) -> str:
    rows = []
    for name, o in observed.items():
        rows.append(
            [
                name,
                *(f"{o.log_bytes.get(op, 0):.0f} B" for op in OPERATIONS),
                *(f"{o.access_log_bytes.get(op, 0):.0f} B" for op in OPERATIONS),
                *(f"{o.alb_log_bytes.get(op, 0):.0f} B" for op in OPERATIONS),
                "on" if o.tracing else "off",
            ]
        )
    headers = [
        "log settings",
        *(f"function, {op} (CloudWatch, every door)" for op in OPERATIONS),
        *(f"HTTP API access log, {op} (CloudWatch)" for op in OPERATIONS),
        *(f"ALB access log, {op} (S3, gzipped)" for op in OPERATIONS),
        "X-Ray",
    ]
    return (
        md_table(headers, rows)
        + "\n\nThe wait tier as the front door writes no line per request (the holder runs without an access log); "
        "its tasks' own logs are in its fixed cost. With `-c frontDoor=alb` the HTTP API stays (idle) and writes "
        "nothing for the requests the load balancer takes."
    )


def fixed_table(fixed: Mapping[str, float], doors: list[str], minimum: Mapping[str, float]) -> str:
    rows = [[name, money(value)] for name, value in fixed.items()]
    rows.append(["**the stack, total**", f"**{money(sum(fixed.values()))}**"])
    for door in doors:
        for name, value in front_doors.fixed_month(door).items():
            rows.append([f"{door}: {name}", money(value)])
    for name, value in minimum.items():
        rows.append([f"provisioned: auto-scaling's minimum, {name}", money(value)])
    rows.append(["**provisioned: the minimum, total**", f"**{money(sum(minimum.values()))}**"])
    rows.append(["each queue: the daily backlog snapshot (at most)", money(all_in.snapshot_month(1))])
    rows.append(
        [
            f"each monitored queue: {METRICS_PER_QUEUE} metrics (metricsDefault=true monitors every queue)",
            money(all_in.queue_metrics_month(METRICS_PER_QUEUE)),
        ]
    )
    return md_table(["part", "$ a month"], rows)


ESTATE_CONNECTIONS_A_QUEUE = 2  # a producer's and a consumer's, each kept alive (at the load balancer's door)


def estate(
    results: Results,
    doors: list[str],
    stack: all_in.Observability,
    fixed: Mapping[str, float],
    provisioned_template: Mapping[str, Any],
) -> str:
    from mnsd.storage.dynamodb.items.layout import READY_INDEX

    millions = ESTATE_QUEUES * ESTATE_MESSAGES_A_QUEUE / cost_model.MILLION
    an_hour = millions * cost_model.MILLION / cost_model.HOURS_A_MONTH
    target = cost_model.stack_provisioning().target_percent / 100
    names = all_in.message_table_names(provisioned_template, READY_INDEX)
    body = "1 KB incompressible"
    rows = []
    unused: dict[str, float] = {}
    stack_fixed = sum(fixed.values())
    metrics = ESTATE_QUEUES * all_in.queue_metrics_month(METRICS_PER_QUEUE)
    connections = ESTATE_QUEUES * ESTATE_CONNECTIONS_A_QUEUE
    for pattern in ESTATE_PATTERNS:
        usage = results.get((pattern, body))
        if usage is None:
            continue
        kept = all_in.kept_capacity(usage, an_hour / 3600, target)
        minimum = all_in.provisioned_minimum_month(provisioned_template, dict(zip(names, kept.values(), strict=True)))
        unused[pattern] = sum(minimum.values())
        for door in doors:
            for capacity in CAPACITY_MODES:
                per_message = price(usage, door, stack.unmonitored(), capacity).total * millions
                monitored = price(usage, door, stack, capacity).total * millions
                all_fixed = stack_fixed + sum(front_doors.fixed_month(door).values())
                all_fixed += all_in.snapshot_month(ESTATE_QUEUES)
                if door == "alb":
                    all_fixed += front_doors.alb_connections_month(usage, stack.wire, an_hour, connections)
                if capacity == "provisioned":
                    all_fixed += sum(minimum.values())
                total = per_message + all_fixed
                rows.append(
                    [
                        "quiet" if "quiet" in pattern else "busy (indexed)",
                        column(door, capacity),
                        money(per_message),
                        money(all_fixed),
                        f"**{money(total)}**",
                        f"{verdict(total, ESTATE_MONTH)} (<= {money(ESTATE_MONTH)})",
                        money(monitored + all_fixed + metrics),
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
            "front door, capacity",
            "per-message parts",
            "fixed (stack + front door + the backlog snapshot + the provisioned minimum above the load)",
            "all-in a month, queues not monitored",
            "the issue's target",
            f"every queue monitored (its EMF lines, and {money(metrics)} of metrics)",
        ],
        rows,
    )
    hour = front_doors.alb_hour(usage, stack.wire, an_hour, connections) if stack.wire else {}
    lcu = ", ".join(f"{name} {value:,.2f}" for name, value in hour.items())
    return (
        f"{ESTATE_QUEUES} standard queues, {ESTATE_MESSAGES_A_QUEUE:,} lifecycles a month each (0.39 a second), "
        f"{body} bodies, one at a time from one client ({millions:g} million lifecycles); a queue that slow stays "
        "quiet unless its consumers fall behind. One client a queue makes one call at a time: nothing for the wait "
        f"tier to coalesce.\n\n{table}\n\n{estate_capacity(usage, millions)} Auto-scaling's minimum beyond that "
        "load (the tables and indexes the estate's messages do not use, and the part of the others' minimum their "
        "load leaves unused): "
        + ", ".join(f"{money(value)} a month {'quiet' if 'quiet' in p else 'busy'}" for p, value in unused.items())
        + f" (the whole minimum: {money(sum(all_in.provisioned_minimum_month(provisioned_template).values()))}).\n\n"
        f"The load balancer at the estate's rate (busy; {connections:,} connections, a producer's and a consumer's a "
        f"queue, kept alive), LCUs an hour by dimension: {lcu}; ALB bills the largest.\n\n"
        f"MNS: **{money(mns)}** a month (requests and queue fees); SQS: {money(sqs)}."
    )


def lcu_table(results: Results, stack: all_in.Observability) -> str:
    """Per pattern: the bytes the load balancer processes a message, by side, and each dimension's $ per million."""
    if not stack.wire:
        return "(the bytes on the wire were not measured)"
    rows = []
    for (pattern, body), usage in results.items():
        carried = front_doors.processed_bytes(usage, stack.wire)
        hours = front_doors.alb_lcu_hours(usage, stack.wire)
        tier = usage.origin is not None
        rows.append(
            [
                pattern,
                body,
                f"{usage.per_message(carried['clients']):,.0f} B",
                "- (to the tier)" if tier else f"{usage.per_message(carried['functions']):,.0f} B",
                *(money(usage.per_message(h * front_doors.ALB_LCU_HOUR) * cost_model.MILLION) for h in hours.values()),
                f"**{money(front_doors.per_million(usage, 'alb', stack.wire))}**",
            ]
        )
    wire = stack.wire["clients"]
    forms = ", ".join(
        f"{op} {'batch' if batch else 'single'} {wire.carried(op, batch, 1, 1024):,.0f} B"
        for op in OPERATIONS
        for batch in (False, True)
    )
    return (
        "Bytes a message's requests and answers carry (headers included), measured per request form with the MNS "
        "Python SDK through the local server's ALB door (`bench.front_door_cost.measure_wire`): between the client "
        "and the load balancer, and between the load balancer and the function (the event and the answer, JSON); "
        "with the wait tier behind it, the clients' at 1 GB an LCU-hour (the tier's tasks are IP targets; the hop to "
        f"them not counted: ProcessedBytes names clients and Lambda functions). Between client and load balancer, a request of one 1 KB message and its answer: {forms}. Rule "
        "evaluations: none billed (a send goes through 1 rule, a delete 3, a receive 6, of the first 10 free).\n\n"
        + md_table(
            [
                "pattern",
                "body",
                "client - load balancer, a message",
                "load balancer - function, a message",
                "processed bytes, $/M",
                "rule evaluations, $/M",
                "alb door, $/M (the largest)",
            ],
            rows,
        )
        + '\n\nALB\'s ProcessedBytes is "HTTP header and HTTP payload" and "includes traffic to and from clients and '
        f'Lambda functions" ({front_doors.ALB_BYTES_SOURCE}): both sides are priced. Counted on the client side alone '
        "(should AWS bill only that), the door's figure would be the client column's share of it, under half. A "
        "deployed stack settles it: ProcessedBytes against the access log's received and sent bytes."
    )


def estate_capacity(usage: Usage, millions: float) -> str:
    """The provisioned capacity the busy estate keeps, against auto-scaling's maximum (a table's and an index's)."""
    provisioned = cost_model.stack_provisioning()
    per_second = millions * cost_model.MILLION / (cost_model.HOURS_A_MONTH * 3600)
    target = provisioned.target_percent / 100
    kept = {
        "the message table's writes": usage.per_message(usage.write_units) * per_second / target,
        "the ready index's writes": usage.per_message(usage.index_write_units) * per_second / target,
        "the message table's reads": usage.per_message(usage.read_units - usage.index_read_units) * per_second / target,
        "the ready index's reads": usage.per_message(usage.index_read_units) * per_second / target,
    }
    within = all(v <= (provisioned.max_write if "writes" in k else provisioned.max_read) for k, v in kept.items())
    return (
        f"Provisioned, the busy estate's {per_second:.0f} lifecycles a second keep "
        + ", ".join(f"{v:,.0f} units of {k}" for k, v in kept.items())
        + f": {'within' if within else 'beyond'} auto-scaling's maximum ({provisioned.max_write:,} WCU, "
        f"{provisioned.max_read:,} RCU a table or index; `capacityMaxWrite`, `capacityMaxRead`)."
    )
