"""The shared `main()` of the Glue entry scripts. `awsglue` is imported inside `main()` only, so this
module (and everything in `glue_jobs`) imports with plain pyspark.

Job arguments (Glue passes them as `--name value`):
  required: --JOB_NAME, --output_path (s3:// folder of the table), --database (Data Catalog database)
  optional: --table (default: the job name), --log_export, --messages_export, --meta_export
            (s3:// prefixes holding `AWSDynamoDB/<export-id>/...`), --backlog_export (s3:// prefix of the
            backlog snapshots, `<epoch ms>.json.gz`: read instead of the message and meta exports), --snapshot_time (epoch ms;
            default: the export time), --poison_threshold (default 5), --log_ttl_hours (the log
            table's TTL: the hourly jobs then write only days that TTL cannot have thinned)
"""

from __future__ import annotations

import sys

from glue_jobs.runner import JobInputs, run
from glue_jobs.transforms import DEFAULT_POISON_THRESHOLD

REQUIRED = ["JOB_NAME", "output_path", "database"]
OPTIONAL = [
    "table",
    "log_export",
    "messages_export",
    "meta_export",
    "backlog_export",
    "snapshot_time",
    "poison_threshold",
    "log_ttl_hours",
]


def present_options(argv: list[str]) -> list[str]:
    """getResolvedOptions fails on a missing name, so ask only for the optional ones that were given."""
    return REQUIRED + [name for name in OPTIONAL if f"--{name}" in argv]


def inputs_from(args: dict[str, str]) -> JobInputs:
    return JobInputs(
        log=args.get("log_export"),
        messages=args.get("messages_export"),
        meta=args.get("meta_export"),
        backlog=args.get("backlog_export"),
        snapshot_ms=int(args["snapshot_time"]) if args.get("snapshot_time") else None,
        poison_threshold=int(args.get("poison_threshold") or DEFAULT_POISON_THRESHOLD),
        log_ttl_hours=int(args["log_ttl_hours"]) if args.get("log_ttl_hours") else None,
    )


def main(job: str) -> None:
    from awsglue.context import GlueContext
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, present_options(sys.argv))
    spark = GlueContext(SparkContext.getOrCreate()).spark_session
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    run(spark, job, inputs_from(args), args["output_path"], args["database"], args.get("table") or job)
