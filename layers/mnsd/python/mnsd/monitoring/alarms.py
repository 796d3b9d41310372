"""The CloudWatch alarms queues ask for (their `Alarms` attribute, `mnsd.model.alarms`), kept in step by the sampler.

Each alarm a queue asks for is one CloudWatch metric alarm on the queue's metrics (namespace `MNS`, dimensions
`AccountId` and `QueueName`), named `{prefix}{account}/{queue}/{kind}`: the prefix is the stack's, and the function's
role may create, describe and delete alarms of that prefix only. A run of the sampler reconciles:
- the queues changed in the last `recent_seconds` (created, or set: their `LastModifyTime`): their alarms are read
  by name and put or deleted as the attribute says;
- every queue, in a full pass: the prefix's alarms are listed and compared with what every queue asks for, so an
  alarm of a deleted queue (or one a run missed) goes. A full pass runs on a container's first run and at the top of
  each hour, and again on the next run while one had more changes to make than a run makes (`max_writes`:
  CloudWatch takes 3 PutMetricAlarm calls a second unless the quota is raised).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mnsd.ground.clock import Clock
from mnsd.metrics import MESSAGES_DEAD_LETTERED, MESSAGES_VISIBLE, NAMESPACE, OLDEST_MESSAGE_AGE, Metric
from mnsd.metrics.emf import DIMENSIONS
from mnsd.model.queues import Queue

PERIOD_SECONDS = 60
MAX_NAME = 255  # CloudWatch's longest alarm name
RECENT_SECONDS = 300
MAX_WRITES = 30  # alarm puts and deletes per run (10 s at CloudWatch's default 3 PutMetricAlarm calls a second)
DESCRIBE_NAMES = 100  # alarm names DescribeAlarms takes at once, and DeleteAlarms
OLDEST_MESSAGE_AGE_KIND = "OldestMessageAge"
VISIBLE_MESSAGES_KIND = "VisibleMessages"
DEAD_LETTERS_KIND = "DeadLetters"
KINDS = (OLDEST_MESSAGE_AGE_KIND, VISIBLE_MESSAGES_KIND, DEAD_LETTERS_KIND)


@dataclass(frozen=True)
class AlarmSpec:
    """One metric alarm, as put and as described: what is compared to decide whether it must be put again."""

    name: str
    metric: str
    account_id: str
    queue: str
    statistic: str
    threshold: float
    minutes: int
    treat_missing_data: str
    topic_arn: str

    def request(self) -> dict[str, object]:
        """PutMetricAlarm's arguments."""
        return {
            "AlarmName": self.name,
            "AlarmDescription": f"MNS queue {self.queue} of account {self.account_id}: {self.metric}",
            "Namespace": NAMESPACE,
            "MetricName": self.metric,
            "Dimensions": [
                {"Name": DIMENSIONS["account"], "Value": self.account_id},
                {"Name": DIMENSIONS["queue"], "Value": self.queue},
            ],
            "Statistic": self.statistic,
            "Period": PERIOD_SECONDS,
            "EvaluationPeriods": self.minutes,
            "Threshold": self.threshold,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "TreatMissingData": self.treat_missing_data,
            "AlarmActions": [self.topic_arn] if self.topic_arn else [],
        }

    @classmethod
    def described(cls, alarm: Mapping[str, Any]) -> AlarmSpec:
        """The spec of an alarm as DescribeAlarms answers it."""
        dimensions = {d["Name"]: d["Value"] for d in alarm.get("Dimensions", [])}
        actions = alarm.get("AlarmActions") or [""]
        return cls(
            name=alarm["AlarmName"],
            metric=alarm.get("MetricName", ""),
            account_id=dimensions.get(DIMENSIONS["account"], ""),
            queue=dimensions.get(DIMENSIONS["queue"], ""),
            statistic=alarm.get("Statistic", ""),
            threshold=float(alarm.get("Threshold", 0)),
            minutes=int(alarm.get("EvaluationPeriods", 0)),
            treat_missing_data=alarm.get("TreatMissingData", ""),
            topic_arn=actions[0],
        )


def alarm_name(prefix: str, account_id: str, queue: str, kind: str) -> str:
    """`{prefix}{account}/{queue}/{kind}`; a queue name too long for CloudWatch's 255 characters is cut, with a hash
    of the whole name kept so that names stay apart."""
    name = f"{prefix}{account_id}/{queue}/{kind}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(queue.encode("utf-8")).hexdigest()[:12]
    room = MAX_NAME - len(f"{prefix}{account_id}//{kind}") - len(digest) - 1
    return f"{prefix}{account_id}/{queue[:room]}~{digest}/{kind}"


def wanted(queue: Queue, prefix: str, default_topic: str) -> dict[str, AlarmSpec]:
    """The alarms a queue asks for, by name."""
    alarms = queue.attributes.queue_alarms
    topic = alarms.topic_arn or default_topic
    asked: list[tuple[str, Metric, str, float, int, str]] = []
    if alarms.oldest_message_age is not None:
        asked.append((OLDEST_MESSAGE_AGE_KIND, OLDEST_MESSAGE_AGE, "Maximum", alarms.oldest_message_age, 0, "missing"))
    if alarms.visible_messages is not None:
        asked.append((VISIBLE_MESSAGES_KIND, MESSAGES_VISIBLE, "Maximum", alarms.visible_messages, 0, "missing"))
    if alarms.dead_letters:  # (no count in a minute: nothing was dead-lettered)
        asked.append((DEAD_LETTERS_KIND, MESSAGES_DEAD_LETTERED, "Sum", 1, 1, "notBreaching"))
    specs = {}
    for kind, metric, statistic, threshold, minutes, missing in asked:
        name = alarm_name(prefix, queue.account_id, queue.name, kind)
        specs[name] = AlarmSpec(
            name,
            metric.name,
            queue.account_id,
            queue.name,
            statistic,
            float(threshold),
            minutes or alarms.minutes,
            missing,
            topic,
        )
    return specs


class AlarmStore(Protocol):
    """The metric alarms of one name prefix (CloudWatch, `CloudWatchAlarms`)."""

    def named(self, names: Sequence[str]) -> dict[str, AlarmSpec]:
        """Those of `names` that exist."""
        ...

    def every(self) -> dict[str, AlarmSpec]:
        """Every alarm of the prefix."""
        ...

    def put(self, spec: AlarmSpec) -> None: ...

    def delete(self, names: Sequence[str]) -> None:
        """Delete alarms that exist."""
        ...


class CloudWatchAlarms:
    """`AlarmStore` over a boto3 CloudWatch client."""

    def __init__(self, cloudwatch: Any, prefix: str) -> None:
        self.cloudwatch = cloudwatch
        self.prefix = prefix

    def _described(self, **selection: object) -> dict[str, AlarmSpec]:
        found: dict[str, AlarmSpec] = {}
        token = None
        while True:
            page = self.cloudwatch.describe_alarms(
                AlarmTypes=["MetricAlarm"], **selection, **({"NextToken": token} if token else {})
            )
            found.update((a["AlarmName"], AlarmSpec.described(a)) for a in page.get("MetricAlarms", []))
            token = page.get("NextToken")
            if not token:
                return found

    def named(self, names: Sequence[str]) -> dict[str, AlarmSpec]:
        found: dict[str, AlarmSpec] = {}
        for batch in _batches(names, DESCRIBE_NAMES):
            found.update(self._described(AlarmNames=list(batch)))
        return found

    def every(self) -> dict[str, AlarmSpec]:
        return self._described(AlarmNamePrefix=self.prefix)

    def put(self, spec: AlarmSpec) -> None:
        self.cloudwatch.put_metric_alarm(**spec.request())

    def delete(self, names: Sequence[str]) -> None:
        for batch in _batches(names, DESCRIBE_NAMES):
            self.cloudwatch.delete_alarms(AlarmNames=list(batch))


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    return (items[i : i + size] for i in range(0, len(items), size))


@dataclass(frozen=True)
class AlarmChanges:
    full: bool  # a full pass (every alarm of the prefix compared)
    put: int
    deleted: int
    pending: int  # changes left for the next run (more than `max_writes`)


@dataclass(eq=False)
class AlarmReconciler:
    """Puts and deletes the prefix's alarms as the queues' `Alarms` say (see the module's docstring)."""

    store: AlarmStore
    prefix: str
    default_topic: str
    clock: Clock
    recent_seconds: float = RECENT_SECONDS
    max_writes: int = MAX_WRITES
    _full_due: bool = field(default=True, init=False)  # a container's first run compares everything

    def __post_init__(self) -> None:
        if not self.prefix:
            raise ValueError(
                "an alarm prefix is needed: a full pass deletes the alarms of the prefix no queue asks for"
            )

    def reconcile(self, queues: Sequence[Queue]) -> AlarmChanges:
        """`queues`: every queue of every account (receivers are not alarmed: they are left out here)."""
        now = self.clock.now()
        full = self._full_due or int(now // 60) % 60 == 0
        if full:
            scope = queues
            existing = self.store.every()
        else:
            scope = [q for q in queues if q.last_modify_time >= now - self.recent_seconds]
            names = [alarm_name(self.prefix, q.account_id, q.name, kind) for q in scope for kind in KINDS]
            existing = self.store.named(names) if names else {}
        desired: dict[str, AlarmSpec] = {}
        for queue in scope:
            desired.update(wanted(queue, self.prefix, self.default_topic))
        puts = [spec for name, spec in sorted(desired.items()) if existing.get(name) != spec]
        deletes = sorted(set(existing) - set(desired))
        writes = len(puts) + len(deletes)
        for spec in puts[: self.max_writes]:
            self.store.put(spec)
        room = max(0, self.max_writes - len(puts))
        if deletes[:room]:
            self.store.delete(deletes[:room])
        pending = max(0, writes - self.max_writes)
        self._full_due = pending > 0  # (a recent change left over is found again by the full pass)
        return AlarmChanges(full, min(len(puts), self.max_writes), len(deletes[:room]), pending)
