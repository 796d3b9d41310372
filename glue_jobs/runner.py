"""Read an export, run one transform, write Parquet, optionally register the table: shared by the
Glue entry scripts (`glue_jobs/jobs/`) and the local pipeline. No `awsglue` here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from glue_jobs import transforms
from glue_jobs.exports import Export, find_export, find_snapshot
from glue_jobs.schemas import BACKLOG_SCHEMA, MESSAGE_SCHEMA, META_SCHEMA, QUEUE_EVENT_SCHEMA, TOPIC_EVENT_SCHEMA

# job name -> the partition columns of its output table
PARTITIONS: dict[str, list[str]] = {
    "queue_hourly": ["date"],
    "subscription_hourly": ["date"],
    "poison_messages": ["date", "snapshot_time"],
    "backlog_snapshot": ["date", "snapshot_time"],
}


def read_export(spark: SparkSession, export: Export, schema: StructType) -> DataFrame:
    """One scan of the export's data files with an explicit schema (gzip is recognised by the file suffix)."""
    return spark.read.schema(schema).json(export.data_files)


@dataclass(frozen=True)
class JobInputs:
    log: str | None = None  # location of the log table export
    messages: str | None = None  # location of the message table export
    meta: str | None = None  # location of the meta table export
    backlog: str | None = None  # location of the backlog snapshots (read instead of the message and meta exports)
    snapshot_ms: int | None = None  # overrides the export time of the message (or log) export
    poison_threshold: int = transforms.DEFAULT_POISON_THRESHOLD
    log_ttl_hours: int | None = None  # hourly jobs: write only days TTL cannot have thinned (None: all days)


def _required(location: str | None, what: str) -> str:
    if not location:
        raise ValueError(f"this job needs the {what} export location (the backlog snapshot: the backlog location)")
    return location


def build(spark: SparkSession, job: str, inputs: JobInputs, s3_client: Any = None) -> DataFrame:
    """The output DataFrame of `job` (lazy: nothing is read until it is written)."""
    if job in ("queue_hourly", "subscription_hourly", "poison_messages"):
        log = find_export(_required(inputs.log, "log"), s3_client)
        items = read_export(spark, log, TOPIC_EVENT_SCHEMA if job == "subscription_hourly" else QUEUE_EVENT_SCHEMA)
        if job in ("queue_hourly", "subscription_hourly"):
            hourly = transforms.queue_hourly(items) if job == "queue_hourly" else transforms.subscription_hourly(items)
            if inputs.log_ttl_hours is None:
                return hourly
            return transforms.drop_days_ttl_may_have_thinned(hourly, log.export_time_ms, inputs.log_ttl_hours)
        snapshot_ms = inputs.snapshot_ms if inputs.snapshot_ms is not None else log.export_time_ms
        return transforms.poison_messages(items, snapshot_ms, inputs.poison_threshold)
    if job == "backlog_snapshot" and inputs.backlog:
        snapshot = find_snapshot(inputs.backlog, s3_client)
        snapshot_ms = inputs.snapshot_ms if inputs.snapshot_ms is not None else snapshot.taken_ms
        return transforms.backlog_from_counts(spark.read.schema(BACKLOG_SCHEMA).json(snapshot.path), snapshot_ms)
    if job == "backlog_snapshot":
        messages = find_export(_required(inputs.messages, "messages"), s3_client)
        meta = find_export(_required(inputs.meta, "meta"), s3_client)
        snapshot_ms = inputs.snapshot_ms if inputs.snapshot_ms is not None else messages.export_time_ms
        return transforms.backlog_snapshot(
            read_export(spark, messages, MESSAGE_SCHEMA), read_export(spark, meta, META_SCHEMA), snapshot_ms
        )
    raise ValueError(f"unknown job {job!r}; known: {', '.join(PARTITIONS)}")


def write(frame: DataFrame, job: str, output_path: str) -> None:
    """Parquet partitioned by date; only the partitions this run produces are replaced (dynamic overwrite)."""
    (
        frame.write.mode("overwrite")
        .option("partitionOverwriteMode", "dynamic")
        .partitionBy(*PARTITIONS[job])
        .parquet(output_path)
    )


def register_table(
    spark: SparkSession, database: str, table: str, output_path: str, schema: StructType, job: str
) -> None:
    """Create or update the catalog table over the Parquet folder: idempotent, and independent of any write.

    The table's columns are the job's output schema, so a run that writes no row (no poison message yet), or
    fails before writing, still leaves the table. A table whose columns differ from the schema (an older
    version of the job) is dropped and created again; it is external (LOCATION), so its files stay. On Glue
    (`--enable-glue-datacatalog`) Spark's catalog is the Glue Data Catalog, so this registers an
    Athena-queryable table (Spark stores Parquet data source tables in Hive-compatible form)."""
    columns = ", ".join(f"`{field.name}` {field.dataType.simpleString()}" for field in schema.fields)
    partitions = ", ".join(f"`{name}`" for name in PARTITIONS[job])
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    if spark.catalog.tableExists(f"{database}.{table}"):
        registered = {(c.name, c.dataType) for c in spark.catalog.listColumns(f"{database}.{table}")}
        if registered != {(field.name, field.dataType.simpleString()) for field in schema.fields}:
            spark.sql(f"DROP TABLE `{database}`.`{table}`")
    spark.sql(
        f"CREATE TABLE IF NOT EXISTS `{database}`.`{table}` ({columns}) USING PARQUET "
        f"PARTITIONED BY ({partitions}) LOCATION '{output_path}'"
    )


def add_partitions(spark: SparkSession, database: str, table: str) -> None:
    """Register the partitions written since the last run."""
    spark.sql(f"MSCK REPAIR TABLE `{database}`.`{table}`")


def run(
    spark: SparkSession,
    job: str,
    inputs: JobInputs,
    output_path: str,
    database: str | None = None,
    table: str | None = None,
    s3_client: Any = None,
) -> StructType:
    """Build, register (with `database`, before writing) and write one job's output; its schema."""
    frame = build(spark, job, inputs, s3_client)
    if database:
        register_table(spark, database, table or job, output_path, frame.schema, job)
    write(frame, job, output_path)
    if database:
        add_partitions(spark, database, table or job)
    return frame.schema


def local_spark(cores: int = 2, shuffle_partitions: int = 4) -> SparkSession:
    """A plain local SparkSession (UTC, no UI), the way tests, the local pipeline and the benchmark run."""
    return (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("mns-analytics")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "3g")
        .getOrCreate()
    )
