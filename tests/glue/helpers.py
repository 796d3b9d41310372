"""Small hand-built exports for the tests: write records as a DynamoDB export and read them back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from glue_jobs.exports import find_export
from glue_jobs.runner import read_export
from glue_jobs.schemas import MESSAGE_SCHEMA, META_SCHEMA
from tests.support.export_generator import ddb_item, write_export

# 2026-11-25 00:00:00 UTC: the start of a day, so hour h of the tests is T0 + h * HOUR.
T0 = 1_795_564_800_000
HOUR = 3_600_000
DAY = "2026-11-25"


def export_of(
    spark: SparkSession,
    folder: Path,
    records: list[dict[str, Any]],
    schema: Any,
    *,
    export_time_ms: int = T0 + 2 * HOUR,
    layout: str = "aws",
    files: int = 2,
) -> DataFrame:
    """Write `records` as a DynamoDB export (lines dealt round-robin over `files`) and read it back."""
    write_export(folder, (ddb_item(r) for r in records), export_time_ms=export_time_ms, layout=layout, files=files)
    return read_export(spark, find_export(str(folder)), schema)


def rows_by(frame: DataFrame, *keys: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Collected rows keyed by the given columns."""
    return {tuple(row[k] for k in keys): row.asDict() for row in frame.collect()}


def table_exports(
    spark: SparkSession, folder: Path, messages: list[dict[str, Any]], meta: list[dict[str, Any]], export_time_ms: int
) -> tuple[DataFrame, DataFrame]:
    """The message table's and the meta table's exports of these records (the meta one in moto's layout)."""
    return (
        export_of(spark, folder / "messages", messages, MESSAGE_SCHEMA, export_time_ms=export_time_ms),
        export_of(spark, folder / "meta", meta, META_SCHEMA, export_time_ms=export_time_ms, layout="moto"),
    )
