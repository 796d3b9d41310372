"""Run every analytics job with local pyspark over an export folder and print a summary.

    python -m glue_jobs.local_pipeline --exports DIR --out DIR [--snapshot-time MS] [--poison-threshold N]

`DIR` (--exports) holds one folder per table export, each in the AWS or moto layout:

    DIR/log/AWSDynamoDB/<export-id>/...        the operation-log table (MNS_LOG_TABLE)
    DIR/messages/AWSDynamoDB/<export-id>/...   the message table (MNS_MESSAGE_TABLE)
    DIR/meta/AWSDynamoDB/<export-id>/...       the meta table (MNS_META_TABLE)
    DIR/backlog/<epoch ms>.json.gz             the backlog snapshot (each queue's counts)

The backlog snapshot is read from `backlog/` when it holds one, else from the message and meta exports.
A job whose export is missing is skipped. Parquet lands in `--out/<job>/date=.../`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pyspark.sql import SparkSession

from glue_jobs.exports import find_export, find_snapshot
from glue_jobs.runner import JobInputs, local_spark, run

NEEDS = {
    "queue_hourly": ("log",),
    "subscription_hourly": ("log",),
    "poison_messages": ("log",),
    "backlog_snapshot": ("backlog",),  # else ("messages", "meta"): `needs`
}
EXPORTED_BACKLOG = ("messages", "meta")


def has_export(folder: Path) -> bool:
    try:
        (find_snapshot if folder.name == "backlog" else find_export)(str(folder))
    except FileNotFoundError:
        return False
    return True


def needs(job: str, exports: Path) -> tuple[str, ...]:
    """The inputs `job` reads from `exports`: the backlog snapshot from `backlog/` when it holds one."""
    if job == "backlog_snapshot" and not has_export(exports / "backlog"):
        return EXPORTED_BACKLOG
    return NEEDS[job]


def run_all(spark: SparkSession, exports: Path, out: Path, inputs: JobInputs) -> list[list[str]]:
    """Run each job whose exports exist; one summary row per job: job, output rows, seconds, path."""
    rows = []
    for job in NEEDS:
        missing = [name for name in needs(job, exports) if not has_export(exports / name)]
        if missing:
            rows.append([job, "skipped", "-", f"no {', '.join(missing)} export"])
            continue
        started = time.perf_counter()
        schema = run(spark, job, inputs, str(out / job))
        seconds = time.perf_counter() - started
        # The schema given: a job that wrote no row (no poison message) leaves no file to infer it from.
        count = spark.read.schema(schema).parquet(str(out / job)).count()
        rows.append([job, str(count), f"{seconds:.1f}", str(out / job)])
    return rows


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", required=True, type=Path, help="folder holding log/, messages/, meta/")
    parser.add_argument("--out", required=True, type=Path, help="folder for the Parquet tables")
    parser.add_argument("--snapshot-time", type=int, help="epoch ms; default: each export's own time")
    parser.add_argument("--poison-threshold", type=int, default=5)
    args = parser.parse_args(argv)
    inputs = JobInputs(
        log=str(args.exports / "log"),
        messages=str(args.exports / "messages"),
        meta=str(args.exports / "meta"),
        backlog=str(args.exports / "backlog") if has_export(args.exports / "backlog") else None,
        snapshot_ms=args.snapshot_time,
        poison_threshold=args.poison_threshold,
    )
    spark = local_spark()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        rows = run_all(spark, args.exports, args.out, inputs)
    finally:
        spark.stop()
    print(format_table(["job", "output rows", "seconds", "output"], rows))


if __name__ == "__main__":
    main()
