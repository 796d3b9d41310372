"""The retries pending per subscription of the monitored topics: `NumberOfNotificationRetriesPending`, a gauge.

A push whose first attempt failed waits for its retries as a RUNNING execution of the push retry state machine, and
nothing else keeps it: no table counts them. Each execution's name ends with its subscription's suffix (a hash of
account, topic and subscription: `mnsd.push.workflow.execution_name`), so one listing of the running executions
(`ListExecutions`, statusFilter RUNNING, 1,000 a page) counts them all by subscription. The listing is bounded
(`RetryLimits`: pages a run, and seconds): a run that stops before the end prints what it counted and says so
(`RetryRun.truncated`). The monitored topics' subscriptions are listed from the catalog, 1,000 a read; each gets its
gauge, 0 without a pending retry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools import Logger

from mnsd.control.catalog import Catalog
from mnsd.ground.clock import Clock
from mnsd.metrics import PUSH_RETRIES_PENDING, MetricsSink, monitored, topic_labels
from mnsd.model.topics import Subscription
from mnsd.push.workflow import subscription_suffix, suffix_of

logger = Logger(service="mns")


@dataclass(frozen=True)
class RetryLimits:
    pages: int = 10  # ListExecutions pages a run (1,000 executions each): 10 of the API's refill of 2 a second
    page_size: int = 1000  # the API's most
    budget_seconds: float = 5.0  # of a run, before the queues' gauges


@dataclass(frozen=True)
class RetryRun:
    subscriptions: int  # of monitored topics: a gauge each
    pending: int  # running executions counted (of any subscription)
    truncated: bool  # the bound stopped the listing: the gauges are what was counted


@dataclass(eq=False)
class PendingRetries:
    """Counts the running retry executions by subscription and prints a gauge per subscription of a monitored topic."""

    catalog: Catalog
    stepfunctions: Callable[[], Any]  # the client, made on first use
    state_machine_arn: str
    sink: MetricsSink
    clock: Clock
    limits: RetryLimits = field(default_factory=RetryLimits)

    def run(self, accounts: Iterable[str], default: bool) -> RetryRun:
        subscriptions = list(self.monitored_subscriptions(accounts, default))
        if not subscriptions or not self.state_machine_arn:
            return RetryRun(len(subscriptions), 0, False)
        counts, truncated = self.count()
        for subscription in subscriptions:
            labels = topic_labels(subscription.account_id, subscription.topic_name, subscription.name)
            self.sink.add(PUSH_RETRIES_PENDING, labels, counts.get(subscription_suffix(subscription), 0))
        self.sink.flush()
        return RetryRun(len(subscriptions), sum(counts.values()), truncated)

    def monitored_subscriptions(self, accounts: Iterable[str], default: bool) -> Iterator[Subscription]:
        for account_id in accounts:
            for topic in self.catalog.every_topic(account_id):
                if monitored(topic.attributes.metrics_enabled, default):
                    subscriptions = self.catalog.every_subscription(account_id, topic.name)
                    yield from (s for s in subscriptions if s.topic_id == topic.topic_id)

    def count(self) -> tuple[Counter[str], bool]:
        """Running executions by name suffix, and whether the bound stopped the listing before its end."""
        client = self.stepfunctions()
        deadline = self.clock.now() + self.limits.budget_seconds
        counts: Counter[str] = Counter()
        request: dict[str, Any] = {
            "stateMachineArn": self.state_machine_arn,
            "statusFilter": "RUNNING",
            "maxResults": self.limits.page_size,
        }
        for _ in range(self.limits.pages):
            if self.clock.now() >= deadline:
                return counts, True
            page = client.list_executions(**request)
            counts.update(suffix_of(execution["name"]) for execution in page.get("executions", []))
            token = page.get("nextToken")
            if not token:
                return counts, False
            request["nextToken"] = token
        logger.warning("retries pending not all counted", extra={"pages": self.limits.pages})
        return counts, True
