"""A push no retry will make (the strategy is exhausted, or the first attempt failed for good): into the
subscription's dead-letter queue when its DlqPolicy is enabled, dropped otherwise; a `drop` record says which."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools import Logger

from mnsd.ground import errors
from mnsd.log.oplog import LogRecord
from mnsd.metrics import PUSHES_DEAD_LETTERED, PUSHES_DROPPED, MetricsSink, NoMetrics
from mnsd.model.messages import DLQ_TYPE_SUBSCRIPTION, Message, dead_letter_marks
from mnsd.model.topics import Subscription, TopicMessage
from mnsd.push.records import PushCounters, PushRecords, count_push
from mnsd.queues.dead_letters import DeadLetterService
from mnsd.wire.notifications import notification_body

logger = Logger(service="mns")


@dataclass(eq=False)
class DeadLetters:
    queues: DeadLetterService
    records: PushRecords
    counters: PushCounters
    region: str
    metrics: MetricsSink = field(default_factory=NoMetrics)

    def give_up(self, subscription: Subscription, message: TopicMessage, reason: str) -> LogRecord:
        """The push's dead letter, or its drop; the record to log.

        A dead-letter queue deleted since (or refusing the body) is a drop; any other failure (the queue's
        storage throttled or unavailable) propagates, for the caller to try again."""
        try:
            dead_lettered = self._send(subscription, message)
        except errors.MnsError as error:  # the queue is gone, or refuses the body (too large): nothing mends it
            return self._drop(subscription, message, f"{reason}; not dead-lettered: {error.code}")
        if dead_lettered is None:
            return self._drop(subscription, message, reason)
        self.counters.dead_lettered()
        count_push(self.metrics, PUSHES_DEAD_LETTERED, subscription, message)
        _log(logger.info, "delivery dead-lettered", subscription, message, reason, dead_lettered.message_id)
        return self.records.drop(subscription, message, dead_lettered=True)

    def give_up_at_first_attempt(self, subscription: Subscription, message: TopicMessage, reason: str) -> LogRecord:
        """As `give_up`, where a failure may not fail the first attempt (which would push again)."""
        try:
            return self.give_up(subscription, message, reason)
        except Exception as error:
            logger.exception("dead-letter failed", extra={"message_id": message.message_id})
            return self._drop(subscription, message, f"{reason}; not dead-lettered: {type(error).__name__}")

    def _send(self, subscription: Subscription, message: TopicMessage) -> Message | None:
        """The push into the subscription's dead-letter queue, with the body its endpoint would have received;
        None if the subscription has no DlqPolicy enabled."""
        target = subscription.attributes.dead_letter_queue
        if target is None:
            return None
        origin = dead_letter_marks(DLQ_TYPE_SUBSCRIPTION, subscription.arn(self.region), message.message_id)
        body = notification_body(subscription, message)
        return self.queues.send(subscription.account_id, target, body, message.user_properties, origin)

    def _drop(self, subscription: Subscription, message: TopicMessage, reason: str) -> LogRecord:
        self.counters.dropped()
        count_push(self.metrics, PUSHES_DROPPED, subscription, message)
        _log(logger.warning, "delivery dropped", subscription, message, reason)
        return self.records.drop(subscription, message, dead_lettered=False)


def _log(
    log: Callable[..., Any],
    event: str,
    subscription: Subscription,
    message: TopicMessage,
    reason: str,
    dead_letter_message_id: str | None = None,
) -> None:
    """A push given up, logged with its topic, subscription, message (and dead letter) and the reason."""
    extra = {"topic": message.topic_name, "subscription": subscription.name, "message_id": message.message_id}
    if dead_letter_message_id is not None:
        extra["dead_letter_message_id"] = dead_letter_message_id
    log(event, extra={**extra, "reason": reason})
