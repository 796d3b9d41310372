"""The whole local pipeline on a generated export, checked against plain-Python counts of the same
files; one scan per job; catalog registration; the Glue entry scripts import without awsglue."""

from __future__ import annotations

import gzip
import importlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from glue_jobs.exports import find_export
from glue_jobs.jobs.entry import inputs_from, present_options
from glue_jobs.local_pipeline import NEEDS, run_all
from glue_jobs.runner import JobInputs, build, run
from tests.support.export_generator import ddb_item, generate, write_export

EXPORT_TIME = 1_795_600_800_000


def export_lines(folder: Path) -> list[dict]:
    items = []
    for path in find_export(str(folder)).data_files:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            items += [json.loads(line)["Item"] for line in lines if line.strip()]
    return items


def expected_log_figures(folder: Path) -> tuple[Counter, int]:
    """Event counts of queue events (deduplicated on pk/sk) and the number of poison messages (N = 5)."""
    events = {(i["pk"]["S"], i["sk"]["S"]): i for i in export_lines(folder)}
    counts: Counter = Counter()
    max_count: dict[tuple, int] = defaultdict(int)
    deleted = set()
    for item in events.values():
        if item["kind"]["S"] != "queue":
            continue
        name, key = item["event"]["S"], (item["pk"]["S"], item["message_id"]["S"])
        counts[name] += 1
        dequeues = int(item["dequeue_count"]["N"]) if "dequeue_count" in item else 0
        if name == "receive" and dequeues > 1:
            counts["redelivery"] += 1
        max_count[key] = max(max_count[key], dequeues)
        if name == "delete":
            deleted.add(key)
    poison = sum(1 for key, top in max_count.items() if top >= 5 and key not in deleted)
    return counts, poison


def expected_backlog_total(folder: Path) -> int:
    queue_ids = {i["queue_id"]["S"] for i in export_lines(folder / "meta") if i["pk"]["S"].endswith("#queue")}
    return sum(
        1
        for i in export_lines(folder / "messages")
        if i["sk"]["S"].startswith("L") and i["pk"]["S"] in queue_ids and int(i["x"]["N"]) * 1000 > EXPORT_TIME
    )


@pytest.fixture(scope="module")
def pipeline(spark, tmp_path_factory):
    exports = tmp_path_factory.mktemp("exports")
    generate(exports, 4_000, queues=3, topics=2, subscriptions=2, messages=300, files=2, export_time_ms=EXPORT_TIME)
    out = tmp_path_factory.mktemp("out")
    inputs = JobInputs(log=str(exports / "log"), messages=str(exports / "messages"), meta=str(exports / "meta"))
    summary = run_all(spark, exports, out, inputs)
    return exports, out, inputs, summary


def totals(spark, path: Path, columns: list[str]) -> dict[str, int]:
    row = spark.read.parquet(str(path)).selectExpr(*(f"sum({c}) AS {c}" for c in columns)).first()
    return row.asDict()


def test_queue_hourly_matches_plain_python_counts(spark, pipeline):
    exports, out, _, _ = pipeline
    counts, _ = expected_log_figures(exports / "log")
    got = totals(spark, out / "queue_hourly", ["sends", "receives", "deletes", "redeliveries", "expired"])
    assert got == {
        "sends": counts["send"],
        "receives": counts["receive"],
        "deletes": counts["delete"],
        "redeliveries": counts["redelivery"],
        "expired": counts["expire"],
    }
    assert counts["send"] > 100 and counts["redelivery"] > 0 and counts["expire"] > 0  # the data exercises each


def test_poison_and_backlog_match_plain_python(spark, pipeline):
    exports, out, _, _ = pipeline
    _, poison = expected_log_figures(exports / "log")
    assert poison > 0
    assert spark.read.parquet(str(out / "poison_messages")).count() == poison
    backlog = totals(spark, out / "backlog_snapshot", ["active", "inactive", "delayed"])
    assert sum(backlog.values()) == expected_backlog_total(exports)


def test_summary_has_one_row_per_job_and_a_rerun_replaces_its_partitions(spark, pipeline):
    exports, out, inputs, summary = pipeline
    assert [row[0] for row in summary] == list(NEEDS)
    before = {job: spark.read.parquet(str(out / job)).count() for job in NEEDS}
    assert [int(row[1]) for row in summary] == list(before.values())
    run_all(spark, exports, out, inputs)
    assert {job: spark.read.parquet(str(out / job)).count() for job in NEEDS} == before


def test_missing_exports_are_skipped(spark, tmp_path):
    (tmp_path / "log").mkdir()
    summary = run_all(spark, tmp_path, tmp_path / "out", JobInputs(log=str(tmp_path / "log")))
    assert [row[1] for row in summary] == ["skipped"] * 4


def test_a_job_with_no_output_row_still_reports_and_registers_its_table(spark, tmp_path):
    """One send, received once and deleted: no poison message, so poison_messages writes no file."""
    pk = "1000000000000001#queue#orders"
    events = [
        {"pk": pk, "sk": f"{EXPORT_TIME - 3000:013d}#e1", "event": "send", "time": EXPORT_TIME - 3000, "message_id": "m"},
        {"pk": pk, "sk": f"{EXPORT_TIME - 2000:013d}#e2", "event": "receive", "time": EXPORT_TIME - 2000,
         "message_id": "m", "dequeue_count": 1, "enqueue_time": EXPORT_TIME - 3000},
        {"pk": pk, "sk": f"{EXPORT_TIME - 1000:013d}#e3", "event": "delete", "time": EXPORT_TIME - 1000,
         "message_id": "m", "dequeue_count": 1, "enqueue_time": EXPORT_TIME - 3000},
    ]  # fmt: skip
    write_export(tmp_path / "exports" / "log", [ddb_item(e) for e in events], export_time_ms=EXPORT_TIME)
    inputs = JobInputs(log=str(tmp_path / "exports" / "log"))

    summary = {row[0]: row[1] for row in run_all(spark, tmp_path / "exports", tmp_path / "out", inputs)}
    assert summary["poison_messages"] == "0" and summary["queue_hourly"] == "1"

    path = str(tmp_path / "registered")
    run(spark, "poison_messages", inputs, path, database="mns_analytics_empty", table="poison_messages")
    assert spark.sql("SELECT count(*) AS n FROM mns_analytics_empty.poison_messages").first()["n"] == 0
    columns = [c.name for c in spark.catalog.listColumns("mns_analytics_empty.poison_messages")]
    assert "message_id" in columns and columns[-2:] == ["date", "snapshot_time"]


@pytest.mark.parametrize(
    "job, scans", [("queue_hourly", 1), ("subscription_hourly", 1), ("poison_messages", 1), ("backlog_snapshot", 2)]
)
def test_each_job_scans_each_input_once(spark, pipeline, job, scans):
    _, _, inputs, _ = pipeline
    plan = build(spark, job, inputs)._jdf.queryExecution().executedPlan().toString()
    assert plan.count("FileScan json") == scans  # backlog reads the message and the meta export once each


def test_catalog_registration_adds_new_partitions(spark, pipeline, tmp_path):
    exports, _, inputs, _ = pipeline
    path = str(tmp_path / "queue_hourly")
    run(spark, "queue_hourly", inputs, path, database="mns_analytics_test", table="queue_hourly")
    first = spark.sql("SELECT count(*) AS n FROM mns_analytics_test.queue_hourly").first()["n"]
    assert first == spark.read.parquet(path).count() > 0
    # A later export with a new day: the partitions written since are added to the same table.
    later = tmp_path / "later"
    generate(
        later, 500, queues=3, topics=1, subscriptions=1, messages=10, files=1, export_time_ms=EXPORT_TIME + 86_400_000
    )
    run(
        spark,
        "queue_hourly",
        JobInputs(log=str(later / "log")),
        path,
        database="mns_analytics_test",
        table="queue_hourly",
    )
    partitions = {r["partition"] for r in spark.sql("SHOW PARTITIONS mns_analytics_test.queue_hourly").collect()}
    days = {f"date={r['date']}" for r in spark.read.parquet(path).select("date").distinct().collect()}
    assert partitions == days and len(days) >= 2
    assert spark.sql("SELECT count(*) AS n FROM mns_analytics_test.queue_hourly").first()["n"] > first


def test_glue_entry_scripts_import_without_awsglue():
    for job in NEEDS:
        module = importlib.import_module(f"glue_jobs.jobs.{job}")
        assert callable(module.main)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("awsglue")


def test_entry_arguments():
    argv = ["script.py", "--JOB_NAME", "j", "--output_path", "s3://b/o", "--database", "d", "--log_export", "s3://b/l"]
    assert present_options(argv) == ["JOB_NAME", "output_path", "database", "log_export"]
    given = {"log_export": "s3://b/l", "snapshot_time": "1000", "poison_threshold": "7", "log_ttl_hours": "48"}
    inputs = inputs_from(given)
    assert inputs == JobInputs(log="s3://b/l", snapshot_ms=1000, poison_threshold=7, log_ttl_hours=48)
    assert inputs_from({}).poison_threshold == 5


@pytest.mark.parametrize(
    "ttl_hours, days", [(None, {"2026-11-24", "2026-11-25"}), (48, {"2026-11-24", "2026-11-25"}), (12, {"2026-11-25"})]
)
def test_log_ttl_keeps_only_days_ttl_cannot_have_thinned(spark, pipeline, ttl_hours, days):
    # The generated log spans the 24 h before the export time 2026-11-25 10:00 UTC.
    # TTL 12 h: records before 2026-11-24 22:00 may be gone, so 2026-11-24 is not written;
    # TTL 48 h: nothing before 2026-11-23 10:00 may be gone, both days are whole.
    _, _, inputs, _ = pipeline
    for job in ("queue_hourly", "subscription_hourly"):
        frame = build(spark, job, JobInputs(log=inputs.log, log_ttl_hours=ttl_hours))
        assert {r["date"] for r in frame.select("date").distinct().collect()} == days


def test_the_table_is_registered_before_the_write(spark, pipeline, tmp_path, monkeypatch):
    _, _, inputs, _ = pipeline
    from glue_jobs import runner

    def failing_write(frame, job, output_path):
        raise RuntimeError("the write failed")

    monkeypatch.setattr(runner, "write", failing_write)
    with pytest.raises(RuntimeError, match="the write failed"):
        run(spark, "queue_hourly", inputs, str(tmp_path / "t"), database="mns_analytics_first", table="queue_hourly")
    assert spark.catalog.tableExists("mns_analytics_first.queue_hourly")


def test_a_table_registered_with_other_columns_is_updated(spark, pipeline, tmp_path):
    _, _, inputs, _ = pipeline
    path = str(tmp_path / "queue_hourly")
    spark.sql("CREATE DATABASE IF NOT EXISTS mns_analytics_old")
    spark.sql(
        f"CREATE TABLE mns_analytics_old.queue_hourly (queue string, sends bigint, date string) USING PARQUET "
        f"PARTITIONED BY (date) LOCATION '{path}'"
    )
    schema = run(spark, "queue_hourly", inputs, path, database="mns_analytics_old", table="queue_hourly")
    columns = {c.name for c in spark.catalog.listColumns("mns_analytics_old.queue_hourly")}
    assert columns == set(schema.fieldNames()) and len(columns) > 3
    assert spark.sql("SELECT count(*) AS n FROM mns_analytics_old.queue_hourly").first()["n"] > 0
