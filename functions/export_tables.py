"""The scheduled export: each analytics table to S3 with ExportTableToPointInTime (full, DynamoDB JSON).

Environment: `MNS_EXPORT_BUCKET`, and `MNS_EXPORT_TABLES` = `label=tableArn,...` (the tables some job reads:
log; with `-c backlogSnapshot=export` messages and meta too, `infra.analytics.exported_tables`). Exports land under
`exports/{label}/AWSDynamoDB/<export-id>/`, where the Glue jobs read the newest one.
"""

from __future__ import annotations

import os
from typing import Any

import boto3

EXPORT_BUCKET = "MNS_EXPORT_BUCKET"
EXPORT_TABLES = "MNS_EXPORT_TABLES"


def export_prefix(label: str) -> str:
    return f"exports/{label}"


def handler(event: dict[str, Any], context: Any, dynamodb: Any = None) -> dict[str, str]:
    dynamodb = dynamodb or boto3.client("dynamodb")
    bucket = os.environ[EXPORT_BUCKET]
    started = {}
    for entry in os.environ[EXPORT_TABLES].split(","):
        label, _, arn = entry.partition("=")
        description = dynamodb.export_table_to_point_in_time(
            TableArn=arn, S3Bucket=bucket, S3Prefix=export_prefix(label), ExportFormat="DYNAMODB_JSON"
        )["ExportDescription"]
        started[label] = description["ExportArn"]
    return started
