"""The push parts of one process, wired together once: what the fan-out and the push worker use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnsd.ground.clock import Clock
from mnsd.ground.settings import Settings
from mnsd.log.oplog import OperationLog
from mnsd.metrics import MetricsSink, NoMetrics
from mnsd.model.ports import TopicMessageStore
from mnsd.model.topics import QueueGrants
from mnsd.push.attempt_queue import AttemptQueue, QueuedFirstAttempt
from mnsd.push.dead_letters import DeadLetters
from mnsd.push.delivery import Deliverer, QueueEndpoints
from mnsd.push.fanout import Fanout
from mnsd.push.first_attempt import FirstAttempt
from mnsd.push.records import PushCounters, PushRecords
from mnsd.push.retry_worker import RetryWorker
from mnsd.push.stepfunctions import StepFunctionsWorkflow
from mnsd.queues.dead_letters import DeadLetterService
from mnsd.topics.service import TopicService


@dataclass(frozen=True)
class Push:
    fanout: Fanout
    retry_worker: RetryWorker
    queued_first_attempt: QueuedFirstAttempt | None  # None without the first-attempt queue (locally)
    workflow: StepFunctionsWorkflow
    counters: PushCounters


def build_push(
    *,
    settings: Settings,
    topics: TopicService,
    messages: TopicMessageStore,
    queues: QueueEndpoints,
    dead_letter_queues: DeadLetterService,
    oplog: OperationLog,
    clock: Clock,
    clients: Callable[[str], Any],
    grants: QueueGrants,
    metrics: MetricsSink | None = None,
) -> Push:
    metrics = metrics or NoMetrics()
    deliverer = Deliverer(settings, queues, clients, grants=grants)
    workflow = StepFunctionsWorkflow(clients("stepfunctions"), settings.push_state_machine_arn)
    counters = PushCounters()
    records = PushRecords(oplog, clock, settings.region)
    dead_letters = DeadLetters(dead_letter_queues, records, counters, settings.region, metrics)
    first_attempt = FirstAttempt(deliverer, workflow, dead_letters, records, counters, metrics)
    attempt_queue = (
        AttemptQueue(clients("sqs"), settings.first_attempt_queue_url, settings.region)
        if settings.first_attempt_queue_url
        else None
    )
    return Push(
        fanout=Fanout(topics, first_attempt, records, attempt_queue),
        retry_worker=RetryWorker(topics, messages, deliverer, workflow, dead_letters, records, clock, metrics),
        queued_first_attempt=QueuedFirstAttempt(first_attempt, attempt_queue) if attempt_queue else None,
        workflow=workflow,
        counters=counters,
    )
