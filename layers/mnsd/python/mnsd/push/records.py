"""What pushes leave behind: operation-log records (publish, push attempt, drop), the counters the
handlers turn into metrics (DroppedDeliveries, DeadLetteredDeliveries) and each subscription's push results
(`mnsd.metrics`: delivered, failed, dead-lettered, dropped)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from aws_lambda_powertools import Logger

from mnsd.ground.clock import Clock, ms
from mnsd.log.oplog import LogRecord, OperationLog
from mnsd.metrics import PUSHES_DELIVERED, PUSHES_FAILED, Metric, MetricsSink, topic_labels
from mnsd.model.topics import Subscription, TopicMessage
from mnsd.push.outcome import Outcome

DEAD_LETTERED = "dead_letter"  # the outcome of a drop record whose push went to the dead-letter queue
logger = Logger(service="mns")


@dataclass
class PushCounters:
    """Counted by every thread of a process: executions started, pushes dropped and dead-lettered."""

    executions_started: int = 0
    drops: int = 0
    dead_letters: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def execution_started(self) -> None:
        with self._lock:
            self.executions_started += 1

    def dropped(self) -> None:
        with self._lock:
            self.drops += 1

    def dead_lettered(self) -> None:
        with self._lock:
            self.dead_letters += 1


def count_push(metrics: MetricsSink, metric: Metric, subscription: Subscription, message: TopicMessage) -> None:
    """One push result of a subscription (`mnsd.metrics.PUSH_RESULTS`), if its topic is monitored (as it chose when
    the message was published)."""
    if metrics.monitors(message.metrics_enabled):
        metrics.add(metric, topic_labels(subscription.account_id, subscription.topic_name, subscription.name))


def count_attempt(metrics: MetricsSink, subscription: Subscription, message: TopicMessage, outcome: Outcome) -> None:
    """One attempt's result: delivered, or failed (a retry follows, or the push is given up)."""
    count_push(metrics, PUSHES_DELIVERED if outcome.delivered else PUSHES_FAILED, subscription, message)


class PushRecords:
    """The operation-log records of pushes, written best effort."""

    def __init__(self, oplog: OperationLog, clock: Clock, region: str) -> None:
        self.oplog = oplog
        self.clock = clock
        self.region = region

    def publish(self, message: TopicMessage) -> LogRecord:
        return LogRecord(
            account=message.account_id,
            kind="topic",
            resource=message.topic_name,
            event="publish",
            time=message.publish_time,
            message_id=message.message_id,
            event_id=f"{message.message_id}:publish",
            body_size=len(message.body.encode("utf-8")),
            publish_time=message.publish_time,
        )

    def attempt(
        self, subscription: Subscription, message: TopicMessage, attempt: int, outcome: Outcome
    ) -> LogRecord | None:
        """The record of one attempt; None unless the topic logs."""
        if not message.logging_enabled:
            return None
        now = ms(self.clock.now())
        return LogRecord(
            account=message.account_id,
            kind="topic",
            resource=message.topic_name,
            event="push",
            time=now,
            message_id=message.message_id,
            event_id=f"{message.message_id}:{subscription.name}:push:{attempt}",
            subscription=subscription.name,
            endpoint_kind=subscription.endpoint(self.region).kind,
            attempt=attempt,
            outcome="success" if outcome.delivered else "failure",
            status=outcome.status,
            latency_ms=now - message.publish_time,
            publish_time=message.publish_time,
        )

    def drop(self, subscription: Subscription, message: TopicMessage, dead_lettered: bool) -> LogRecord:
        """Drops are recorded whatever LoggingEnabled says: they are lost deliveries (or dead-lettered ones,
        `outcome` says which)."""
        return LogRecord(
            account=message.account_id,
            kind="topic",
            resource=message.topic_name,
            event="drop",
            time=ms(self.clock.now()),
            message_id=message.message_id,
            event_id=f"{message.message_id}:{subscription.name}:drop",
            subscription=subscription.name,
            endpoint_kind=subscription.endpoint(self.region).kind,
            outcome=DEAD_LETTERED if dead_lettered else None,
            publish_time=message.publish_time,
        )

    def write(self, message: TopicMessage, records: list[LogRecord | None]) -> None:
        """Best effort: the deliveries these records describe have happened, and failing the batch would
        make them again (a second push to every endpoint) for the sake of analytics."""
        written = [record for record in records if record is not None]
        if not written:
            return
        try:
            self.oplog.write(written)
        except Exception:
            logger.exception("operation log records lost", extra={"message_id": message.message_id})
