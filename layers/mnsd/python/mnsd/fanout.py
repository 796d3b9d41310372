"""Fan-out of a published message to its subscriptions, and the worker that makes the retries.

`Fanout.fan_out` runs once per published message (the topic message table's stream on AWS, the
records of a batch concurrently; per-topic lanes of threads locally): it makes every subscription's
first attempt concurrently and starts one retry execution (see `mnsd.push_workflow`) per failed
attempt. `Fanout.handle_task` makes one retry for the state machine and answers its task token, or
gives the push up when the strategy is exhausted. A push given up (exhausted, or failed for good at its
first attempt) goes to the subscription's dead-letter queue when its DlqPolicy is enabled, and is
dropped otherwise; either way a `drop` record says so.

No endpoint holds the shared path longer than one attempt's deadline (5 s for connect, send and the
whole answer): every attempt of a batch runs at once, and locally each topic has its own lane, so a
topic with slow endpoints delays neither other topics nor other tenants.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aws_lambda_powertools import Logger

from mnsd import errors
from mnsd.clock import Clock, ms
from mnsd.delivery import Deliverer, Outcome
from mnsd.oplog import LogRecord, OperationLog
from mnsd.push_workflow import DELIVERY_FAILED, attempt_number, execution_input
from mnsd.storage import TopicMessageStore
from mnsd.topic_model import TOPIC_RETENTION_SECONDS, Subscription, TopicMessage
from mnsd.topic_service import TopicService

MAX_PARALLEL_DELIVERIES = 32  # attempts of one message at once; a batch fans out its messages concurrently too
# What Step Functions answers for a token it no longer waits on.
STALE_TOKEN_ERRORS = {"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"}
DEAD_LETTERED = "dead_letter"  # the outcome of a drop record whose push went to the dead-letter queue
logger = Logger(service="mns")


def delivery_reference(subscription: Subscription, message: TopicMessage) -> dict[str, str]:
    """What a retry needs to find its message and subscription again (both are re-read per attempt)."""
    return {
        "account": message.account_id,
        "topic": message.topic_name,
        "topic_id": message.topic_id,
        "message_id": message.message_id,
        "subscription": subscription.name,
        "publish_time": str(message.publish_time),
    }


class Fanout:
    def __init__(
        self,
        topics: TopicService,
        messages: TopicMessageStore,
        deliverer: Deliverer,
        oplog: OperationLog,
        clock: Clock,
        stepfunctions: Any,
        state_machine_arn: str,
        region: str,
    ) -> None:
        self.topics = topics
        self.messages = messages
        self.deliverer = deliverer
        self.oplog = oplog
        self.clock = clock
        self.stepfunctions = stepfunctions
        self.state_machine_arn = state_machine_arn
        self.region = region
        self.executions_started = 0
        self.drops = 0
        self.dead_letters = 0
        self._counting = threading.Lock()  # fan-outs of one batch run on several threads

    def fan_out(self, message: TopicMessage) -> dict[str, Outcome]:
        """Make every subscription's first attempt; start the retry workflow for each failure."""
        subscriptions = self.topics.subscriptions_of(message)
        if message.logging_enabled:
            self._log(message, [self._publish_record(message)])
        if not subscriptions:
            return {}
        workers = min(MAX_PARALLEL_DELIVERIES, len(subscriptions))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(lambda s: self.deliverer.deliver(s, message), subscriptions))
        records = []
        for subscription, outcome in zip(subscriptions, outcomes, strict=True):
            records.append(self._attempt_record(subscription, message, 1, outcome))
            if outcome.delivered:
                continue
            if outcome.permanent:
                records.append(self._give_up_at_fan_out(subscription, message, outcome.detail))
            else:
                self._start_retries(subscription, message)
        self._log(message, [r for r in records if r is not None])
        return {s.name: o for s, o in zip(subscriptions, outcomes, strict=True)}

    def _start_retries(self, subscription: Subscription, message: TopicMessage) -> None:
        reference = delivery_reference(subscription, message)
        # One execution per (message, subscription): a re-delivered stream record cannot start a second.
        digest = hashlib.sha1(subscription.name.encode("utf-8")).hexdigest()[:16]
        name = f"{message.message_id}-{digest}"
        try:
            self.stepfunctions.start_execution(
                stateMachineArn=self.state_machine_arn,
                name=name,
                input=execution_input(subscription.attributes.notify_strategy, reference),
            )
            with self._counting:
                self.executions_started += 1
        except Exception as error:
            if type(error).__name__ != "ExecutionAlreadyExists":
                raise

    def _attempt_record(
        self, subscription: Subscription, message: TopicMessage, attempt: int, outcome: Outcome
    ) -> LogRecord | None:
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

    def _publish_record(self, message: TopicMessage) -> LogRecord:
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

    def _give_up(self, subscription: Subscription, message: TopicMessage, reason: str) -> LogRecord:
        """A push no retry will make: into the subscription's dead-letter queue if it has one, else dropped.

        A dead-letter queue deleted since is a drop; any other failure (the queue's storage throttled or
        unavailable) propagates, for the caller to try again."""
        try:
            dead_lettered = self.deliverer.dead_letter(subscription, message)
        except errors.MnsError as error:  # the queue is gone, or refuses the body (too large): nothing mends it
            return self._drop_record(subscription, message, f"{reason}; not dead-lettered: {error.code}")
        if dead_lettered is None:
            return self._drop_record(subscription, message, reason)
        with self._counting:
            self.dead_letters += 1
        logger.info(
            "delivery dead-lettered",
            extra={
                "topic": message.topic_name,
                "subscription": subscription.name,
                "message_id": message.message_id,
                "dead_letter_message_id": dead_lettered.message_id,
                "reason": reason,
            },
        )
        return self._drop_record(subscription, message, reason, dead_lettered=True)

    def _give_up_at_fan_out(self, subscription: Subscription, message: TopicMessage, reason: str) -> LogRecord:
        """As `_give_up`, where a failure may not fail the fan-out (which would push to every endpoint again)."""
        try:
            return self._give_up(subscription, message, reason)
        except Exception as error:
            logger.exception("dead-letter failed", extra={"message_id": message.message_id})
            return self._drop_record(subscription, message, f"{reason}; not dead-lettered: {type(error).__name__}")

    def _drop_record(
        self, subscription: Subscription, message: TopicMessage, reason: str, dead_lettered: bool = False
    ) -> LogRecord:
        """Drops are recorded whatever LoggingEnabled says: they are lost deliveries (or dead-lettered ones,
        `outcome` says which)."""
        if not dead_lettered:
            with self._counting:
                self.drops += 1
            logger.warning(
                "delivery dropped",
                extra={
                    "topic": message.topic_name,
                    "subscription": subscription.name,
                    "message_id": message.message_id,
                    "reason": reason,
                },
            )
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

    def _log(self, message: TopicMessage, records: list[LogRecord]) -> None:
        """Best effort: the deliveries these records describe have happened, and failing the batch would
        make them again (a second push to every endpoint) for the sake of analytics."""
        if not records:
            return
        try:
            self.oplog.write(records)
        except Exception:
            logger.exception("operation log records lost", extra={"message_id": message.message_id})

    # --- retries ------------------------------------------------------------------------------

    def _find(
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

    def handle_task(self, task: dict[str, Any]) -> None:
        """One message of the push queue: a retry to make (with a task token) or a drop to record."""
        reference = task["delivery"]
        subscription, message = self._find(reference, exhausted=bool(task.get("drop")))
        if task.get("drop"):  # the strategy's retries are exhausted
            if subscription is not None and message is not None:
                self._log(message, [self._give_up(subscription, message, "retries exhausted")])
            return
        token = task["token"]
        if subscription is None or message is None:  # unsubscribed, or the message outlived its retention
            self._answer(self.stepfunctions.send_task_success, taskToken=token, output=json.dumps({"skipped": True}))
            return
        if not self._still_awaited(token):
            logger.info("stale retry not attempted", extra={"message_id": message.message_id})
            return
        outcome = self.deliverer.deliver(subscription, message)
        record = self._attempt_record(subscription, message, attempt_number(task), outcome)
        self._log(message, [record] if record is not None else [])
        if outcome.delivered:
            self._answer(
                self.stepfunctions.send_task_success, taskToken=token, output=json.dumps({"status": outcome.status})
            )
        else:
            self._answer(
                self.stepfunctions.send_task_failure,
                taskToken=token,
                error=DELIVERY_FAILED,
                cause=(outcome.detail or f"HTTP {outcome.status}")[:256],
            )

    def _still_awaited(self, token: str) -> bool:
        """A heartbeat before the attempt: refused, the Task timed out while this message waited and the
        execution has scheduled the next retry already; attempting this one as well would push twice."""
        try:
            self.stepfunctions.send_task_heartbeat(taskToken=token)
        except Exception as error:
            if type(error).__name__ not in STALE_TOKEN_ERRORS:
                raise
            return False
        return True

    @staticmethod
    def _answer(send: Callable[..., Any], **arguments: Any) -> None:
        """Answers the task; a token no longer awaited (the Task timed out, the execution ended) is no error:
        the execution went on without this attempt, and failing would only bring the message back to be
        attempted again."""
        try:
            send(**arguments)
        except Exception as error:
            if type(error).__name__ not in STALE_TOKEN_ERRORS:
                raise
            logger.warning("task answer refused", extra={"error": type(error).__name__})


class LocalDispatcher:
    """In one process: fan out on threads, so publishing never waits for deliveries.

    Each topic has its own lane of at most `per_topic` fan-outs at a time, with threads started on
    demand: a topic whose endpoints are slow holds its own lane (each attempt for at most its
    deadline), never the threads another topic or tenant needs. A fan-out that fails is tried again
    after each of `retry_seconds`, as the stream retries a batch, and logged as an error if it still fails.
    """

    def __init__(
        self, fanout: Callable[[], Fanout], per_topic: int = 4, retry_seconds: Sequence[float] = (0.5, 2.0, 8.0)
    ) -> None:
        self.fanout = fanout
        self.per_topic = per_topic
        self.retry_seconds = tuple(retry_seconds)
        self._lanes: dict[tuple[str, str], deque[TopicMessage]] = {}
        self._running: dict[tuple[str, str], int] = {}
        self._pending = 0
        self._lock = threading.Condition()

    def submit(self, message: TopicMessage) -> None:
        lane = (message.account_id, message.topic_name)
        with self._lock:
            self._pending += 1
            self._lanes.setdefault(lane, deque()).append(message)
            if self._running.get(lane, 0) >= self.per_topic:
                return
            self._running[lane] = self._running.get(lane, 0) + 1
        threading.Thread(target=self._serve, args=(lane,), name="fanout", daemon=True).start()

    def _serve(self, lane: tuple[str, str]) -> None:
        while True:
            with self._lock:
                waiting = self._lanes.get(lane)
                if not waiting:
                    self._running[lane] -= 1
                    if not self._running[lane]:
                        del self._running[lane]
                        self._lanes.pop(lane, None)
                    return
                message = waiting.popleft()
            try:
                self._run(message)
            finally:
                with self._lock:
                    self._pending -= 1
                    self._lock.notify_all()

    def _run(self, message: TopicMessage) -> None:
        for pause in (*self.retry_seconds, None):
            try:
                self.fanout().fan_out(message)
                return
            except Exception:
                if pause is None:
                    logger.exception("fan-out failed, retries exhausted", extra={"message_id": message.message_id})
                    return
                logger.warning("fan-out failed, retrying", extra={"message_id": message.message_id})
                time.sleep(pause)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every submitted fan-out has finished (tests)."""
        with self._lock:
            return self._lock.wait_for(lambda: self._pending == 0, timeout)
