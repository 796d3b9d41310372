"""The backlog snapshot's Lambda handler, run daily beside the table exports (`infra.analytics.BacklogSnapshots`):
every queue's counts (`mnsd.monitoring.snapshot`) as one gzipped JSON lines object, `s3://{MNS_SNAPSHOT_BUCKET}/
{MNS_SNAPSHOT_PREFIX}/<epoch ms>.json.gz`, which the Glue job `backlog_snapshot` reads. It serves no MNS call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger

from mnsd.entry.monitoring import NoKeys
from mnsd.ground.clock import SystemClock
from mnsd.ground.settings import get_settings
from mnsd.metrics import NoMetrics
from mnsd.monitoring.snapshot import take_snapshot
from mnsd.services import Services, build_services, client_config

SNAPSHOT_BUCKET = "MNS_SNAPSHOT_BUCKET"
SNAPSHOT_PREFIX = "MNS_SNAPSHOT_PREFIX"
WORKERS = 16

logger = Logger(service="mns")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def snapshot_services() -> Services:
    """Services over a DynamoDB client with a connection per reading thread; no keys, no metrics."""
    import boto3

    dynamodb = boto3.client("dynamodb", config=client_config(max_pool_connections=WORKERS, service="dynamodb"))
    return build_services(get_settings(), dynamodb=dynamodb, clock=SystemClock(), keys=NoKeys(), metrics=NoMetrics())


def make_snapshot_handler(services: Callable[[], Services] = snapshot_services) -> Handler:
    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        made = services()
        snapshot = take_snapshot(made.queues, made.queues.every_queue(), made.clock, WORKERS)
        key = snapshot.key(os.environ[SNAPSHOT_PREFIX])
        made.clients("s3").put_object(Bucket=os.environ[SNAPSHOT_BUCKET], Key=key, Body=snapshot.body())
        answer = {"key": key, "queues": len(snapshot.rows), "failed": snapshot.failed}
        logger.info("backlog snapshot", extra=answer)
        return answer

    return handler
