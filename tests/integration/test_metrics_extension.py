"""The hourly metrics extension (`?metrics=hourly`) over moto: the signing tenant's log records only,
a bounded read, the MNS errors for bad parameters."""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from email.utils import formatdate

import pytest

from local_runtime.tables import create_tables
from mnsd.access.authentication import sign, string_to_sign
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import Settings
from mnsd.log import metrics
from mnsd.log.oplog import LogRecord
from mnsd.request import api
from mnsd.services import Services, build_services

ACCOUNT = "1000000000000001"

OTHER = "2000000000000002"
NS = "{http://mns.aliyuncs.com/doc/v1}"


@pytest.fixture
def services(dynamodb, clock) -> Services:
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET,{OTHER}:OTHERKEY:OTHERSECRET")
    create_tables(dynamodb, settings)
    return build_services(settings, dynamodb=dynamodb, clock=clock)


def call(services: Services, route: str, method: str, path: str, query: str = "", body: str = "", **params: str):
    """A request signed with x-mns-date (as the console signs), answered by the API pipeline."""
    headers = {"x-mns-version": "2015-06-06", "x-mns-date": formatdate(services.clock.now(), usegmt=True)}
    if body:
        headers["content-type"] = "text/xml;charset=UTF-8"
    request = HttpRequest(method, path, query, headers, body.encode(), params)
    signature = sign("SECRET", string_to_sign(request, headers["x-mns-date"]))
    request.headers["authorization"] = f"MNS KEYID:{signature}"
    response = api.handle(route, request, services)
    return response.status, ET.fromstring(response.body) if response.body else None


def log(services: Services, account: str, kind: str, resource: str, event: str, time_ms: int, n: int, **fields):
    services.storage.log.write(
        [LogRecord(account, kind, resource, event, time_ms + i, f"m{i}", uuid.uuid4().hex, **fields) for i in range(n)]
    )


def buckets(root: ET.Element) -> list[dict[str, int]]:
    return [{child.tag[len(NS) :]: int(child.text) for child in bucket} for bucket in root.iter(NS + "Bucket")]


def test_queue_metrics_count_the_tenants_own_events_per_hour(services, clock) -> None:
    status, _ = call(
        services,
        "put_queue",
        "PUT",
        "/queues/q1",
        body="<Queue><LoggingEnabled>True</LoggingEnabled></Queue>",
        queue="q1",
    )
    assert status == 201
    now_ms = int(clock.now() * 1000)
    hour = now_ms // metrics.HOUR_MS * metrics.HOUR_MS
    log(services, ACCOUNT, "queue", "q1", "send", hour - metrics.HOUR_MS, 3)  # the previous hour
    log(services, ACCOUNT, "queue", "q1", "receive", hour + 1, 2, dequeue_count=1)
    log(services, ACCOUNT, "queue", "q1", "delete", hour + 10, 1)
    log(services, OTHER, "queue", "q1", "send", hour + 1, 5)  # another tenant's queue of the same name
    log(services, ACCOUNT, "queue", "q2", "send", hour + 1, 7)  # another queue
    log(services, ACCOUNT, "queue", "q1", "send", now_ms + 1000, 4)  # after now (a later request's)

    status, root = call(services, "get_queue", "GET", "/queues/q1", "metrics=hourly&hours=2", queue="q1")

    assert status == 200 and root.tag == NS + "QueueMetrics"
    assert root.find(NS + "LoggingEnabled").text == "True"
    assert root.find(NS + "Truncated").text == "False"
    previous, current = buckets(root)
    assert current["Time"] - previous["Time"] == 3600 and current["Time"] * 1000 == hour
    assert (previous["Sends"], previous["Receives"], previous["Deletes"]) == (3, 0, 0)
    assert (current["Sends"], current["Receives"], current["Deletes"]) == (0, 2, 1)


def test_plain_get_queue_attributes_is_unchanged(services) -> None:
    call(services, "put_queue", "PUT", "/queues/q1", queue="q1")
    status, root = call(services, "get_queue", "GET", "/queues/q1", queue="q1")
    assert status == 200 and root.tag == NS + "Queue"
    assert root.find(NS + "ActiveMessages").text == "0"


def test_the_read_stops_at_the_item_limit_and_says_so(services, clock, monkeypatch) -> None:
    call(services, "put_queue", "PUT", "/queues/q1", queue="q1")
    log(services, ACCOUNT, "queue", "q1", "send", int(clock.now() * 1000) - 1000, 5)
    monkeypatch.setattr(metrics, "MAX_ITEMS", 3)
    status, root = call(services, "get_queue", "GET", "/queues/q1", "metrics=hourly&hours=1", queue="q1")
    assert status == 200
    assert root.find(NS + "Truncated").text == "True"
    assert sum(b["Sends"] for b in buckets(root)) == 3


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("metrics=daily", 400, "InvalidArgument"),
        ("metrics=hourly&hours=0", 400, "InvalidArgument"),
        (f"metrics=hourly&hours={metrics.MAX_HOURS + 1}", 400, "InvalidArgument"),
        ("metrics=hourly&hours=x", 400, "InvalidArgument"),
    ],
)
def test_bad_parameters_get_mns_errors(services, query: str, status: int, code: str) -> None:
    call(services, "put_queue", "PUT", "/queues/q1", queue="q1")
    got, root = call(services, "get_queue", "GET", "/queues/q1", query, queue="q1")
    assert (got, root.find(NS + "Code").text) == (status, code)


def test_a_missing_queue_or_subscription_is_not_found(services) -> None:
    status, root = call(services, "get_queue", "GET", "/queues/none", "metrics=hourly", queue="none")
    assert (status, root.find(NS + "Code").text) == (404, "QueueNotExist")
    call(services, "put_topic", "PUT", "/topics/t1", topic="t1")
    status, root = call(
        services, "get_subscription", "GET", "/topics/t1/subscriptions/none", "metrics=hourly", topic="t1",
        subscription="none",
    )  # fmt: skip
    assert (status, root.find(NS + "Code").text) == (404, "SubscriptionNotExist")


def test_subscription_metrics_count_its_pushes(services, clock) -> None:
    call(
        services,
        "put_topic",
        "PUT",
        "/topics/t1",
        body="<Topic><LoggingEnabled>True</LoggingEnabled></Topic>",
        topic="t1",
    )
    body = "<Subscription><Endpoint>http://push.example.com/hook</Endpoint></Subscription>"
    status, _ = call(
        services, "put_subscription", "PUT", "/topics/t1/subscriptions/s1", body=body, topic="t1", subscription="s1"
    )
    assert status == 201
    at = int(clock.now() * 1000) - 1000
    log(services, ACCOUNT, "topic", "t1", "push", at, 2, subscription="s1", attempt=1, outcome="success")
    log(services, ACCOUNT, "topic", "t1", "push", at + 100, 1, subscription="s1", attempt=2, outcome="failure")
    log(services, ACCOUNT, "topic", "t1", "push", at, 4, subscription="s2", attempt=1, outcome="success")
    log(services, ACCOUNT, "topic", "t1", "publish", at, 3)

    status, root = call(
        services, "get_subscription", "GET", "/topics/t1/subscriptions/s1", "metrics=hourly&hours=1", topic="t1",
        subscription="s1",
    )  # fmt: skip

    assert status == 200 and root.tag == NS + "SubscriptionMetrics"
    (hour,) = buckets(root)
    assert (hour["Deliveries"], hour["FirstTrySuccesses"], hour["Retries"], hour["Failures"]) == (2, 2, 1, 1)
