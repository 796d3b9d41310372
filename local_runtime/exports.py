"""Table exports in the local runtime: what the scheduled ExportTableToPointInTime does on AWS.

`export_tables` exports the operation log, message and meta tables of the embedded backend to its
S3 (moto writes DynamoDB JSON, `AWSDynamoDB/<id>/data/*.gz`, as AWS does, without manifests), then
copies them to a local folder laid out as the analytics jobs read it: `<folder>/{log,messages,meta}/`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnsd.settings import Settings

BUCKET = "mns-local-exports"


def export_tables(clients: Callable[[str], Any], settings: Settings, folder: Path) -> Path:
    dynamodb, s3 = clients("dynamodb"), clients("s3")
    if BUCKET not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
        s3.create_bucket(Bucket=BUCKET)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = folder / stamp
    for label, table in (
        ("log", settings.log_table),
        ("messages", settings.message_table),
        ("meta", settings.meta_table),
    ):
        arn = dynamodb.describe_table(TableName=table)["Table"]["TableArn"]
        prefix = f"{stamp}/{label}"
        export = dynamodb.export_table_to_point_in_time(
            TableArn=arn, S3Bucket=BUCKET, S3Prefix=prefix, ExportFormat="DYNAMODB_JSON"
        )["ExportDescription"]
        _wait_completed(dynamodb, export["ExportArn"])
        listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/").get("Contents", [])
        for entry in listed:
            path = target / label / entry["Key"][len(prefix) + 1 :]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(s3.get_object(Bucket=BUCKET, Key=entry["Key"])["Body"].read())
    return target


def _wait_completed(dynamodb: Any, arn: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (status := dynamodb.describe_export(ExportArn=arn)["ExportDescription"]["ExportStatus"]) == "IN_PROGRESS":
        if time.monotonic() > deadline:
            raise TimeoutError(f"export {arn} still in progress")
        time.sleep(0.1)
    if status != "COMPLETED":
        raise RuntimeError(f"export {arn} ended {status}")
