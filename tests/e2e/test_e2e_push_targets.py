"""Subscriptions that push into Lambda functions and EventBridge buses, end to end on the local runtime's stand-ins:
functions registered with `MNS_LOCAL_FUNCTIONS` (`tests.e2e.local_functions`), a bus of moto's EventBridge whose
events the runtime writes to a file (`MNS_LOCAL_EVENT_BUSES`). The retry schedule runs compressed
(`MNS_PUSH_TIME_SCALE`: the same state machine, its waits 5,000 times shorter)."""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mns.account import Account
from mns.mns_exception import MNSExceptionBase
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage

from tests.e2e.local_functions import FUNCTION_LOG, calls
from tests.e2e.resources import fresh_topic, text_queue
from tests.support.prometheus_text import parse
from tests.support.raw_http import NS, RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A, local_server

AWS_REGION = "us-east-1"
LOCAL_ACCOUNT = "123456789012"  # moto's
BUS = "mns-e2e"
FORMATS = ["XML", "JSON", "SIMPLIFIED"]


def function_arn(name: str) -> str:
    return f"arn:aws:lambda:{AWS_REGION}:{LOCAL_ACCOUNT}:function:{name}"


BUS_ARN = f"arn:aws:events:{AWS_REGION}:{LOCAL_ACCOUNT}:event-bus/{BUS}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory, engine) -> Path:
    return tmp_path_factory.mktemp(f"push-targets-{engine}")


def stand_ins(folder: Path) -> dict[str, str]:
    """The server's environment: the functions and the bus it stands in for, where it records them, and the retry
    schedule 5,000 times shorter (BACKOFF_RETRY waits 2-4 ms)."""
    return {
        "AWS_DEFAULT_REGION": AWS_REGION,
        "MNS_PUSH_TIME_SCALE": "0.0002",
        "MNS_LOCAL_FUNCTIONS": "record=tests.e2e.local_functions:record,fail=tests.e2e.local_functions:fail",
        "MNS_LOCAL_EVENT_BUSES": BUS,
        "MNS_LOCAL_EVENT_BUS_DIR": str(folder / "buses"),
        FUNCTION_LOG: str(folder / "functions.jsonl"),
    }


@pytest.fixture(scope="module")
def targets_endpoint(tmp_path_factory, engine, folder):
    with local_server(tmp_path_factory, engine, "push-targets", **stand_ins(folder)) as url:
        yield url


@pytest.fixture
def topic(targets_endpoint):
    """A fresh topic of account A on the module's server."""
    yield from fresh_topic(Account(targets_endpoint, ACCOUNT_A[1], ACCOUNT_A[2]), "pt-" + uuid.uuid4().hex[:16])


def wait_for(found: Callable[[], list[Any]], count: int, seconds: float = 15.0) -> list[Any]:
    """What `found` answers once it holds at least `count` items (or at the deadline), then a moment later: nothing
    more may arrive."""
    deadline = time.monotonic() + seconds
    while len(found()) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    return found()


def bus_events(folder: Path) -> list[dict[str, Any]]:
    path = folder / "buses" / f"{BUS}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_notification(notification: Any) -> tuple[str, str]:
    """(the format a function's event or a bus event's notification is in, the message body it carries)."""
    if isinstance(notification, dict):
        return "JSON", notification["Message"]
    if notification.startswith("<?xml"):
        root = ET.fromstring(notification)
        assert root.tag == NS + "Notification"
        return "XML", root.find(NS + "Message").text or ""
    return "SIMPLIFIED", notification


def publish(topic, token: str, count: int) -> dict[str, str]:
    """`count` messages, their bodies unique to the test: body -> message id."""
    return {(body := f"{token}-{n}"): topic.publish_message(TopicMessage(body)).message_id for n in range(count)}


@pytest.mark.parametrize("content_format", FORMATS)
def test_a_lambda_subscription_receives_every_message_once_in_its_format(topic, folder, content_format):
    topic.get_subscription("fn").subscribe(
        SubscriptionMeta(function_arn("record"), notify_content_format=content_format)
    )
    token = uuid.uuid4().hex
    published = publish(topic, token, 5)

    def mine() -> list[tuple[str, str]]:
        found = [read_notification(c["event"]) for c in calls(folder / "functions.jsonl") if c["function"] == "record"]
        return [(form, body) for form, body in found if body.startswith(token)]

    received = wait_for(mine, 5)
    assert sorted(body for _, body in received) == sorted(published)  # each once
    assert {form for form, _ in received} == {content_format}
    if content_format == "JSON":
        events = [c["event"] for c in calls(folder / "functions.jsonl") if isinstance(c["event"], dict)]
        ids = {e["MessageId"] for e in events if e["Message"].startswith(token)}
        assert ids == set(published.values())
        assert {e["TopicName"] for e in events if e["Message"].startswith(token)} == {topic.topic_name}


@pytest.mark.parametrize("content_format", FORMATS)
def test_an_eventbridge_subscription_puts_every_message_once_on_the_bus(topic, folder, content_format):
    topic.get_subscription("bus").subscribe(SubscriptionMeta(BUS_ARN, notify_content_format=content_format))
    token = uuid.uuid4().hex
    published = publish(topic, token, 5)

    def notification(event: dict[str, Any]) -> tuple[str, str]:
        detail = event["detail"]
        return read_notification(detail["Notification"] if "Notification" in detail else detail)

    events = wait_for(lambda: [e for e in bus_events(folder) if notification(e)[1].startswith(token)], 5)
    assert sorted(notification(e)[1] for e in events) == sorted(published)  # each once
    assert {notification(e)[0] for e in events} == {content_format}
    assert {(e["source"], e["detail-type"]) for e in events} == {("mns", "MNS Notification")}
    if content_format == "SIMPLIFIED":  # the message id travels beside the body, as an HTTP push's header
        assert {e["detail"]["Notification"]: e["detail"]["MessageId"] for e in events} == published


def push_results(endpoint: str, topic: str, subscription: str) -> dict[str, float]:
    """The subscription's push results on `GET /metrics` (delivered, failed, dead_lettered, dropped)."""
    with urllib.request.urlopen(endpoint + "/metrics", timeout=10) as response:
        found = parse(response.read().decode("utf-8"))
    return found["mns_push_deliveries_total"].by("result", account=ACCOUNT_A[0], topic=topic, subscription=subscription)


def test_a_function_that_keeps_failing_reaches_the_dead_letter_after_its_retry_strategy(
    targets_endpoint, topic, folder
):
    raw = RawClient(targets_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    dlq = text_queue(Account(targets_endpoint, ACCOUNT_A[1], ACCOUNT_A[2]), "pt-dlq-" + uuid.uuid4().hex[:12])
    try:
        body = (
            '<?xml version="1.0" encoding="UTF-8"?><Subscription xmlns="http://mns.aliyuncs.com/doc/v1">'
            f"<Endpoint>{function_arn('fail')}</Endpoint><NotifyStrategy>BACKOFF_RETRY</NotifyStrategy>"
            "<NotifyContentFormat>JSON</NotifyContentFormat>"
            f"<DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>{dlq.queue_name}</DeadLetterTargetQueue>"
            "</DlqPolicy></Subscription>"
        )
        resp = raw.request("PUT", f"/topics/{topic.topic_name}/subscriptions/failing", body)
        assert resp.status == 201, resp.body
        token = uuid.uuid4().hex
        message_id = topic.publish_message(TopicMessage(token)).message_id
        deadline = time.monotonic() + 20
        while True:
            try:
                received = dlq.receive_message(3)
                break
            except MNSExceptionBase as error:
                if error.type != "MessageNotExist" or time.monotonic() > deadline:
                    raise
        attempts = [
            c for c in calls(folder / "functions.jsonl") if c["function"] == "fail" and c["event"]["Message"] == token
        ]
        assert len(attempts) == 4  # the first attempt and BACKOFF_RETRY's 3 retries, then the dead letter
        dead = json.loads(received.message_body)
        assert (dead["MessageId"], dead["Message"], dead["SubscriptionName"]) == (message_id, token, "failing")
        assert json.loads(received.message_body) == attempts[-1]["event"]  # the event the function was given
        results = push_results(targets_endpoint, topic.topic_name, "failing")  # counted as an HTTP push's are
        assert (results.get("failed"), results.get("dead_lettered"), results.get("delivered", 0)) == (4, 1, 0)
    finally:
        dlq.delete()


@pytest.mark.parametrize(
    ("endpoint", "said"),
    [
        (function_arn("never-registered"), "pushLambdaArns"),
        (f"arn:aws:events:{AWS_REGION}:{LOCAL_ACCOUNT}:event-bus/other", "pushEventBusArns"),
        (f"arn:aws:lambda:eu-west-1:{LOCAL_ACCOUNT}:function:record", "region us-east-1"),
        (f"arn:aws-cn:lambda:{AWS_REGION}:{LOCAL_ACCOUNT}:function:record", "partition aws"),
        (f"arn:aws:lambda:{AWS_REGION}:{LOCAL_ACCOUNT}:function:bad name", None),
    ],
)
def test_a_target_the_deployment_may_not_push_to_is_refused_at_subscribe_saying_why(
    targets_endpoint, topic, endpoint, said
):
    raw = RawClient(targets_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><Subscription xmlns="http://mns.aliyuncs.com/doc/v1">'
        f"<Endpoint>{endpoint}</Endpoint></Subscription>"
    )
    resp = raw.request("PUT", f"/topics/{topic.topic_name}/subscriptions/refused", body)
    assert_mns_error(resp, 400, "EndpointInvalid")
    if said is not None:
        assert said in resp.xml().find(NS + "Message").text
    assert raw.request("GET", f"/topics/{topic.topic_name}/subscriptions/refused").status == 404  # nothing kept
