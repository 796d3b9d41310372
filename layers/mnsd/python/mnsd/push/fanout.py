"""Fan-out of a published message: which subscriptions receive it, and their first attempts.

On AWS it runs once per stream record of the topic message table (the records of a batch concurrently);
locally `mnsd.push.dispatch` runs `subscriptions` on a lane of the topic and each first attempt on a lane
of its subscription, so that a slow endpoint delays no other subscription.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from mnsd.push.delivery import Outcome
from mnsd.push.first_attempt import FirstAttempt
from mnsd.push.records import PushRecords
from mnsd.topics.model import Subscription, TopicMessage
from mnsd.topics.service import TopicService

MAX_PARALLEL_DELIVERIES = 32  # attempts of one message at once; a batch fans out its messages concurrently too


class Fanout:
    def __init__(self, topics: TopicService, first_attempt: FirstAttempt, records: PushRecords) -> None:
        self.topics = topics
        self.first_attempt = first_attempt
        self.records = records

    def subscriptions(self, message: TopicMessage) -> list[Subscription]:
        """The subscriptions that receive the message (its publish recorded when the topic logs)."""
        if message.logging_enabled:
            self.records.write(message, [self.records.publish(message)])
        return self.topics.subscriptions_of(message)

    def fan_out(self, message: TopicMessage) -> dict[str, Outcome]:
        """Every subscription's first attempt, concurrently (each at most its deadline)."""
        subscriptions = self.subscriptions(message)
        if not subscriptions:
            return {}
        workers = min(MAX_PARALLEL_DELIVERIES, len(subscriptions))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(lambda s: self.first_attempt.attempt(s, message), subscriptions))
        return {s.name: o for s, o in zip(subscriptions, outcomes, strict=True)}
