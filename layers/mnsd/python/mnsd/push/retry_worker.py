"""The push worker's job: one message of the push queue, which the retry workflow sent. Either a retry (with
a task token to answer) or, once the strategy is exhausted, a drop: the push is given up."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools import Logger

from mnsd.ground import errors
from mnsd.ground.clock import Clock, ms
from mnsd.metrics import MetricsSink, NoMetrics
from mnsd.model.ports import TopicMessageStore
from mnsd.model.topics import TOPIC_RETENTION_SECONDS, Subscription, TopicMessage
from mnsd.push.dead_letters import DeadLetters
from mnsd.push.delivery import Deliverer
from mnsd.push.records import PushRecords, count_attempt
from mnsd.push.stepfunctions import RetryWorkflow
from mnsd.push.workflow import DELIVERY_FAILED, attempt_number
from mnsd.topics.service import TopicService

logger = Logger(service="mns")


@dataclass(eq=False)  # a service: compared by identity
class RetryWorker:
    topics: TopicService
    messages: TopicMessageStore
    deliverer: Deliverer
    workflow: RetryWorkflow
    dead_letters: DeadLetters
    records: PushRecords
    clock: Clock
    metrics: MetricsSink = field(default_factory=NoMetrics)

    def handle_task(self, task: dict[str, Any]) -> None:
        """One message of the push queue: a retry to make (with a task token) or a drop to record."""
        reference = task["delivery"]
        subscription, message = self.find(reference, exhausted=bool(task.get("drop")))
        if task.get("drop"):  # the strategy's retries are exhausted
            if subscription is not None and message is not None:
                self.records.write(message, [self.dead_letters.give_up(subscription, message, "retries exhausted")])
            return
        token = task["token"]
        if subscription is None or message is None:  # unsubscribed, or the message outlived its retention
            self.workflow.succeed(token, json.dumps({"skipped": True}))
            return
        # A refused heartbeat: the Task timed out while this message waited and the execution has scheduled
        # the next retry already; attempting this one as well would push twice.
        if not self.workflow.heartbeat(token):
            logger.info("stale retry not attempted", extra={"message_id": message.message_id})
            return
        outcome = self.deliverer.deliver(subscription, message)
        count_attempt(self.metrics, subscription, message, outcome)
        self.records.write(message, [self.records.attempt(subscription, message, attempt_number(task), outcome)])
        if outcome.delivered:
            self.workflow.succeed(token, json.dumps({"status": outcome.status}))
        else:
            self.workflow.fail(token, DELIVERY_FAILED, (outcome.detail or f"HTTP {outcome.status}")[:256])

    def find(
        self, reference: dict[str, str], exhausted: bool = False
    ) -> tuple[Subscription | None, TopicMessage | None]:
        """The subscription and message a task names; None for one that no longer exists. Any other error
        (a throttled or unavailable table) propagates: the task is then retried, never skipped.

        An exhausted push is read as of its retention's last second: EXPONENTIAL_DECAY_RETRY's waits end
        385 s before the message's one day does, and slow attempts can use that up. Its dead letter is
        then still made while the store keeps the item (DynamoDB's TTL removes it later)."""
        read_at = ms(self.clock.now())
        if exhausted and reference.get("publish_time"):
            read_at = min(read_at, int(reference["publish_time"]) + (TOPIC_RETENTION_SECONDS - 1) * 1000)
        message = self.messages.get(reference["topic_id"], reference["message_id"], read_at)
        try:
            subscription = self.topics.get_subscription(
                reference["account"], reference["topic"], reference["subscription"]
            )
        except errors.SubscriptionNotExist:
            return None, message
        if message is not None and subscription.topic_id != message.topic_id:
            return None, message
        return subscription, message
