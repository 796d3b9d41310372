"""Analytics jobs: rows/s on local Spark (local[2]) against DuckDB computing the same aggregates
on the same export files, at 1 M and 10 M log records.

    .venv/bin/python -m bench.analytics [--sizes 1000000,10000000] [--work DIR]

For each size: the exports are generated (timed separately, `tests.support.export_generator`), then each
job runs once on Spark (read with the explicit schema, transform, write Parquet) and once on DuckDB
(`read_json` with explicit columns, the same SQL aggregates, `COPY ... TO` Parquet), both with 2
threads. rows/s = input items / wall seconds. The outputs are compared row by row (counts exactly,
percentiles to 1e-9 relative). Writes bench/results/analytics.md.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import md_table, write_result
from glue_jobs.exports import find_export
from glue_jobs.runner import JobInputs, build, local_spark, write
from glue_jobs.schemas import MESSAGE_ATTRIBUTES, META_ATTRIBUTES, QUEUE_EVENT_ATTRIBUTES, TOPIC_EVENT_ATTRIBUTES
from tests.support.export_generator import generate

EXPORT_TIME = 1_795_600_800_000
JOBS = ["queue_hourly", "subscription_hourly", "poison_messages", "backlog_snapshot"]
KEYS = {
    "queue_hourly": ["account", "queue", "date", "hour"],
    "subscription_hourly": ["account", "topic", "subscription", "date", "hour"],
    "poison_messages": ["account", "queue", "message_id"],
    "backlog_snapshot": ["account", "queue"],
}


def duck_source(files: list[str], attributes: dict[str, str]) -> str:
    """read_json over the export's data files with explicit columns (no sampling), flattened like Spark's."""
    struct = ", ".join(f'"{name}" STRUCT("{kind}" VARCHAR)' for name, kind in attributes.items())
    listed = ", ".join(f"'{f}'" for f in files)
    columns = ", ".join(
        f'CAST("Item"."{n}"."N" AS BIGINT) AS "{n}"' if k == "N" else f'"Item"."{n}"."S" AS "{n}"'
        for n, k in attributes.items()
    )
    reader = (
        f"read_json([{listed}], format = 'newline_delimited', compression = 'gzip', "
        f"columns = {{'Item': 'STRUCT({struct.replace(chr(39), chr(39) * 2)})'}})"
    )
    return f"(SELECT {columns} FROM {reader})"


def log_events_sql(files: list[str], attributes: dict[str, str], kind: str) -> str:
    """The events of one kind, once per (pk, sk), with account, resource, date and hour (as the Spark jobs)."""
    return f"""
    (SELECT *, split_part(pk, '#', 1) AS _account, split_part(pk, '#', 3) AS _resource,
            strftime(DATE '1970-01-01' + CAST(time // 86400000 AS INTEGER), '%Y-%m-%d') AS date,
            CAST((time // 3600000) % 24 AS INTEGER) AS hour
     FROM (SELECT DISTINCT ON (pk, sk) * FROM {duck_source(files, attributes)}
           WHERE pk IS NOT NULL AND sk IS NOT NULL AND split_part(pk, '#', 2) = '{kind}'))
    """


def duck_sql(job: str, inputs: dict[str, list[str]], snapshot_ms: int) -> str:
    q = "[0.5, 0.95, 0.99]"
    if job == "queue_hourly":
        return f"""
        SELECT account, queue, hour, sends, receives, deletes, redeliveries, expired,
               f[1] AS time_to_first_receive_ms_p50, f[2] AS time_to_first_receive_ms_p95, f[3] AS time_to_first_receive_ms_p99,
               d[1] AS time_in_queue_ms_p50, d[2] AS time_in_queue_ms_p95, d[3] AS time_in_queue_ms_p99, date
        FROM (SELECT _account AS account, _resource AS queue, date, hour,
                count(*) FILTER (WHERE event = 'send') AS sends,
                count(*) FILTER (WHERE event = 'receive') AS receives,
                count(*) FILTER (WHERE event = 'delete') AS deletes,
                count(*) FILTER (WHERE event = 'receive' AND dequeue_count > 1) AS redeliveries,
                count(*) FILTER (WHERE event = 'expire') AS expired,
                quantile_cont(time - enqueue_time, {q}) FILTER (WHERE event = 'receive' AND dequeue_count = 1) AS f,
                quantile_cont(time - enqueue_time, {q}) FILTER (WHERE event = 'delete') AS d
              FROM {log_events_sql(inputs["log"], QUEUE_EVENT_ATTRIBUTES, "queue")} GROUP BY ALL)
        """
    if job == "subscription_hourly":
        success = "event = 'push' AND outcome = 'success'"
        return f"""
        SELECT account, topic, subscription, hour, deliveries, first_try_successes, retries, drops,
               l[1] AS delivery_latency_ms_p50, l[2] AS delivery_latency_ms_p95, l[3] AS delivery_latency_ms_p99, date
        FROM (SELECT _account AS account, _resource AS topic, subscription, date, hour,
                count(DISTINCT message_id) FILTER (WHERE {success}) AS deliveries,
                count(*) FILTER (WHERE {success} AND attempt = 1) AS first_try_successes,
                count(*) FILTER (WHERE event = 'push' AND attempt > 1) AS retries,
                count(*) FILTER (WHERE event = 'drop') AS drops,
                quantile_cont(latency_ms, {q}) FILTER (WHERE {success}) AS l
              FROM {log_events_sql(inputs["log"], TOPIC_EVENT_ATTRIBUTES, "topic")}
              WHERE event IN ('push', 'drop') AND subscription IS NOT NULL GROUP BY ALL)
        """
    if job == "poison_messages":
        return f"""
        SELECT _account AS account, _resource AS queue, message_id, max(dequeue_count) AS max_dequeue_count,
               min(enqueue_time) AS enqueue_time, max(time) FILTER (WHERE event = 'receive') AS last_receive_time,
               count(*) FILTER (WHERE event = 'expire') > 0 AS expired, {snapshot_ms} AS snapshot_time,
               strftime(DATE '1970-01-01' + CAST({snapshot_ms} // 86400000 AS INTEGER), '%Y-%m-%d') AS date
        FROM {log_events_sql(inputs["log"], QUEUE_EVENT_ATTRIBUTES, "queue")}
        GROUP BY ALL HAVING max(dequeue_count) >= 5 AND count(*) FILTER (WHERE event = 'delete') = 0
        """
    return f"""
    SELECT split_part(m.pk, '#', 1) AS account, m.sk AS queue, m.queue_id,
           coalesce(b.active, 0) AS active, coalesce(b.inactive, 0) AS inactive, coalesce(b.delayed, 0) AS delayed,
           {snapshot_ms} - b.oldest AS oldest_message_age_ms, {snapshot_ms} AS snapshot_time,
           strftime(DATE '1970-01-01' + CAST({snapshot_ms} // 86400000 AS INTEGER), '%Y-%m-%d') AS date
    FROM {duck_source(inputs["meta"], META_ATTRIBUTES)} m
    LEFT JOIN (SELECT pk AS queue_id,
                 count(*) FILTER (WHERE v <= {snapshot_ms} OR v IS NULL) AS active,
                 count(*) FILTER (WHERE v > {snapshot_ms} AND coalesce(d, 0) > 0) AS inactive,
                 count(*) FILTER (WHERE v > {snapshot_ms} AND coalesce(d, 0) <= 0) AS delayed,
                 min(e) AS oldest
               FROM {duck_source(inputs["messages"], MESSAGE_ATTRIBUTES)}
               WHERE starts_with(sk, 'L') AND (x IS NULL OR x * 1000 > {snapshot_ms}) GROUP BY pk) b
      ON b.queue_id = m.queue_id
    WHERE ends_with(m.pk, '#queue') AND m.queue_id IS NOT NULL
    """


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9))
    return str(a) == str(b)


def agree(spark_rows: list[dict], duck_rows: list[dict], keys: list[str]) -> bool:
    def keyed(rows: list[dict]) -> dict[tuple, dict]:
        return {tuple(str(r[k]) for k in keys): r for r in rows}

    left, right = keyed(spark_rows), keyed(duck_rows)
    if left.keys() != right.keys() or len(left) != len(spark_rows):
        return False
    return all(same(row[c], right[k][c]) for k, row in left.items() for c in row)


def timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def run_size(spark: Any, duck: Any, work: Path, records: int, repeats: int) -> tuple[list[list[Any]], dict[str, Any]]:
    """Each job `repeats` times on Spark and on DuckDB, alternating; the outputs of the last runs compared."""
    exports = work / f"exports-{records}"
    load_before = os.getloadavg()[0]
    counts: dict[str, int] = {}
    generation = timed(lambda: counts.update(generate(exports, records, export_time_ms=EXPORT_TIME)))
    files = {name: find_export(str(exports / name)).data_files for name in ("log", "messages", "meta")}
    inputs = JobInputs(log=str(exports / "log"), messages=str(exports / "messages"), meta=str(exports / "meta"))
    rows = []
    for job in JOBS:
        scanned = counts["messages"] + counts["meta"] if job == "backlog_snapshot" else counts["log"]
        out, duck_out = work / f"spark-{records}" / job, work / f"duck-{records}" / job
        duck_out.parent.mkdir(parents=True, exist_ok=True)
        copy = f"COPY ({duck_sql(job, files, EXPORT_TIME)}) TO '{duck_out}' (FORMAT parquet, PARTITION_BY (date), OVERWRITE)"
        spark_s, duck_s = [], []
        for _ in range(repeats):
            spark_s.append(timed(lambda job=job, out=out: write(build(spark, job, inputs), job, str(out))))
            duck_s.append(timed(lambda copy=copy: duck.execute(copy)))
        spark_rows = [r.asDict() for r in spark.read.parquet(str(out)).collect()]
        relation = duck.sql(f"SELECT * FROM read_parquet('{duck_out}/**/*.parquet', hive_partitioning = true)")
        duck_rows = [dict(zip(relation.columns, values, strict=True)) for values in relation.fetchall()]
        ok = agree(spark_rows, duck_rows, KEYS[job])
        rows.append([job, scanned, spark_s, duck_s, len(spark_rows), ok])
        runs = f"spark {' '.join(f'{t:.1f}' for t in spark_s)} s, duckdb {' '.join(f'{t:.1f}' for t in duck_s)} s"
        print(f"{records:>10,} {job:<20} {runs}  rows {len(spark_rows)}  agree {ok}", flush=True)
    shutil.rmtree(exports)
    info = {"generation": generation, "counts": counts, "load": (load_before, os.getloadavg()[0])}
    return rows, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="log records per run, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each job per engine (median reported)")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one, removed after)")
    args = parser.parse_args()
    import duckdb

    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="mns-analytics-"))
    spark = local_spark(cores=2, shuffle_partitions=4)
    spark.sparkContext.setLogLevel("ERROR")
    duck = duckdb.connect()
    duck.execute("SET threads = 2")
    results: dict[int, tuple] = {}
    try:
        run_size(spark, duck, work / "warmup", 200_000, 1)  # JVM and code paths warm; not reported
        for size in sizes:
            results[size] = run_size(spark, duck, work, size, args.repeats)
    finally:
        spark.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    body = f"Each job run {args.repeats} times per engine (alternating Spark and DuckDB); times are medians.\n\n"
    write_result(
        "analytics",
        "Analytics jobs: local Spark vs DuckDB on the same DynamoDB exports",
        body + report(results) + METHOD,
    )


METHOD = """

## How it is measured

- Same inputs for both engines: the generated exports in the AWS layout (log: 8 gzip data files;
  messages: 2; meta: 1), read by Spark with the jobs' explicit schemas and by DuckDB with
  `read_json(..., columns = {...})` over the same attributes; no inference pass on either side.
  Both write Parquet partitioned by `date`; both times include planning and the write.
- Spark: `local[2]`, 4 shuffle partitions, driver 3 GB, one JVM kept across runs (a 200,000-record
  warm-up run first, not reported). DuckDB: `SET threads = 2`, in-process.
- "outputs agree": every output row of Spark and DuckDB matched (counts exactly, percentiles to 1e-9
  relative), so the two compute the same aggregates.
- Rows/s = items read / median seconds. The backlog job reads the message and meta exports (records / 10
  leases, plus body items), not the log.
- The machine may be shared by other work: the load average before and after each size is listed.
"""


def report(results: dict[int, tuple]) -> str:
    table = []
    for size, (rows, _) in results.items():
        for job, scanned, spark_runs, duck_runs, out_rows, ok in rows:
            spark_s, duck_s = statistics.median(spark_runs), statistics.median(duck_runs)
            table.append(
                [
                    f"{size:,}",
                    job,
                    f"{scanned:,}",
                    f"{spark_s:.1f}",
                    f"{scanned / spark_s:,.0f}",
                    f"{duck_s:.1f}",
                    f"{scanned / duck_s:,.0f}",
                    f"{spark_s / duck_s:.1f}x",
                    " / ".join(f"{t:.1f}" for t in spark_runs),
                    " / ".join(f"{t:.1f}" for t in duck_runs),
                    f"{out_rows:,}",
                    "yes" if ok else "NO",
                ]
            )
    headers = ["log records", "job", "items read", "Spark s", "Spark rows/s", "DuckDB s", "DuckDB rows/s"]
    headers += ["Spark/DuckDB time", "Spark runs s", "DuckDB runs s", "output rows", "outputs agree"]
    lines = [md_table(headers, table), ""]
    lines.append(
        "| log records | generation s | log items | message items | meta items | load avg (1 min) before / after |"
    )
    lines.append("|---|---|---|---|---|---|")
    for size, (_, info) in results.items():
        counts, load = info["counts"], info["load"]
        lines.append(
            f"| {size:,} | {info['generation']:.1f} | {counts['log']:,} | {counts['messages']:,} | {counts['meta']:,} "
            f"| {load[0]:.2f} / {load[1]:.2f} |"
        )
    sizes = sorted(results)
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        lines += ["", f"Time ratio {large:,} / {small:,} records (x{large / small:.0f} data), medians:", ""]
        for i, job in enumerate(JOBS):
            s_small, s_large = results[small][0][i], results[large][0][i]
            spark_ratio = statistics.median(s_large[2]) / statistics.median(s_small[2])
            duck_ratio = statistics.median(s_large[3]) / statistics.median(s_small[3])
            lines.append(f"- {job}: Spark {spark_ratio:.1f}x, DuckDB {duck_ratio:.1f}x")
    print("\n".join(lines))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
