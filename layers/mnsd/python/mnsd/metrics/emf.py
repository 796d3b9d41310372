"""The sink of the Lambda functions: CloudWatch Embedded Metric Format, through Powertools.

What an invocation counts is kept in memory and printed at its end (`flush`, called by the handler): one EMF line
per queue (or topic, or subscription) touched, its dimensions `AccountId` and `QueueName` (`TopicName`,
`SubscriptionName`), one value per metric (the sum of the invocation's), or each value of a sampled metric (a
message's size). CloudWatch Logs extracts the metrics from the function's log: no PutMetricData call, nothing on
the request path but a dictionary update.
"""

from __future__ import annotations

import threading

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import EphemeralMetrics

from mnsd.metrics import NAMESPACE, Labels, Metric, monitored

# The CloudWatch dimension of each label (SQS's `QueueName`; the account beside it).
DIMENSIONS = {
    "account": "AccountId",
    "queue": "QueueName",
    "topic": "TopicName",
    "subscription": "SubscriptionName",
}

logger = Logger(service="mns")


class EmfMetrics:
    """`default`: whether a queue or topic that left MetricsEnabled unset is published (`mnsd.metrics.monitored`)."""

    def __init__(self, namespace: str = NAMESPACE, default: bool = True) -> None:
        self.default = default
        self._lock = threading.Lock()  # the push functions count from several threads
        self._pending: dict[Labels, dict[Metric, list[float]]] = {}
        self._printing = threading.Lock()
        self._line = EphemeralMetrics(namespace=namespace, service="")  # one line at a time; no `service` dimension

    def monitors(self, chosen: bool | None) -> bool:
        """CloudWatch bills each series: only the queues and topics monitored by choice or by default."""
        return monitored(chosen, self.default)

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        with self._lock:
            values = self._pending.setdefault(labels, {}).setdefault(metric, [])
            if metric.sampled or not values:
                values.append(value)
            else:
                values[0] += value

    def flush(self) -> None:
        """Print one EMF line per labels counted since the last flush (a line holds at most 100 values of a metric:
        Powertools prints a full one at once). A failure is logged: the calls these counts describe are done."""
        with self._lock:
            pending, self._pending = self._pending, {}
        with self._printing:
            for labels, metrics in pending.items():
                try:
                    self._print(labels, metrics)
                except Exception:
                    self._line.clear_metrics()
                    logger.exception("metrics lost", extra={"labels": labels.pairs()})

    def _print(self, labels: Labels, metrics: dict[Metric, list[float]]) -> None:
        line = self._line  # (flushing clears it for the next line)
        for label, text in labels.pairs():
            line.add_dimension(name=DIMENSIONS[label], value=text)
        for metric, values in metrics.items():
            for value in values:
                line.add_metric(name=metric.name, unit=metric.unit, value=value)
        if line.metric_set:  # (else Powertools printed them all, 100 values at a time)
            line.flush_metrics()
