"""Table exports in the local runtime: what the scheduled ExportTableToPointInTime does on AWS.

`export_tables` exports the operation log, message and meta tables of the embedded backend to its
S3 (moto writes DynamoDB JSON, `AWSDynamoDB/<id>/data/*.gz`, as AWS does, without manifests), then
copies them to a local folder laid out as the analytics jobs read it: `<folder>/{log,messages,meta}/`.
`export_sqlite` writes the same layout from the embedded engine's tables. `write_backlog_snapshot` adds what the
daily snapshot function writes on AWS: every queue's counts, `<folder>/backlog/<epoch ms>.json.gz`.
"""

from __future__ import annotations

import base64
import gzip
import json
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mnsd.ground.clock import Clock
from mnsd.ground.settings import Settings
from mnsd.monitoring.snapshot import take_snapshot
from mnsd.queues.control import QueueControl
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.meta import meta_item
from mnsd.storage.dynamodb.tables.oplog import log_item
from mnsd.storage.sqlite import SqliteStorage

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


def _export_json(value: Any) -> Any:
    """DynamoDB JSON as an export file writes it: binary values base64-encoded."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {key: _export_json(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_export_json(inner) for inner in value]
    return value


def _write_export(folder: Path, items: Iterable[dict[str, Any]]) -> None:
    """One table's export as AWS lays it out: `AWSDynamoDB/<id>/data/<file>.json.gz` of `{"Item": ...}` lines."""
    export_id = uuid.uuid4().hex
    data = folder / "AWSDynamoDB" / export_id / "data"
    data.mkdir(parents=True, exist_ok=True)
    with gzip.open(data / f"{export_id}.json.gz", "wt", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps({"Item": _export_json(item)}) + "\n")


def export_sqlite(storage: SqliteStorage, folder: Path) -> Path:
    """The embedded engine's tables exported in the layout the DynamoDB tables export to."""
    target = folder / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    _write_export(target / "log", map(log_item, storage.log.records()))
    _write_export(target / "messages", (i for m in storage.messages.all_messages() for i in layout.message_items(m)))
    _write_export(target / "meta", (meta_item(p, n, r) for p, n, r in storage.meta.all_records()))
    return target


def write_backlog_snapshot(queues: QueueControl, clock: Clock, folder: Path) -> Path:
    """Every queue's counts as the snapshot function writes them, under `folder/backlog/`."""
    snapshot = take_snapshot(queues, queues.every_queue(), clock)
    path = folder / snapshot.key("backlog")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(snapshot.body())
    return path
