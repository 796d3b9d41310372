"""A scripted workload, on each engine, and the exact metrics it must produce: read from `GET /metrics` (the local
runtime's page, with a strict Prometheus text reader) and from the EMF lines the Lambda handlers print for the same
calls. The calls go through the route handlers (`make_handler`) as API Gateway events, signed; the clock is moved
by hand, so the gauges (the age of the oldest message included) are known to the millisecond.

The workload, on `orders` (VisibilityTimeout 30, DlqPolicy to `orders-dlq` after 1 receive; a receiver `audit`):
  t0     send `alpha`; batch send `b1` `b2` `b3`; send `later` delayed 120 s; publish to the topic `news`
  t0+10  batch receive (4: alpha b1 b2 b3); delete alpha; batch delete b1 b2 (and a spent handle); receive: empty
  t0+45  b3 visible again, received once: a receive moves it to `orders-dlq` and finds nothing else (empty);
         send `c`, receive it (in flight)
  t0+50  scrape
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from email.utils import formatdate
from typing import Any
from urllib.parse import quote

import boto3
import pytest
from moto import mock_aws

from local_runtime.dispatch import LocalContext, api_gateway_event, compile_routes
from local_runtime.metrics import MetricsPage
from local_runtime.tables import create_tables
from mnsd.access.authentication import sign, string_to_sign
from mnsd.entry.lambda_handler import make_handler
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import Settings
from mnsd.metrics import Labels, Metric
from mnsd.metrics.emf import EmfMetrics
from mnsd.metrics.process import ProcessMetrics
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock
from tests.support.prometheus_text import QUEUE_COUNTERS, parse

ACCOUNT, KEY_ID, SECRET = "1000000000000001", "WORKLOADKEY", "WORKLOADSECRET"
NS = "http://mns.aliyuncs.com/doc/v1/"
ROUTES = compile_routes()


class BothSinks:
    """The local runtime's counters and the Lambda functions' EMF lines, fed by the same calls."""

    def __init__(self) -> None:
        self.process = ProcessMetrics()
        self.emf = EmfMetrics()

    def monitors(self, chosen: bool | None) -> bool:
        return self.emf.monitors(chosen)  # (every queue here: none chose, and the default is to monitor)

    def add(self, metric: Metric, labels: Labels, value: float = 1) -> None:
        self.process.add(metric, labels, value)
        self.emf.add(metric, labels, value)

    def flush(self) -> None:
        self.emf.flush()


@pytest.fixture(params=["sqlite", "dynamodb"])
def world(request, aws_credentials) -> Iterator[tuple[Services, BothSinks, ManualClock]]:
    clock, sinks = ManualClock(), BothSinks()
    settings = Settings(credentials=f"{ACCOUNT}:{KEY_ID}:{SECRET}", poll_interval_ms=200)
    if request.param == "sqlite":
        storage = sqlite_storage(":memory:")
        yield build_services(settings, storage=storage, clock=clock, metrics=sinks), sinks, clock
        storage.database.close()
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(client, settings)
        yield build_services(settings, dynamodb=client, clock=clock, metrics=sinks), sinks, clock


class Caller:
    """Signed calls to the route handlers, dated by the world's clock."""

    def __init__(self, services: Services, clock: ManualClock) -> None:
        self.clock = clock
        self.handlers = {name: make_handler(name, services=lambda: services) for name in {r.name for r in ROUTES}}

    def __call__(self, method: str, target: str, body: str = "") -> tuple[int, str]:
        date = formatdate(self.clock.now(), usegmt=True)
        headers = {"host": "127.0.0.1", "date": date, "x-mns-version": "2015-06-06"}
        if body:
            headers["content-type"] = "text/xml;charset=utf-8"
        path, _, query = target.partition("?")
        unsigned = HttpRequest(method, path, query, headers, body.encode())
        headers["authorization"] = f"MNS {KEY_ID}:{sign(SECRET, string_to_sign(unsigned, date))}"
        route, event = api_gateway_event(method, target, headers, body.encode(), ROUTES, self.clock.now())
        assert route is not None, target
        answer = self.handlers[route](event, LocalContext())
        return answer["statusCode"], answer["body"]


def entry(body: str, delay: int | None = None) -> str:
    delayed = f"<DelaySeconds>{delay}</DelaySeconds>" if delay is not None else ""
    return f"<Message><MessageBody>{body}</MessageBody>{delayed}</Message>"


def message(body: str, delay: int | None = None) -> str:
    return entry(body, delay).replace("<Message>", f'<Message xmlns="{NS}">')


def handles(body: str) -> list[str]:
    return re.findall(r"<ReceiptHandle>([^<]+)</ReceiptHandle>", body)


def run_workload(call: Caller, clock: ManualClock) -> float:
    """The workload above; t0."""
    t0 = clock.now()
    assert call("PUT", "/queues/orders-dlq")[0] == 201
    policy = "<DlqPolicy><Enabled>true</Enabled><DeadLetterTargetQueue>orders-dlq</DeadLetterTargetQueue>"
    policy += "<MaxReceiveCount>1</MaxReceiveCount></DlqPolicy>"
    queue = f'<Queue xmlns="{NS}"><VisibilityTimeout>30</VisibilityTimeout>{policy}</Queue>'
    assert call("PUT", "/queues/orders", queue)[0] == 201
    assert call("PUT", "/queues/orders/receivers/audit")[0] == 201
    assert call("PUT", "/topics/news")[0] == 201
    messages = "/queues/orders/messages"
    assert call("POST", messages, message("alpha"))[0] == 201
    assert (
        call("POST", messages, f'<Messages xmlns="{NS}">{entry("b1")}{entry("b2")}{entry("b3")}</Messages>')[0] == 201
    )
    assert call("POST", messages, message("later", 120))[0] == 201
    assert call("POST", "/topics/news/messages", message("hi"))[0] == 201

    clock.advance(10)
    status, body = call("GET", f"{messages}?numOfMessages=16&waitseconds=0")
    assert status == 200 and len(handles(body)) == 4
    order = re.findall(r"<MessageBody>([^<]+)</MessageBody>", body)
    by_body = dict(zip(order, handles(body), strict=True))
    assert call("DELETE", f"{messages}?ReceiptHandle={quote(by_body['alpha'], safe='')}")[0] == 204
    spent = "".join(f"<ReceiptHandle>{by_body[b]}</ReceiptHandle>" for b in ("b1", "b2", "alpha"))
    status, _ = call("DELETE", messages, f'<ReceiptHandles xmlns="{NS}">{spent}</ReceiptHandles>')
    assert status == 404  # alpha's handle is spent: reported, b1 and b2 deleted
    assert call("GET", f"{messages}?waitseconds=0")[0] == 404

    clock.advance(35)
    assert call("GET", f"{messages}?waitseconds=0")[0] == 404  # b3 moved to the dead-letter queue, none left
    assert call("POST", messages, message("c"))[0] == 201
    assert call("GET", f"{messages}?waitseconds=0")[0] == 200  # c, in flight from now
    clock.advance(5)
    return t0


COUNTERS = {  # queue -> family -> count, at t0+50
    "orders": {
        "mns_messages_sent_total": 6,
        "mns_sent_message_bytes_total": 5 + 2 + 2 + 2 + 5 + 1,
        "mns_messages_received_total": 5,
        "mns_empty_receives_total": 2,
        "mns_messages_deleted_total": 3,
        "mns_messages_dead_lettered_total": 1,
        "mns_qps_limit_exceeded_total": 0,
    },
    "orders.audit": {"mns_messages_sent_total": 6, "mns_sent_message_bytes_total": 17},
    "orders-dlq": {},  # a dead letter is no send
}
GAUGES = {  # queue -> (visible, invisible, delayed, oldest age in seconds), at t0+50
    "orders": (0, 1, 1, 5.0),  # c in flight (sent at t0+45), later delayed
    "orders.audit": (5, 0, 1, 50.0),  # its copies, none received there; alpha is the oldest
    "orders-dlq": (1, 0, 0, 5.0),  # b3's dead letter, enqueued when it moved (t0+45)
}
FAMILIES = QUEUE_COUNTERS
EMF_NAMES = {  # family -> (CloudWatch name, unit)
    "mns_messages_sent_total": ("NumberOfMessagesSent", "Count"),
    "mns_sent_message_bytes_total": ("SentMessageSize", "Bytes"),
    "mns_messages_received_total": ("NumberOfMessagesReceived", "Count"),
    "mns_empty_receives_total": ("NumberOfEmptyReceives", "Count"),
    "mns_messages_deleted_total": ("NumberOfMessagesDeleted", "Count"),
    "mns_messages_dead_lettered_total": ("NumberOfMessagesDeadLettered", "Count"),
    "mns_qps_limit_exceeded_total": ("QpsLimitExceeded", "Count"),
}


def test_the_workload_gives_its_exact_counts_and_gauges_on_metrics(world):
    services, sinks, clock = world
    run_workload(Caller(services, clock), clock)
    found = parse(MetricsPage(lambda: services, sinks.process).text())
    for queue, expected in COUNTERS.items():
        for name in FAMILIES:
            assert found[name].value(account=ACCOUNT, queue=queue) == expected.get(name, 0), (queue, name)
    for queue, (visible, invisible, delayed, age) in GAUGES.items():
        assert found["mns_messages_visible"].value(account=ACCOUNT, queue=queue) == visible, queue
        assert found["mns_messages_invisible"].value(account=ACCOUNT, queue=queue) == invisible, queue
        assert found["mns_messages_delayed"].value(account=ACCOUNT, queue=queue) == delayed, queue
        assert found["mns_oldest_message_age_seconds"].value(account=ACCOUNT, queue=queue) == age, queue
    assert found["mns_topic_messages_published_total"].value(account=ACCOUNT, topic="news") == 1
    assert set(found["mns_messages_sent_total"].by("queue", account=ACCOUNT)) == set(COUNTERS)  # and no other


def emf_lines(text: str) -> list[dict[str, Any]]:
    """The EMF lines of the queues' and topics' metrics (the handlers' own request counts left aside)."""
    lines = [json.loads(line) for line in text.splitlines() if line.startswith('{"_aws"')]
    return [line for line in lines if "AccountId" in line]


def test_the_same_calls_print_their_counts_as_emf(world, capsys):
    services, sinks, clock = world
    capsys.readouterr()
    run_workload(Caller(services, clock), clock)
    totals: dict[tuple[str, str], float] = defaultdict(float)
    sizes: dict[str, list[float]] = defaultdict(list)
    units: dict[str, set[str]] = defaultdict(set)
    for line in emf_lines(capsys.readouterr().out):
        (definition,) = line["_aws"]["CloudWatchMetrics"]
        assert definition["Namespace"] == "MNS"
        place = line.get("QueueName") or line["TopicName"]
        expected_dimensions = [["AccountId", "QueueName"]] if "QueueName" in line else [["AccountId", "TopicName"]]
        assert definition["Dimensions"] == expected_dimensions and line["AccountId"] == ACCOUNT
        assert "service" not in line
        for metric in definition["Metrics"]:
            units[metric["Name"]].add(metric["Unit"])
            totals[(place, metric["Name"])] += sum(line[metric["Name"]])
            if metric["Name"] == "SentMessageSize":
                sizes[place] += line[metric["Name"]]
    expected = {
        (queue, EMF_NAMES[family][0]): value
        for queue, counts in COUNTERS.items()
        for family, value in counts.items()
        if value
    }
    assert dict(totals) == {**expected, ("news", "NumberOfMessagesPublished"): 1}
    assert sorted(sizes["orders"]) == sorted(sizes["orders.audit"]) == [1, 2, 2, 2, 5, 5]  # one value per message
    assert dict(units) == {name: {unit} for name, unit in EMF_NAMES.values() if name != "QpsLimitExceeded"} | {
        "NumberOfMessagesPublished": {"Count"}
    }


def test_the_sampler_prints_the_same_gauges_as_emf(world, capsys):
    """On AWS the gauges come from the sampler (`mnsd.monitoring`): after the same workload, one run prints for each
    queue and receiver the values `/metrics` shows."""
    from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits

    services, _, clock = world
    run_workload(Caller(services, clock), clock)
    capsys.readouterr()
    sampler = BacklogSampler(services.queues, EmfMetrics(), clock, SamplerLimits(workers=2))
    run = sampler.run(list(services.queues.every_queue()))
    assert (run.sampled, run.late, run.failed) == (len(GAUGES), 0, 0)
    printed = {line["QueueName"]: line for line in emf_lines(capsys.readouterr().out)}
    assert set(printed) == set(GAUGES)
    names = (
        "ApproximateNumberOfMessagesVisible",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateAgeOfOldestMessage",
    )
    for queue, expected in GAUGES.items():
        line = printed[queue]
        assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["AccountId", "QueueName"]]
        assert tuple(line[name] for name in names) == tuple([value] for value in expected), queue
