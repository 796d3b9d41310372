"""Live metrics: what the services count on the request path, and the gauges read from the engine.

The services record each event once, where it happens (`MetricsSink.add`), in the domain's words: a message sent,
received, deleted or dead-lettered, an empty receive, a receive refused by the queue's QPS limit, a message published,
a push attempt's result. Where the counts go is the sink's affair:
- `mnsd.metrics.process.ProcessMetrics`: counters in the process (the local runtime serves them on `GET /metrics`);
- `mnsd.metrics.emf.EmfMetrics`: CloudWatch Embedded Metric Format lines, printed by the Lambda handler at the end
  of each invocation (`flush`): CloudWatch Logs turns them into metrics, with no call on the request path;
- `mnsd.metrics.ring.MinuteRing`: the last hour by minute, per queue (the local runtime's console chart, beside
  its counters: `TeeMetrics`);
- `NoMetrics`: nothing (services built without a sink: tests, tools).

Which queues and topics are monitored is the user's choice on AWS, where CloudWatch bills each metric series: a
queue's or topic's `MetricsEnabled` (True, False, or unset) and the stack's default for those that left it unset
(`monitored`). The services ask their sink whether it publishes a resource's counts (`MetricsSink.monitors`): the
EMF sink honours the choice, the local runtime's counters count every queue and topic whatever it says.

Names: CloudWatch's are SQS's for queues and SNS's for topics, so an SQS or SNS dashboard, alarm or KEDA trigger
ports by changing the namespace and dimensions; the Prometheus families are the local runtime's. A receiver is
counted as a queue, under its address (`{queue}.{receiver}`), as the queue routes reach it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

COUNT = "Count"
BYTES = "Bytes"
SECONDS = "Seconds"
NAMESPACE = "MNS"  # the CloudWatch namespace of the queue and topic metrics

# Push results (the `result` label of `mns_push_deliveries_total`).
DELIVERED = "delivered"
FAILED = "failed"
DEAD_LETTERED = "dead_lettered"
DROPPED = "dropped"


@dataclass(frozen=True)
class Metric:
    """One metric: its CloudWatch name and unit, and the Prometheus family it is exposed in locally (with the
    `result` label it has there, for the push results that CloudWatch names apart). The values of a `sampled`
    metric are kept one by one on CloudWatch (its Average and Maximum are per message, as SQS's SentMessageSize);
    the others are summed."""

    name: str
    unit: str
    family: str
    description: str
    result: str = ""
    sampled: bool = False


@dataclass(frozen=True)
class Labels:
    """Where a count belongs: an account's queue (or receiver, by its address), or topic and subscription."""

    account: str
    queue: str = ""
    topic: str = ""
    subscription: str = ""

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The labels that are set, in a fixed order: (account, queue) or (account, topic[, subscription])."""
        named = (("account", self.account), ("queue", self.queue), ("topic", self.topic))
        return tuple((k, v) for k, v in (*named, ("subscription", self.subscription)) if v)


def queue_labels(account_id: str, queue: str) -> Labels:
    return Labels(account_id, queue=queue)


def topic_labels(account_id: str, topic: str, subscription: str = "") -> Labels:
    return Labels(account_id, topic=topic, subscription=subscription)


# --- counted on the request path -----------------------------------------------------------------------------

MESSAGES_SENT = Metric(
    "NumberOfMessagesSent", COUNT, "mns_messages_sent_total", "Messages stored by SendMessage and BatchSendMessage"
)
SENT_MESSAGE_SIZE = Metric(
    "SentMessageSize", BYTES, "mns_sent_message_bytes_total", "Bytes of the bodies of the messages sent", sampled=True
)
MESSAGES_RECEIVED = Metric(
    "NumberOfMessagesReceived", COUNT, "mns_messages_received_total", "Messages returned by receives"
)
EMPTY_RECEIVES = Metric(
    "NumberOfEmptyReceives", COUNT, "mns_empty_receives_total", "Receives that ended without a message"
)
MESSAGES_DELETED = Metric("NumberOfMessagesDeleted", COUNT, "mns_messages_deleted_total", "Messages deleted")
MESSAGES_DEAD_LETTERED = Metric(
    "NumberOfMessagesDeadLettered",
    COUNT,
    "mns_messages_dead_lettered_total",
    "Messages moved out of the queue to its dead-letter queue",
)
QPS_LIMIT_EXCEEDED = Metric(
    "QpsLimitExceeded", COUNT, "mns_qps_limit_exceeded_total", "Receives refused by the queue's TenantRateLimitPolicy"
)
QUEUE_COUNTS = (
    MESSAGES_SENT,
    SENT_MESSAGE_SIZE,
    MESSAGES_RECEIVED,
    EMPTY_RECEIVES,
    MESSAGES_DELETED,
    MESSAGES_DEAD_LETTERED,
    QPS_LIMIT_EXCEEDED,
)

MESSAGES_PUBLISHED = Metric(
    "NumberOfMessagesPublished", COUNT, "mns_topic_messages_published_total", "Messages published to the topic"
)
_PUSHES = "mns_push_deliveries_total"
_PUSHES_HELP = "Push attempts by result, and pushes given up (dead-lettered or dropped)"
PUSHES_DELIVERED = Metric("NumberOfNotificationsDelivered", COUNT, _PUSHES, _PUSHES_HELP, DELIVERED)
PUSHES_FAILED = Metric("NumberOfNotificationsFailed", COUNT, _PUSHES, _PUSHES_HELP, FAILED)
PUSHES_DEAD_LETTERED = Metric("NumberOfNotificationsRedrivenToDlq", COUNT, _PUSHES, _PUSHES_HELP, DEAD_LETTERED)
PUSHES_DROPPED = Metric("NumberOfNotificationsDropped", COUNT, _PUSHES, _PUSHES_HELP, DROPPED)
PUSH_RESULTS = (PUSHES_DELIVERED, PUSHES_FAILED, PUSHES_DEAD_LETTERED, PUSHES_DROPPED)
# Sampled once a minute (`mnsd.monitoring.retries`): pushes whose first attempt failed and whose retries go on (running
# executions of the push retry state machine), per subscription. On AWS only: the local runtime serves no such family.
PUSH_RETRIES_PENDING = Metric(
    "NumberOfNotificationRetriesPending",
    COUNT,
    "mns_push_retries_pending",
    "Pushes waiting for a retry (running retry executions)",
)

# --- gauges, read from the engine (`mnsd.model.queues.Backlog`) ---------------------------------------------

MESSAGES_VISIBLE = Metric(
    "ApproximateNumberOfMessagesVisible", COUNT, "mns_messages_visible", "Active messages (ActiveMessages)"
)
MESSAGES_INVISIBLE = Metric(
    "ApproximateNumberOfMessagesNotVisible", COUNT, "mns_messages_invisible", "Inactive messages (InactiveMessages)"
)
MESSAGES_DELAYED = Metric(
    "ApproximateNumberOfMessagesDelayed", COUNT, "mns_messages_delayed", "Delayed messages (DelayMessages)"
)
OLDEST_MESSAGE_AGE = Metric(
    "ApproximateAgeOfOldestMessage",
    SECONDS,
    "mns_oldest_message_age_seconds",
    "Seconds since the oldest message not delayed (Active or Inactive) was enqueued; 0 without one",
)
QUEUE_GAUGES = (MESSAGES_VISIBLE, MESSAGES_INVISIBLE, MESSAGES_DELAYED, OLDEST_MESSAGE_AGE)
# A FIFO queue's groups with a message in flight (GetQueueAttributes' MessageGroupsInFlight, counted up to 1,000):
# SQS's name for its FIFO queues' metric.
MESSAGE_GROUPS_IN_FLIGHT = Metric(
    "ApproximateNumberOfGroupsWithInflightMessages",
    COUNT,
    "mns_message_groups_in_flight",
    "FIFO queue: groups with a message in flight (MessageGroupsInFlight, up to 1,000)",
)


def monitored(chosen: bool | None, default: bool) -> bool:
    """Whether a queue or topic is monitored: its own choice (MetricsEnabled True or False) where it made one, else
    the stack's default (`Settings.metrics_default`), read at each use: a change of the default reaches every queue
    and topic that left the choice to it."""
    return default if chosen is None else chosen


class MetricsSink(Protocol):
    """Where the services' counts go."""

    def monitors(self, chosen: bool | None) -> bool:
        """Whether the counts of a queue or topic whose MetricsEnabled is `chosen` (None: unset) are to be added:
        a sink that publishes them at a price honours the choice (`monitored`); one that keeps them for free counts
        everything. Asked by the services before `add`, with the record they already hold (no read)."""
        ...

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        """Count `value` (a number of messages or bytes) of `metric` for `labels`. Never raises, never waits on I/O."""
        ...

    def flush(self) -> None:
        """Publish what was counted since the last flush (the end of a Lambda invocation); may do nothing."""
        ...


class NoMetrics:
    """Counts nothing."""

    def monitors(self, chosen: bool | None) -> bool:
        return False

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        pass

    def flush(self) -> None:
        pass


class TeeMetrics:
    """Counts into each of `sinks` (the local runtime's counters and its minutes)."""

    def __init__(self, *sinks: MetricsSink) -> None:
        self.sinks = sinks

    def monitors(self, chosen: bool | None) -> bool:
        """What any of its sinks counts."""
        return any(sink.monitors(chosen) for sink in self.sinks)

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        for sink in self.sinks:
            sink.add(metric, labels, value)

    def flush(self) -> None:
        for sink in self.sinks:
            sink.flush()
