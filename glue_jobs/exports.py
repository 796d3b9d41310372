"""Find the data files of a DynamoDB export, on a local folder or under an s3:// prefix.

Two layouts are accepted:

- AWS (ExportTableToPointInTime): `AWSDynamoDB/<export-id>/manifest-summary.json`,
  `manifest-files.json` (one JSON object per line naming a `dataFileS3Key`) and `data/*.json.gz`;
- moto: `AWSDynamoDB/<export-id>/data/<uuid>.gz` and no manifest, so the data files are globbed.

A location may be the export folder itself (`.../AWSDynamoDB/<export-id>`) or any folder above it.
When it holds several exports, the newest one is used (by `exportTime` in its manifest summary,
else by the newest data file): a job reads exactly one export.

The backlog snapshot's objects (`<location>/<epoch ms>.json.gz`, one a day) are found the same way: the newest.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_GLOB = "AWSDynamoDB/*/data/*"
SNAPSHOT_SUFFIX = ".json.gz"  # the backlog snapshot's objects: `<epoch ms>.json.gz` (`mnsd.monitoring.snapshot`)


@dataclass(frozen=True)
class StoredFile:
    path: str
    mtime_ms: int


@dataclass(frozen=True)
class Export:
    root: str  # the `.../AWSDynamoDB/<export-id>` folder
    data_files: list[str]
    export_time_ms: int  # manifest-summary.json `exportTime`, else the newest data file's modification time


class LocalFiles:
    def list(self, location: str) -> list[StoredFile]:
        base = Path(location)
        if base.is_file():
            return [StoredFile(str(base), int(base.stat().st_mtime * 1000))]
        found = []
        for folder, _dirs, names in os.walk(base):
            for name in names:
                path = Path(folder) / name
                found.append(StoredFile(path.as_posix(), int(path.stat().st_mtime * 1000)))
        return found

    def read_text(self, path: str) -> str:
        return Path(path).read_text(encoding="utf-8")


class S3Files:
    """Listing and small reads under `s3://bucket/prefix` (boto3 is made on first use, never at import)."""

    def __init__(self, client: Any = None) -> None:
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("s3")
        return self._client

    @staticmethod
    def split(location: str) -> tuple[str, str]:
        bucket, _, key = location.removeprefix("s3://").partition("/")
        return bucket, key

    def list(self, location: str) -> list[StoredFile]:
        bucket, prefix = self.split(location)
        prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"  # `exports/log`, not `exports/logs`
        found = []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                found.append(StoredFile(f"s3://{bucket}/{obj['Key']}", int(obj["LastModified"].timestamp() * 1000)))
        return found

    def read_text(self, path: str) -> str:
        bucket, key = self.split(path)
        return self.client.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")


def files_for(location: str, s3_client: Any = None) -> LocalFiles | S3Files:
    return S3Files(s3_client) if location.startswith("s3://") else LocalFiles()


def parse_export_time(text: str) -> int:
    """`2026-11-22T08:00:00.123Z` (manifest-summary.json) -> epoch ms."""
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


def _root_of(data_file: str) -> str:
    return data_file.rsplit("/data/", 1)[0]


def _manifest_data_files(fs: LocalFiles | S3Files, root: str) -> list[str]:
    files = []
    for line in fs.read_text(f"{root}/manifest-files.json").splitlines():
        if line.strip():
            key = json.loads(line)["dataFileS3Key"]
            files.append(f"{root}/data/{key.rsplit('/', 1)[-1]}")
    return files


def _describe(fs: LocalFiles | S3Files, root: str, stored: list[StoredFile]) -> Export:
    names = {f.path for f in stored if f.path.startswith(root + "/")}
    globbed = [f for f in stored if _root_of(f.path) == root and "/data/" in f.path]
    newest_file_ms = max((f.mtime_ms for f in globbed), default=0)
    if f"{root}/manifest-files.json" in names:
        data_files = _manifest_data_files(fs, root)
    else:
        data_files = sorted(f.path for f in globbed)
    export_time_ms = newest_file_ms
    if f"{root}/manifest-summary.json" in names:
        summary = json.loads(fs.read_text(f"{root}/manifest-summary.json"))
        if summary.get("exportTime"):
            export_time_ms = parse_export_time(summary["exportTime"])
    return Export(root, data_files, export_time_ms)


@dataclass(frozen=True)
class Snapshot:
    path: str  # the newest `<epoch ms>.json.gz` under the location
    taken_ms: int


def find_snapshot(location: str, s3_client: Any = None) -> Snapshot:
    """The newest backlog snapshot (`<epoch ms>.json.gz`, `mnsd.monitoring.snapshot`) under `location`;
    FileNotFoundError when there is none."""
    found = []
    for stored in files_for(location, s3_client).list(location.rstrip("/")):
        stem = stored.path.rsplit("/", 1)[-1].removesuffix(SNAPSHOT_SUFFIX)
        if stored.path.endswith(SNAPSHOT_SUFFIX) and stem.isdigit():
            found.append(Snapshot(stored.path, int(stem)))
    if not found:
        raise FileNotFoundError(f"no backlog snapshot (<ms>{SNAPSHOT_SUFFIX}) under {location}")
    return max(found, key=lambda snapshot: snapshot.taken_ms)


def find_export(location: str, s3_client: Any = None) -> Export:
    """The newest export under `location` (a folder or s3:// prefix); FileNotFoundError when there is none."""
    fs = files_for(location, s3_client)
    stored = fs.list(location.rstrip("/"))
    data = [f for f in stored if fnmatch.fnmatch(f.path, f"*/{DATA_GLOB}")]
    roots = sorted({_root_of(f.path) for f in data})
    if not roots:
        raise FileNotFoundError(f"no DynamoDB export ({DATA_GLOB}) under {location}")
    exports = [_describe(fs, root, stored) for root in roots]
    return max(exports, key=lambda export: (export.export_time_ms, export.root))
