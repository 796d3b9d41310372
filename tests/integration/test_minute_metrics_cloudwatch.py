"""The console's minute chart on AWS: `GET /queues/{q}?metrics=minutely` reads the queue's CloudWatch series (moto).

The counts reach CloudWatch as the route functions print them: EMF lines (`mnsd.metrics.emf`), which CloudWatch Logs
turns into metrics (here: `extract`, putting each line's values under its namespace and dimensions); the gauges as
the sampler puts them (same namespace and dimensions). The reader asks for exactly those series."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from email.utils import formatdate
from typing import Any

import boto3
import pytest

from local_runtime.tables import create_tables
from mnsd.access.authentication import sign, string_to_sign
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import Settings
from mnsd.metrics import (
    MESSAGES_DELETED,
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    MESSAGES_VISIBLE,
    NAMESPACE,
    OLDEST_MESSAGE_AGE,
    SENT_MESSAGE_SIZE,
    queue_labels,
)
from mnsd.metrics.cloudwatch import CloudWatchMinutes, metric_queries
from mnsd.metrics.emf import EmfMetrics
from mnsd.metrics.minutes import MINUTE_MS, MINUTE_SERIES, MinuteWindow
from mnsd.model.queues import Queue, QueueAttributes
from mnsd.request import api
from mnsd.services import Services, build_services
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
NS = "{http://mns.aliyuncs.com/doc/v1}"
START = 1_700_000_010.0  # 30 s into a minute


@pytest.fixture
def cloudwatch(aws_env):
    return boto3.client("cloudwatch", region_name="us-east-1")


@pytest.fixture
def services(dynamodb, cloudwatch) -> Services:
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET")
    create_tables(dynamodb, settings)
    clients = {"dynamodb": dynamodb, "cloudwatch": cloudwatch}
    return build_services(
        settings, dynamodb=dynamodb, clock=ManualClock(START), minutes=CloudWatchMinutes(clients.__getitem__)
    )


def extract(cloudwatch: Any, line: dict[str, Any], at: datetime) -> None:
    """What CloudWatch Logs does with an EMF line: each value of each metric under the line's dimensions."""
    (directive,) = line["_aws"]["CloudWatchMetrics"]
    dimensions = [{"Name": name, "Value": line[name]} for name in directive["Dimensions"][0]]
    data = [
        {"MetricName": m["Name"], "Dimensions": dimensions, "Value": v, "Unit": m["Unit"], "Timestamp": at}
        for m in directive["Metrics"]
        for v in line[m["Name"]]
    ]
    cloudwatch.put_metric_data(Namespace=directive["Namespace"], MetricData=data)


def put_gauge(cloudwatch: Any, name: str, metric, value: float, at: datetime) -> None:
    """A gauge as the sampler puts it (namespace `MNS`, dimensions `AccountId` and `QueueName`)."""
    dimensions = [{"Name": "AccountId", "Value": ACCOUNT}, {"Name": "QueueName", "Value": name}]
    cloudwatch.put_metric_data(
        Namespace=NAMESPACE,
        MetricData=[{"MetricName": metric.name, "Dimensions": dimensions, "Value": value, "Timestamp": at}],
    )


def printed(capsys, count) -> list[dict[str, Any]]:
    """The EMF lines a function prints for what `count(sink)` counts."""
    sink = EmfMetrics()
    count(sink)
    sink.flush()
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"')]


def minute_start(services: Services, minutes_ago: int) -> datetime:
    start_ms = int(services.clock.now() * 1000) // MINUTE_MS * MINUTE_MS - minutes_ago * MINUTE_MS
    return datetime.fromtimestamp((start_ms + 5_000) / 1000, UTC)  # 5 s into that minute


def get_minutes(services: Services, name: str) -> list[dict[str, int]]:
    headers = {"x-mns-version": "2015-06-06", "x-mns-date": formatdate(services.clock.now(), usegmt=True)}
    request = HttpRequest("GET", f"/queues/{name}", "metrics=minutely", headers, b"", {"queue": name})
    request.headers["authorization"] = f"MNS KEYID:{sign('SECRET', string_to_sign(request, headers['x-mns-date']))}"
    response = api.handle("get_queue", request, services)
    root = ET.fromstring(response.body)
    assert response.status == 200 and root.tag == NS + "QueueMetrics", response.body
    return [{child.tag[len(NS) :]: int(child.text) for child in b} for b in root.iter(NS + "Bucket")]


def test_the_minutes_are_the_queues_emf_counts_and_sampled_gauges(services, cloudwatch, capsys) -> None:
    services.queues.create_queue(ACCOUNT, "orders")
    orders = queue_labels(ACCOUNT, "orders")
    # two invocations a minute ago (their counts summed), one in the current minute; another queue's line
    for count, minutes_ago in (
        (lambda sink: (sink.add(MESSAGES_SENT, orders, 3), sink.add(SENT_MESSAGE_SIZE, orders, 10)), 1),
        (lambda sink: sink.add(MESSAGES_SENT, orders, 2), 1),
        (lambda sink: (sink.add(MESSAGES_RECEIVED, orders, 4), sink.add(MESSAGES_DELETED, orders)), 0),
        (lambda sink: sink.add(MESSAGES_SENT, queue_labels(ACCOUNT, "other"), 9), 0),
        (lambda sink: sink.add(MESSAGES_SENT, queue_labels("2000000000000002", "orders"), 9), 0),
    ):
        for line in printed(capsys, count):
            extract(cloudwatch, line, minute_start(services, minutes_ago))
    put_gauge(cloudwatch, "orders", MESSAGES_VISIBLE, 3, minute_start(services, 0))
    put_gauge(cloudwatch, "orders", MESSAGES_VISIBLE, 5, minute_start(services, 0))  # the minute's highest reading
    put_gauge(cloudwatch, "orders", OLDEST_MESSAGE_AGE, 42.4, minute_start(services, 0))
    put_gauge(cloudwatch, "orders", MESSAGES_VISIBLE, 8, minute_start(services, 61))  # before the window

    found = get_minutes(services, "orders")

    assert len(found) == 60
    assert [b["Time"] for b in found] == [t // 1000 for t in MinuteWindow.ending(services.clock.now()).starts()]
    *earlier, previous, current = found
    assert not any(v for b in earlier for k, v in b.items() if k != "Time")
    assert (previous["NumberOfMessagesSent"], previous["NumberOfMessagesReceived"]) == (5, 0)
    assert current["NumberOfMessagesSent"] == 0
    assert (current["NumberOfMessagesReceived"], current["NumberOfMessagesDeleted"]) == (4, 1)
    assert (current["ApproximateNumberOfMessagesVisible"], current["ApproximateAgeOfOldestMessage"]) == (5, 42)


def test_a_queue_without_series_answers_zeros(services) -> None:
    services.queues.create_queue(ACCOUNT, "quiet")
    found = get_minutes(services, "quiet")
    assert len(found) == 60
    assert not any(v for b in found for k, v in b.items() if k != "Time")


def test_each_series_is_asked_with_the_emf_dimensions_sum_for_counts_and_maximum_for_gauges(capsys) -> None:
    (line,) = printed(capsys, lambda sink: sink.add(MESSAGES_SENT, queue_labels(ACCOUNT, "orders")))
    (directive,) = line["_aws"]["CloudWatchMetrics"]
    queries = metric_queries(ACCOUNT, "orders")
    assert [q["MetricStat"]["Metric"]["MetricName"] for q in queries] == [m.name for m in MINUTE_SERIES]
    for query in queries:
        stat = query["MetricStat"]
        assert stat["Metric"]["Namespace"] == directive["Namespace"]
        assert [(d["Name"], d["Value"]) for d in stat["Metric"]["Dimensions"]] == [
            (name, line[name]) for name in directive["Dimensions"][0]
        ]
        assert stat["Period"] == 60
    stats = [q["MetricStat"]["Stat"] for q in queries]
    assert stats == ["Sum"] * 5 + ["Maximum"] * 4


class PagedCloudWatch:
    """GetMetricData answering in two pages (CloudWatch pages a large answer with NextToken): the current minute's
    point of a series first, then the previous minute's."""

    def __init__(self, window: MinuteWindow) -> None:
        self.minutes = [datetime.fromtimestamp(t / 1000, UTC) for t in window.starts()[-2:]]
        self.requests: list[dict[str, Any]] = []

    def get_metric_data(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        later = "NextToken" in request
        point = {"Id": "m0", "Timestamps": [self.minutes[0 if later else 1]], "Values": [2.0 if later else 1.0]}
        return {"MetricDataResults": [point], **({} if later else {"NextToken": "more"})}


def test_every_page_is_read() -> None:
    window = MinuteWindow.ending(START)
    client = PagedCloudWatch(window)
    queue = Queue(ACCOUNT, "orders", "qid", QueueAttributes(), 0, 0)
    minutes = CloudWatchMinutes(lambda name: client).last_hour(queue, window)
    assert [m.values[MESSAGES_SENT] for m in minutes[-2:]] == [2.0, 1.0]
    assert [r.get("NextToken") for r in client.requests] == [None, "more"]
    first = client.requests[0]
    assert first["StartTime"] == datetime.fromtimestamp(window.first_ms / 1000, UTC)
    assert first["EndTime"] == datetime.fromtimestamp(window.end_ms / 1000, UTC)
