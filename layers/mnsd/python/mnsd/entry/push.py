"""The Lambda handlers fed by streams and queues rather than API Gateway: fan-out (topic message table
stream), first attempts (first-attempt queue), push retries (push queue) and the operation log (message table
stream)."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from mnsd.ground import settings
from mnsd.log.changes import MessageChange
from mnsd.model.topics import TopicMessagePublished
from mnsd.services import Services, default_services

logger = Logger(service="mns")
metrics = Metrics(namespace="MNS", service="mns")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
# The change events of a stream event's records: the entry point names its engine's (`mnsd.storage.dynamodb.tables.changes`).
Published = Callable[[list[dict[str, Any]]], list[TopicMessagePublished]]
MessageChanges = Callable[[list[dict[str, Any]]], list[MessageChange]]
Record = TypeVar("Record")
Result = TypeVar("Result")
MAX_PARALLEL_RECORDS = 10  # the event sources' batch size


def _given_up(services: Services) -> tuple[int, int]:
    counters = services.push().counters
    return counters.drops, counters.dead_letters


def _publish_counts(services: Services, before: tuple[int, int]) -> None:
    """The batch's counts: drops and dead letters (the function's), and the queues' and subscriptions' ones."""
    services.metrics.flush()
    after = _given_up(services)
    dropped, dead_lettered = after[0] - before[0], after[1] - before[1]
    if dropped:
        metrics.add_metric(name="DroppedDeliveries", unit=MetricUnit.Count, value=dropped)
    if dead_lettered:
        metrics.add_metric(name="DeadLetteredDeliveries", unit=MetricUnit.Count, value=dead_lettered)


def _concurrently(work: Callable[[Record], Result], records: list[Record]) -> list[Result]:
    """`work` for every record at once (a batch holds at most a few records), results in record order."""
    if len(records) <= 1:
        return [work(record) for record in records]
    with ThreadPoolExecutor(max_workers=min(len(records), MAX_PARALLEL_RECORDS)) as pool:
        return list(pool.map(work, records))


def make_fanout_handler(published: Published, services: Callable[[], Services] = default_services) -> Handler:
    """Stream records of the topic message table (`published` finds the new messages): each is fanned out once."""

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        """The batch's messages are fanned out concurrently (one slow endpoint delays no other topic). A
        message that fails is reported (ReportBatchItemFailures): the stream retries from it, and after
        the event source's last retry the batch goes to its on-failure destination, never lost."""
        current = services()
        fanout = current.fanout()
        before = _given_up(current)

        def fan_out(new: TopicMessagePublished) -> dict[str, str] | None:
            try:
                fanout.fan_out(new.message)
            except Exception:
                logger.exception("fan-out failed", extra={"sequence": new.position})
                return {"itemIdentifier": new.position}
            return None

        news = published(event.get("Records", []))
        failures = [failure for failure in _concurrently(fan_out, news) if failure is not None]
        _publish_counts(current, before)
        return {"batchItemFailures": failures}

    return handler


def _each_message(handle: Callable[[dict[str, Any]], None], records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """`handle` for every SQS message of a batch, concurrently; the failures, reported (ReportBatchItemFailures)
    so that SQS brings back those messages only."""

    def one(record: dict[str, Any]) -> dict[str, str] | None:
        try:
            handle(record)
        except Exception:
            logger.exception("queue message failed", extra={"message_id": record.get("messageId")})
            return {"itemIdentifier": record["messageId"]}
        return None

    return [failure for failure in _concurrently(one, records) if failure is not None]


def make_push_worker_handler(services: Callable[[], Services] = default_services) -> Handler:
    """SQS messages from the retry state machine: one retry (answering its task token) or one drop."""

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        """The batch's tasks run concurrently; a task that fails is reported, and SQS brings it back."""
        current = services()
        worker = current.push().retry_worker
        before = _given_up(current)
        failures = _each_message(
            lambda record: worker.handle_task(json.loads(record["body"])), event.get("Records", [])
        )
        _publish_counts(current, before)
        return {"batchItemFailures": failures}

    return handler


def make_first_attempt_handler(services: Callable[[], Services] = default_services) -> Handler:
    """SQS messages of the first-attempt FIFO queue: the first attempts the fan-out handed over."""

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        """The batch's attempts run concurrently. When the batch holds several subscriptions' messages, each is
        deleted as soon as its attempt is made, so that no subscription's next batch waits for another's
        endpoint; a failed attempt is reported, and SQS brings it back."""
        current = services()
        queued = current.push().queued_first_attempt
        if queued is None:
            raise RuntimeError(f"{settings.FIRST_ATTEMPT_QUEUE_URL} is not set")
        before = _given_up(current)
        records = event.get("Records", [])
        release = len({record["attributes"].get("MessageGroupId") for record in records}) > 1
        failures = _each_message(
            lambda record: queued.handle(record["body"], record["receiptHandle"], release), records
        )
        _publish_counts(current, before)
        return {"batchItemFailures": failures}

    return handler


def make_oplog_handler(changes: MessageChanges, services: Callable[[], Services] = default_services) -> Handler:
    """Stream records of the message table (`changes` finds their events): logging queues' go to the log."""

    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        written = services().queue_events().handle(changes(event.get("Records", [])))
        logger.debug("operation log", extra={"records": written})
        return {"batchItemFailures": []}

    return handler
