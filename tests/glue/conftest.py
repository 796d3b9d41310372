"""One local SparkSession for the whole tests/glue run (per xdist worker), and small export builders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from bench.export_generator import ddb_item, write_export
from glue_jobs.exports import find_export
from glue_jobs.runner import read_export

# 2026-11-25 00:00:00 UTC: the start of a day, so hour h of the tests is T0 + h * HOUR.
T0 = 1_795_564_800_000
HOUR = 3_600_000
DAY = "2026-11-25"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    session = (
        SparkSession.builder.master("local[1]")
        .appName("tests-glue")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


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
