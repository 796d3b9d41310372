"""A queue's minutes on AWS: its series in CloudWatch (namespace `MNS`, dimensions `AccountId` and `QueueName`), read
with one GetMetricData call (paged) at a 60 s period: a count's Sum, a gauge's Maximum. The counts are the EMF lines
of the route functions (`mnsd.metrics.emf`); the gauges are the sampler's. A series that does not exist (an idle
queue, a queue whose gauges are not sampled) has no data points: its minutes are zeros.

The client is made by the services' client factory on first use (`cloudwatch`), never at import. GetMetricData is
billed per metric asked for: 9 per call (README, "Metrics").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from mnsd.metrics import NAMESPACE, Metric
from mnsd.metrics.emf import DIMENSIONS
from mnsd.metrics.minutes import MINUTE_COUNTS, MINUTE_MS, MINUTE_SERIES, Minute, MinuteWindow, minutes_of, zeros
from mnsd.model.queues import Queue

PERIOD_SECONDS = 60


def _time(time_ms: int) -> datetime:
    return datetime.fromtimestamp(time_ms / 1000, UTC)


def metric_queries(account_id: str, queue: str) -> list[dict[str, Any]]:
    """One query per series of MINUTE_SERIES (its id `m{position}`)."""
    dimensions = [{"Name": DIMENSIONS["account"], "Value": account_id}, {"Name": DIMENSIONS["queue"], "Value": queue}]
    return [
        {
            "Id": f"m{i}",
            "MetricStat": {
                "Metric": {"Namespace": NAMESPACE, "MetricName": metric.name, "Dimensions": dimensions},
                "Period": PERIOD_SECONDS,
                "Stat": "Sum" if metric in MINUTE_COUNTS else "Maximum",
            },
            "ReturnData": True,
        }
        for i, metric in enumerate(MINUTE_SERIES)
    ]


class CloudWatchMinutes:
    def __init__(self, clients: Callable[[str], Any]) -> None:
        self.clients = clients

    def last_hour(self, queue: Queue, window: MinuteWindow) -> list[Minute]:
        values = zeros(window)
        for metric, time_ms, value in self._points(queue, window):
            index = window.index(time_ms)
            if index is not None:
                values[index][metric] = value
        return minutes_of(window, values)

    def _points(self, queue: Queue, window: MinuteWindow) -> Iterator[tuple[Metric, int, float]]:
        """(series, minute, value) of every data point in the window, over every page of the answer."""
        cloudwatch = self.clients("cloudwatch")
        request: dict[str, Any] = {
            "MetricDataQueries": metric_queries(queue.account_id, queue.name),
            "StartTime": _time(window.first_ms),
            "EndTime": _time(window.end_ms),
            "ScanBy": "TimestampAscending",
        }
        while True:
            answer = cloudwatch.get_metric_data(**request)
            for result in answer.get("MetricDataResults", []):
                metric = MINUTE_SERIES[int(result["Id"][1:])]
                for at, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=True):
                    yield metric, int(at.timestamp() * 1000) // MINUTE_MS * MINUTE_MS, float(value)
            token = answer.get("NextToken")
            if not token:
                return
            request["NextToken"] = token
