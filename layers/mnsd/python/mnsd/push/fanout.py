"""Fan-out of a published message: which subscriptions receive it, and their first attempts.

On AWS it runs once per stream record of the topic message table (the records of a batch concurrently): with
the first-attempt queue configured it hands the attempts to HTTP, mail and SMS endpoints to that queue
(`mnsd.push.attempt_queue`: a group per subscription) and makes only the quick ones to queue endpoints itself;
without it, it makes them all. Locally `mnsd.push.dispatch` runs `subscriptions` on a lane of the topic and
each first attempt on a lane of its subscription. Either way no subscription waits behind a sibling's endpoint.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from mnsd.model.topics import Subscription, TopicMessage
from mnsd.push.attempt_queue import AttemptQueue
from mnsd.push.first_attempt import FirstAttempt
from mnsd.push.outcome import Outcome
from mnsd.push.records import PushRecords
from mnsd.topics.service import TopicService

MAX_PARALLEL_DELIVERIES = 32  # attempts of one message at once; a batch fans out its messages concurrently too


@dataclass(eq=False)
class Fanout:
    topics: TopicService
    first_attempt: FirstAttempt
    records: PushRecords
    attempt_queue: AttemptQueue | None = None

    def subscriptions(self, message: TopicMessage) -> list[Subscription]:
        """The subscriptions that receive the message (its publish recorded when the topic logs)."""
        if message.logging_enabled:
            self.records.write(message, [self.records.publish(message)])
        return self.topics.subscriptions_of(message)

    def fan_out(self, message: TopicMessage) -> dict[str, Outcome]:
        """Every subscription's first attempt: handed to the attempt queue where it takes them (first, so that
        a refusal fails the fan-out before any push), the others made here concurrently (each at most its
        deadline). The outcomes of the attempts made here, by subscription name."""
        subscriptions = self.subscriptions(message)
        if self.attempt_queue is not None:
            queue = self.attempt_queue
            handed = [s for s in subscriptions if queue.takes(s)]
            subscriptions = [s for s in subscriptions if not queue.takes(s)] + queue.send(message, handed)
        if not subscriptions:
            return {}
        workers = min(MAX_PARALLEL_DELIVERIES, len(subscriptions))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(lambda s: self.first_attempt.attempt(s, message), subscriptions))
        return {s.name: o for s, o in zip(subscriptions, outcomes, strict=True)}
