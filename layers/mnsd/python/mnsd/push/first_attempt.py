"""A subscription's first attempt at a published message: made at once, without any execution (most
pushes succeed at once, and an execution costs transitions); a failure starts the retry workflow, a
failure no retry mends gives the push up."""

from __future__ import annotations

from dataclasses import dataclass, field

from mnsd.metrics import MetricsSink, NoMetrics
from mnsd.model.topics import Subscription, TopicMessage
from mnsd.push.dead_letters import DeadLetters
from mnsd.push.delivery import Deliverer, Outcome
from mnsd.push.records import PushCounters, PushRecords, count_attempt
from mnsd.push.stepfunctions import RetryWorkflow
from mnsd.push.workflow import delivery_reference, execution_input, execution_name


@dataclass(eq=False)  # a service: compared by identity
class FirstAttempt:
    deliverer: Deliverer
    workflow: RetryWorkflow
    dead_letters: DeadLetters
    records: PushRecords
    counters: PushCounters
    metrics: MetricsSink = field(default_factory=NoMetrics)

    def attempt(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        """Push once (at most the attempt's deadline, 5 s); then retries or give up as the outcome says.
        Raises only when the retry workflow cannot be started: the caller tries the whole attempt again."""
        outcome = self.deliverer.deliver(subscription, message)
        count_attempt(self.metrics, subscription, message, outcome)
        records = [self.records.attempt(subscription, message, 1, outcome)]
        if outcome.permanent:
            records.append(self.dead_letters.give_up_at_first_attempt(subscription, message, outcome.detail))
        elif not outcome.delivered:
            self.start_retries(subscription, message)
        self.records.write(message, records)
        return outcome

    def start_retries(self, subscription: Subscription, message: TopicMessage) -> None:
        execution = execution_input(subscription.attributes.notify_strategy, delivery_reference(subscription, message))
        if self.workflow.start(execution_name(subscription, message), execution):
            self.counters.execution_started()
