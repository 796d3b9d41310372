"""The Lambda handlers fed by streams and queues rather than API Gateway: fan-out (topic message table
stream), push retries (push queue) and the operation log (message table stream)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from mnsd.services import Services, default_services
from mnsd.storage.dynamodb.topic_messages import from_item

logger = Logger(service="mns")
metrics = Metrics(namespace="MNS", service="mns")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def _count_drops(services: Services, before: int) -> None:
    dropped = services.fanout().drops - before
    if dropped:
        metrics.add_metric(name="DroppedDeliveries", unit=MetricUnit.Count, value=dropped)


def make_fanout_handler(services: Callable[[], Services] = default_services) -> Handler:
    """DynamoDB stream records of the topic message table: each new message is fanned out once."""

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        current = services()
        before = current.fanout().drops
        failures = []
        for record in event.get("Records", []):
            if record.get("eventName") != "INSERT":
                continue
            try:
                current.fanout().fan_out(from_item(record["dynamodb"]["NewImage"]))
            except Exception:
                logger.exception("fan-out failed", extra={"sequence": record["dynamodb"].get("SequenceNumber")})
                failures.append({"itemIdentifier": record["dynamodb"]["SequenceNumber"]})
        _count_drops(current, before)
        return {"batchItemFailures": failures}

    return handler


def make_push_worker_handler(services: Callable[[], Services] = default_services) -> Handler:
    """SQS messages from the retry state machine: one retry (answering its task token) or one drop."""

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        current = services()
        before = current.fanout().drops
        failures = []
        for record in event.get("Records", []):
            try:
                current.fanout().handle_task(json.loads(record["body"]))
            except Exception:
                logger.exception("push task failed", extra={"message_id": record.get("messageId")})
                failures.append({"itemIdentifier": record["messageId"]})
        _count_drops(current, before)
        return {"batchItemFailures": failures}

    return handler


def make_oplog_handler(services: Callable[[], Services] = default_services) -> Handler:
    """Stream records of the message table: the events of logging queues go to the operation log."""

    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        written = services().queue_events().handle(event.get("Records", []))
        logger.debug("operation log", extra={"records": written})
        return {"batchItemFailures": []}

    return handler
