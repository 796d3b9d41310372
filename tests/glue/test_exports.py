"""Finding an export's data files: AWS layout (manifests), moto layout (glob), newest of several, S3."""

from __future__ import annotations

import json
import os
import time

import boto3
import pytest
from moto import mock_aws

from glue_jobs.exports import find_export, parse_export_time
from glue_jobs.runner import read_export
from glue_jobs.schemas import QUEUE_EVENT_SCHEMA
from glue_jobs.transforms import queue_hourly
from tests.glue.helpers import T0
from tests.support.export_generator import ddb_item, write_export

LINES = [ddb_item({"pk": f"p{i}", "sk": "s"}) for i in range(5)]


def test_parse_export_time():
    assert parse_export_time("2026-11-25T00:00:01.250Z") == T0 + 1_250


def test_aws_layout_reads_the_manifests(tmp_path):
    root = write_export(tmp_path, LINES, export_time_ms=T0 + 7, layout="aws", files=3)
    (root / "data" / "not-in-manifest.json.gz").write_bytes(b"")  # only listed files are read
    export = find_export(str(tmp_path))
    assert export.root == root.as_posix()
    written = sorted(p.as_posix() for p in (root / "data").glob("*.json.gz") if p.name != "not-in-manifest.json.gz")
    assert len(written) == 3
    assert sorted(export.data_files) == written
    assert export.export_time_ms == T0 + 7  # manifest-summary.json exportTime


def test_moto_layout_globs_data_and_takes_the_file_time(tmp_path):
    root = write_export(tmp_path, LINES, export_time_ms=T0, layout="moto", export_id="01795564800000-abc")
    data_file = root / "data" / "01795564800000-abc.gz"
    os.utime(data_file, (1_700_000_000, 1_700_000_000))
    export = find_export(str(tmp_path))
    assert export.data_files == [data_file.as_posix()]
    assert export.export_time_ms == 1_700_000_000_000  # no manifest: the newest data file's mtime


def test_the_export_folder_itself_is_accepted(tmp_path):
    root = write_export(tmp_path, LINES, export_time_ms=T0, layout="moto")
    assert find_export(str(root)).root == root.as_posix()


def test_newest_of_several_exports(tmp_path):
    write_export(tmp_path, LINES, export_time_ms=T0, export_id="old")
    write_export(tmp_path, LINES, export_time_ms=T0 + 1, export_id="new")
    assert find_export(str(tmp_path)).root.endswith("AWSDynamoDB/new")


def test_no_export(tmp_path):
    (tmp_path / "AWSDynamoDB" / "x").mkdir(parents=True)
    with pytest.raises(FileNotFoundError):
        find_export(str(tmp_path))


def test_s3_prefix(tmp_path):
    root = write_export(tmp_path / "local", LINES, export_time_ms=T0 + 9, export_id="e1", files=2)
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="exports")
        for path in root.rglob("*"):
            if path.is_file():
                key = "log/" + path.relative_to(tmp_path / "local").as_posix()
                s3.put_object(Bucket="exports", Key=key, Body=path.read_bytes())
        export = find_export("s3://exports/log", s3_client=s3)
    assert export.root == "s3://exports/log/AWSDynamoDB/e1"
    assert len(export.data_files) == 2
    assert all(f.startswith("s3://exports/log/AWSDynamoDB/e1/data/") for f in export.data_files)
    assert export.export_time_ms == T0 + 9


def test_an_export_written_by_moto_reads_end_to_end(spark, tmp_path):
    # What the local runtime produces: moto's ExportTableToPointInTime of a log table, copied from its S3.
    # Two sends at T0 + 1 s and T0 + 2 s and a receive at 1 h + 1 s; a B and an L attribute the schema skips.
    key = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    types = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="local-exports")
        table = dynamodb.create_table(
            TableName="log", KeySchema=key, AttributeDefinitions=types, BillingMode="PAY_PER_REQUEST"
        )["TableDescription"]
        dynamodb.update_continuous_backups(
            TableName="log", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        for n, (event, at) in enumerate([("send", 1_000), ("send", 2_000), ("receive", 3_601_000)]):
            item = {"pk": "1#queue#q", "sk": f"{T0 + at:013d}#{n}", "event": event, "time": T0 + at, "z": b"\x00"}
            item["l"] = ["x"]
            dynamodb.put_item(TableName="log", Item=json.loads(ddb_item(item))["Item"])
        arn = dynamodb.export_table_to_point_in_time(
            TableArn=table["TableArn"], S3Bucket="local-exports", S3Prefix="log", ExportFormat="DYNAMODB_JSON"
        )["ExportDescription"]["ExportArn"]
        for _ in range(200):  # moto writes the export in a thread: wait (at most 10 s) until it is done
            status = dynamodb.describe_export(ExportArn=arn)["ExportDescription"]["ExportStatus"]
            if status != "IN_PROGRESS":
                break
            time.sleep(0.05)
        assert status == "COMPLETED"
        for obj in s3.list_objects_v2(Bucket="local-exports")["Contents"]:
            target = tmp_path / obj["Key"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(s3.get_object(Bucket="local-exports", Key=obj["Key"])["Body"].read())
    export = find_export(str(tmp_path / "log"))
    assert len(export.data_files) == 1 and export.data_files[0].endswith(".gz")
    rows = queue_hourly(read_export(spark, export, QUEUE_EVENT_SCHEMA)).collect()
    assert sorted((r["hour"], r["sends"], r["receives"]) for r in rows) == [(0, 2, 0), (1, 0, 1)]
