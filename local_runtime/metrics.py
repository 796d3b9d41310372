"""`GET /metrics` of the local runtime: the queues' and topics' metrics in the Prometheus text exposition format.

Counters are the process's (`mnsd.metrics.process.ProcessMetrics`: they start from zero when the server does, which
Prometheus reads as a counter reset); gauges are read from the engine at each scrape (`QueueControl.backlog`). Every
queue and receiver of every account appears, an idle one with zeros, and every topic of those accounts; a push result
appears once counted. Served without a signature, to loopback clients only (`local_runtime.server`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

from mnsd.ground.clock import ms
from mnsd.ground.http import HttpResponse
from mnsd.metrics import (
    MESSAGES_PUBLISHED,
    PUSH_RESULTS,
    QUEUE_COUNTS,
    QUEUE_GAUGES,
    Labels,
    Metric,
    queue_labels,
    topic_labels,
)
from mnsd.metrics.minutes import gauge_values
from mnsd.metrics.process import ProcessMetrics
from mnsd.model.topics import Topic
from mnsd.services import Services

METRICS_PATH = "/metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TOPIC_PAGE = 1000

Sample = tuple[tuple[tuple[str, str], ...], float]  # (labels, value)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def family(metric: Metric, kind: str, samples: Iterable[Sample]) -> Iterator[str]:
    """One family's lines: HELP, TYPE, then a line per labels (in label order)."""
    yield f"# HELP {metric.family} {metric.description}"
    yield f"# TYPE {metric.family} {kind}"
    for labels, value in sorted(samples):
        text = ",".join(f'{name}="{_escape(v)}"' for name, v in labels)
        yield f"{metric.family}{{{text}}} {_number(value)}"


class MetricsPage:
    """The exposition, built at each scrape from the counts so far and the engine's gauges."""

    def __init__(self, services: Callable[[], Services], counts: ProcessMetrics) -> None:
        self.services = services
        self.counts = counts

    def __call__(self) -> HttpResponse:
        return HttpResponse(200, self.text().encode("utf-8"), {"Content-Type": CONTENT_TYPE})

    def text(self) -> str:
        services = self.services()
        counted = self.counts.counts()
        queues = list(services.queues.every_queue())
        now_ms = ms(services.clock.now())
        gauges = {queue_labels(q.account_id, q.name): gauge_values(services.queues.backlog(q), now_ms) for q in queues}
        accounts = {q.account_id for q in queues} | {labels.account for _, labels in counted}
        topics = [topic_labels(t.account_id, t.name) for a in sorted(accounts) for t in _topics(services, a)]
        lines: list[str] = []
        for metric in QUEUE_COUNTS:
            lines += family(metric, "counter", _counters(metric, counted, gauges))
        lines += family(MESSAGES_PUBLISHED, "counter", _counters(MESSAGES_PUBLISHED, counted, topics))
        lines += family(PUSH_RESULTS[0], "counter", _push_results(counted))
        for metric in QUEUE_GAUGES:
            lines += family(metric, "gauge", ((labels.pairs(), values[metric]) for labels, values in gauges.items()))
        return "\n".join(lines) + "\n"


def _topics(services: Services, account_id: str) -> Iterator[Topic]:
    marker = None
    while True:
        topics, marker = services.topics.list_topics(account_id, "", TOPIC_PAGE, marker)
        yield from topics
        if marker is None or not topics:
            return


def _counters(metric: Metric, counted: dict[tuple[Metric, Labels], float], known: Iterable[Labels]) -> list[Sample]:
    """The metric's count for each labels counted, and zero for each known one not counted yet."""
    values = dict.fromkeys(known, 0.0)
    for (counted_metric, labels), value in counted.items():
        if counted_metric == metric:
            values[labels] = value
    return [(labels.pairs(), value) for labels, value in values.items()]


def _push_results(counted: dict[tuple[Metric, Labels], float]) -> list[Sample]:
    """Each subscription's push results, labelled with their `result`."""
    values: dict[tuple[tuple[str, str], ...], float] = defaultdict(float)
    for (metric, labels), value in counted.items():
        if metric in PUSH_RESULTS:
            values[(*labels.pairs(), ("result", metric.result))] += value
    return list(values.items())
