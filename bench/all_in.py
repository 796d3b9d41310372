"""What "all-in" adds to a message's DynamoDB, Lambda and front-door bill: logs, traces, exports, backups, and the
fixed monthly cost of the always-on parts. The arithmetic of `bench/message_patterns.py`, apart from the measuring.

Per message (priced per million):
- CloudWatch Logs: the bytes each function invocation writes at the stack's log settings, and each request's access
  log line where the front door writes one to CloudWatch (the HTTP API's; `bench/log_bytes.py`, measured from the
  route functions), ingested at $0.50 per GB and stored for the log groups' retention (one month) at $0.03 per
  GB-month (CloudWatch stores them compressed: the raw bytes are an upper bound);
- the ALB's access log (`-c frontDoor=alb`): delivered to S3 at no charge of its own, gzipped, stored for the access
  log bucket's 90 days at $0.023 per GB-month (`bench.log_bytes.alb_gzipped_bytes`); each node's file every 5
  minutes is a PUT, a fixed cost;
- X-Ray: with tracing active, X-Ray's default sampling rule records 5 % of requests beyond its reservoir of one a
  second, $5.00 per million traces (the reservoir, about 2.6 million traces a month, is a fixed cost);
- the message table's export: none (`infra/analytics.py`, `backlogSnapshot=counts`, the default: the backlog snapshot
  reads each queue's counts, a fixed cost per queue, `snapshot_month`). Priced beside, for comparison
  (`message_table_export_per_million`): the daily full export the stack made before (and makes with
  `backlogSnapshot=export`; ExportTableToPointInTime, $0.10 per GB of the table at the export: a message's items are
  in every export made while they are stored, the items its delete leaves until TTL in one export a day of its
  retention period; each export kept 30 days in S3 at $0.023 per GB-month), and an incremental export (billed by the
  data processed from the continuous backups: every write of the message's items, each its whole item);
- point-in-time recovery ($0.20 per GB-month of the table's size: what storage pays for, at backup's price).

Fixed per month, apart: the front door's (`bench/front_doors.py`), the alarms, dashboard, secrets, key, metrics
sampler and Glue jobs the stack makes (`fixed_month`, from the synthesized template's resources), and each monitored
queue's CloudWatch metrics ($0.30 per metric a month).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bench import cost_model
from bench.cost_model import HOURS_A_MONTH, MILLION, Usage
from bench.wire import Wire

GB = 1024**3
LOGS_INGESTED_GB = 0.50
LOGS_STORED_GB_MONTH = 0.03
LOG_RETENTION_MONTHS = 1  # infra.functions.LOG_RETENTION: one month
XRAY_TRACE = 5.00 / MILLION
XRAY_SAMPLED = 0.05  # the default sampling rule: beyond the reservoir, 5 %
XRAY_RESERVOIR_PER_SECOND = 1
EXPORT_GB = 0.10  # DynamoDB full export to S3, per GB of the table at the export
INCREMENTAL_EXPORT_GB = 0.10  # incremental export, per GB of change data processed (a minimum of 10 MB an export)
INCREMENTAL_EXPORT_MINIMUM_GB = 10 / 1024
EXPORTS_A_DAY = 1  # infra.analytics.EXPORTS_CRON
KB = 1024
# The message table's export by the stack's setting (`infra.analytics.BACKLOG_SOURCES`): `counts` (the default) exports
# it not at all; `export` fully, daily.
BACKLOG_SOURCE = "counts"
MESSAGE_TABLE_EXPORT = {"counts": "none", "export": "full"}
# The backlog snapshot (`mnsd.monitoring.snapshot`), a run a day: what one queue's counts cost to read, from
# bench/results/sampler.md (the same `MessageStore.backlog` reads): 51.5 read units for its dearest shape (a busy queue
# of 100,000 messages, 16 stripes; an empty queue 0.55) and 2.80 ms of CPU a queue, at the function's 1,769 MB.
SNAPSHOT_READ_UNITS_PER_QUEUE = 51.5
SNAPSHOT_CPU_SECONDS_PER_QUEUE = 0.0028
SNAPSHOT_MEMORY_MB = 1769  # infra.analytics.SNAPSHOT_MEMORY_MB
SNAPSHOTS_A_MONTH = 30
EXPORT_KEPT_DAYS = 30  # infra.storage: the exports prefix expires after 30 days
S3_GB_MONTH = 0.023
PITR_GB_MONTH = 0.20
ACCESS_LOG_KEPT_DAYS = 90  # infra.storage: the access log bucket's objects expire after 90 days
S3_PUT = 0.005 / 1000
ALB_NODES = 2  # one per Availability Zone of the front door's VPC (`infra.load_balancer`: two)
ALB_LOG_FILES_AN_HOUR = 12  # each node delivers its log every 5 minutes
ALARM_MONTH = 0.10  # a standard-resolution alarm on one metric
DASHBOARD_MONTH = 3.00
SECRET_MONTH = 0.40
KMS_KEY_MONTH = 1.00
CUSTOM_METRIC_MONTH = 0.30  # the first 10,000 metrics
GLUE_DPU_HOUR = 0.44
GLUE_RUN_MINUTES = 3  # an assumption: a run over a day's export, Glue 5 bills per second with a 1-minute minimum
SAMPLER_RUN_SECONDS = 2.0  # an assumption: the metrics sampler's run, every minute
MINUTES_A_MONTH = HOURS_A_MONTH * 60
SECONDS_A_MONTH = HOURS_A_MONTH * 3600


@dataclass(frozen=True)
class Observability:
    """What the stack logs and traces, in the bench's terms: billed CloudWatch bytes per function invocation of each
    operation, per request of the HTTP API's access log, the ALB's access log entry in S3, and whether X-Ray
    traces; and what a request carries past the front door (`wire`: by side, `bench.front_door_cost.measure_wire`),
    which an ALB bills as processed bytes."""

    log_bytes: Mapping[str, float]  # operation -> the function's billed bytes per invocation, the queue monitored
    tracing: bool
    unmonitored_log_bytes: Mapping[str, float] | None = None  # the same, the queue not monitored (no EMF line)
    access_log_bytes: Mapping[str, float] = field(default_factory=dict)  # the HTTP API's line per request
    alb_log_bytes: Mapping[str, float] = field(default_factory=dict)  # the ALB's entry per request, gzipped in S3
    wire: Mapping[str, Wire] = field(default_factory=dict)  # "clients", "functions": the bytes of each request form

    def unmonitored(self) -> Observability:
        return replace(self, log_bytes=self.unmonitored_log_bytes or self.log_bytes)


def logs_per_million(usage: Usage, observability: Observability, door: str = "http-api") -> float:
    """CloudWatch Logs ingestion and storage per million messages: the functions' lines per invocation, and the
    HTTP API's access log line per client request when it is the front door."""
    function = sum(op.requests * observability.log_bytes.get(name, 0.0) for name, op in usage.invocations.items())
    access = 0.0
    if door == "http-api":
        access = sum(
            op.requests * observability.access_log_bytes.get(name, 0.0) for name, op in usage.operations.items()
        )
    per_message_gb = (function + access) / usage.messages / GB
    return per_message_gb * (LOGS_INGESTED_GB + LOGS_STORED_GB_MONTH * LOG_RETENTION_MONTHS) * MILLION


def alb_logs_per_million(usage: Usage, observability: Observability) -> float:
    """The ALB's access log in S3 per million messages: each request's gzipped entry, kept the bucket's 90 days."""
    stored = sum(op.requests * observability.alb_log_bytes.get(name, 0.0) for name, op in usage.operations.items())
    return stored / usage.messages / GB * S3_GB_MONTH * ACCESS_LOG_KEPT_DAYS / 30 * MILLION


def alb_log_files_month() -> float:
    """The PUTs of the ALB's log files a month (each node's file every 5 minutes), $."""
    return ALB_NODES * ALB_LOG_FILES_AN_HOUR * HOURS_A_MONTH * S3_PUT


def xray_per_million(usage: Usage, observability: Observability) -> float:
    """Traces of the functions' invocations (active tracing samples invocations)."""
    if not observability.tracing:
        return 0.0
    invocations = sum(op.requests for op in usage.invocations.values())
    return invocations / usage.messages * XRAY_SAMPLED * XRAY_TRACE * MILLION


def exported_gb(usage: Usage) -> float:
    """GB of full exports a message is in: while stored (RESIDENCE_HOURS, in a day's one export by that share), and
    what its delete leaves, once a day until TTL."""
    stored = usage.stored_bytes * min(1.0, cost_model.RESIDENCE_HOURS / 24 * EXPORTS_A_DAY)
    left = usage.left_bytes * usage.retention_seconds / 86400 * EXPORTS_A_DAY
    return (stored + left) / GB


def changed_gb(usage: Usage) -> float:
    """GB of change data a message's writes put in the message table's continuous backups: each write's whole item,
    bounded by its write units (a unit per KB of the item, rounded up; the ready index is not exported)."""
    return usage.per_message(usage.write_units) * KB / GB


def message_table_export_per_million(usage: Usage, kind: str) -> float:
    """The message table's export, a message's share and the S3 storage of what it is in, $ per million: `full` (a
    daily ExportTableToPointInTime), `incremental` (a daily incremental export of the day's changes: its minimum of
    10 MB an export is below a busy table's day of changes), or `none`."""
    if kind == "none":
        return 0.0
    if kind == "full":
        return exported_gb(usage) * (EXPORT_GB + S3_GB_MONTH * EXPORT_KEPT_DAYS / 30) * MILLION
    if kind == "incremental":
        return changed_gb(usage) * (INCREMENTAL_EXPORT_GB + S3_GB_MONTH * EXPORT_KEPT_DAYS / 30) * MILLION
    raise ValueError(f"unknown export {kind!r}")


def export_per_million(usage: Usage, backlog_source: str = BACKLOG_SOURCE) -> float:
    """The message table's export as the stack makes it with `backlogSnapshot=backlog_source`."""
    return message_table_export_per_million(usage, MESSAGE_TABLE_EXPORT[backlog_source])


def snapshot_month(queues: int) -> float:
    """The daily backlog snapshot of `queues` queues, $ a month: each queue's reads (on demand) and its share of the
    function's time, a run and an S3 PUT a day."""
    runs = SNAPSHOTS_A_MONTH
    reads = queues * SNAPSHOT_READ_UNITS_PER_QUEUE * cost_model.READ_UNIT
    compute = queues * SNAPSHOT_CPU_SECONDS_PER_QUEUE * SNAPSHOT_MEMORY_MB / 1024 * cost_model.LAMBDA_ARM_GB_SECOND
    return runs * (reads + compute + cost_model.LAMBDA_REQUEST + S3_PUT)


def pitr_per_million(usage: Usage) -> float:
    return cost_model.storage_month(usage) * PITR_GB_MONTH * MILLION


def extras(usage: Usage, observability: Observability, door: str = "http-api") -> dict[str, float]:
    """$ per million messages of each all-in item beyond the bench's parts, at front door `door`."""
    return {
        "CloudWatch Logs": logs_per_million(usage, observability, door),
        "ALB access logs (S3)": alb_logs_per_million(usage, observability) if door == "alb" else 0.0,
        "X-Ray": xray_per_million(usage, observability),
        "exports": export_per_million(usage),
        "PITR": pitr_per_million(usage),
    }


def count_resources(template: Mapping[str, Any]) -> dict[str, int]:
    """How many of each CloudFormation resource type a synthesized template makes."""
    counts: dict[str, int] = {}
    for resource in template.get("Resources", {}).values():
        counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
    return counts


def glue_dpus(template: Mapping[str, Any]) -> float:
    """DPUs of the template's Glue jobs (G.1X: one per worker)."""
    dpus = 0.0
    for resource in template.get("Resources", {}).values():
        if resource["Type"] == "AWS::Glue::Job":
            properties = resource["Properties"]
            dpus += float(properties.get("NumberOfWorkers", 0)) * {"G.1X": 1, "G.2X": 2}.get(
                properties.get("WorkerType", "G.1X"), 1
            )
    return dpus


def fixed_month(template: Mapping[str, Any], tracing: bool, sampler_memory_mb: int) -> dict[str, float]:
    """The stack's always-on parts, $ a month, from its synthesized template (the front door's apart)."""
    counts = count_resources(template)
    sampler_seconds = MINUTES_A_MONTH * SAMPLER_RUN_SECONDS
    fixed = {
        f"CloudWatch alarms ({counts.get('AWS::CloudWatch::Alarm', 0)})": counts.get("AWS::CloudWatch::Alarm", 0)
        * ALARM_MONTH,
        "CloudWatch dashboard": counts.get("AWS::CloudWatch::Dashboard", 0) * DASHBOARD_MONTH,
        f"Secrets Manager ({counts.get('AWS::SecretsManager::Secret', 0)} secrets)": counts.get(
            "AWS::SecretsManager::Secret", 0
        )
        * SECRET_MONTH,
        "KMS key (createKmsKey)": counts.get("AWS::KMS::Key", 0) * KMS_KEY_MONTH,
        f"Glue jobs (daily, {glue_dpus(template):g} DPU, {GLUE_RUN_MINUTES} min each, assumed)": glue_dpus(template)
        * GLUE_RUN_MINUTES
        / 60
        * GLUE_DPU_HOUR
        * 30,
        f"metrics sampler (a run a minute, {SAMPLER_RUN_SECONDS:g} s assumed)": MINUTES_A_MONTH
        * cost_model.LAMBDA_REQUEST
        + sampler_seconds * sampler_memory_mb / 1024 * cost_model.LAMBDA_ARM_GB_SECOND,
    }
    if tracing:
        fixed["X-Ray reservoir (1 trace a second)"] = SECONDS_A_MONTH * XRAY_RESERVOIR_PER_SECOND * XRAY_TRACE
    return fixed


def provisioned_minimum_month(
    template: Mapping[str, Any], kept: Mapping[str, tuple[float, float]] | None = None
) -> dict[str, float]:
    """With `-c capacity=provisioned`: what auto-scaling's minimum, the capacity each table and global secondary index
    of the (so synthesized) template is provisioned at before any load, costs beyond the load, $ a month. `kept`:
    the write and read capacity a steady load keeps of a table or index (named as the result is: `table {id}`,
    `index {name} of {id}`; its units consumed / the target utilisation, priced per message): auto-scaling keeps
    the larger of it and the minimum, so only the part of the minimum above the load is a fixed cost (all of it,
    for a table or index without load)."""
    kept = kept or {}
    minimum: dict[str, float] = {}

    def month(name: str, throughput: Mapping[str, Any]) -> float:
        write, read = kept.get(name, (0.0, 0.0))
        return (
            max(0.0, float(throughput["WriteCapacityUnits"]) - write) * cost_model.PROVISIONED_WCU_HOUR
            + max(0.0, float(throughput["ReadCapacityUnits"]) - read) * cost_model.PROVISIONED_RCU_HOUR
        ) * HOURS_A_MONTH

    for name, resource in template.get("Resources", {}).items():
        if resource["Type"] != "AWS::DynamoDB::Table":
            continue
        properties = resource["Properties"]
        if "ProvisionedThroughput" in properties:
            minimum[f"table {name}"] = month(f"table {name}", properties["ProvisionedThroughput"])
        for index in properties.get("GlobalSecondaryIndexes", []):
            if "ProvisionedThroughput" in index:
                key = f"index {index['IndexName']} of {name}"
                minimum[key] = month(key, index["ProvisionedThroughput"])
    return minimum


def message_table_names(template: Mapping[str, Any], index: str) -> tuple[str, str]:
    """The names `provisioned_minimum_month` gives the message table and its ready index (`index`): the table that
    has that index."""
    for name, resource in template.get("Resources", {}).items():
        if resource["Type"] == "AWS::DynamoDB::Table" and any(
            i["IndexName"] == index for i in resource["Properties"].get("GlobalSecondaryIndexes", [])
        ):
            return f"table {name}", f"index {index} of {name}"
    raise LookupError(f"no table with the index {index!r}")


def kept_capacity(usage: Usage, lifecycles_per_second: float, target: float) -> dict[str, tuple[float, float]]:
    """The write and read capacity auto-scaling keeps for the usage's pattern at `lifecycles_per_second`, at the
    `target` utilisation: the message table's and its ready index's (keys "table", "index")."""

    def kept(units: float) -> float:
        return usage.per_message(units) * lifecycles_per_second / target

    return {
        "table": (kept(usage.write_units), kept(usage.read_units - usage.index_read_units)),
        "index": (kept(usage.index_write_units), kept(usage.index_read_units)),
    }


def queue_metrics_month(metrics_per_queue: int) -> float:
    """CloudWatch's bill for one monitored queue's metrics a month (EMF and the sampler's gauges)."""
    return metrics_per_queue * CUSTOM_METRIC_MONTH
