"""The AWS fan-out path in process: the topic message table's stream (one batch at a time, in order, as Lambda
reads a topic's shard) into the fan-out handler, the first-attempt FIFO queue on moto, and Lambda's FIFO event
source played by pollers (SQS hands out no message of a group that has one in flight) into the first-attempt
handler.

Before the queue, the fan-out made every first attempt itself and a stream batch ended with its slowest one:
with one hanging endpoint and 2 publishes a second, a healthy sibling's pushes came up to 5 s late.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from functools import lru_cache
from typing import Any

import boto3
import pytest
from moto import mock_aws

from local_runtime.moto_client import SerializedClient
from local_runtime.push import create_push_workflow
from local_runtime.tables import create_tables
from mnsd.entry.push import Handler, make_fanout_handler, make_first_attempt_handler
from mnsd.ground.settings import Settings
from mnsd.model.topics import TopicMessage
from mnsd.push.signing import generate_signing_material
from mnsd.services import Services, build_services
from mnsd.storage.dynamodb.tables.changes import published_messages
from mnsd.storage.dynamodb.tables.topic_messages import to_item
from mnsd.wire import codec, requests
from tests.support.push_receiver import PushEndpoint, assert_not_held_up, delivery_delays

ACCOUNT = "1000000000000001"
SIGNING = generate_signing_material()
PUBLISHES = 30
INTERVAL = 0.5  # 2 publishes a second
POLLERS = 4  # concurrent invocations of the first-attempt function


class LambdaContext:
    function_name = "mns-test"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-test"
    aws_request_id = "test"


def xml(tag: str, **fields: str) -> codec.Element:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in fields.items())
    return codec.parse(f'<{tag} xmlns="http://mns.aliyuncs.com/doc/v1">{inner}</{tag}>'.encode())


class Stream:
    """The stream of one topic as Lambda reads its shard: the records in order, up to 10 a batch, the next
    batch only once the fan-out handler has returned."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.failures: list[dict[str, Any]] = []
        self._records: queue.Queue[dict[str, Any]] = queue.Queue()
        self._sequence = itertools.count(100)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def put(self, message: TopicMessage) -> None:
        record = {"NewImage": to_item(message), "SequenceNumber": str(next(self._sequence))}
        self._records.put({"eventName": "INSERT", "dynamodb": record})

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                batch = [self._records.get(timeout=0.02)]
            except queue.Empty:
                continue
            while len(batch) < 10 and not self._records.empty():
                batch.append(self._records.get())
            self.failures += self.handler({"Records": batch}, LambdaContext())["batchItemFailures"]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


class FifoEventSource:
    """Lambda's event source on a FIFO queue: pollers receiving up to 10 messages each (moto, as SQS, hands out
    no message of a group with one in flight), invoking the handler, then deleting what it did not report."""

    def __init__(self, sqs: Any, queue_url: str, handler: Handler, pollers: int = POLLERS) -> None:
        self.sqs, self.queue_url, self.handler = sqs, queue_url, handler
        self.batches: list[int] = []  # the number of message groups in each batch
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._poll, daemon=True) for _ in range(pollers)]
        for thread in self._threads:
            thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            messages = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
            ).get("Messages", [])
            if not messages:
                time.sleep(0.01)
                continue
            records = [
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": m["Attributes"],
                    "eventSource": "aws:sqs",
                }
                for m in messages
            ]
            self.batches.append(len({m["Attributes"]["MessageGroupId"] for m in messages}))
            failed = {
                f["itemIdentifier"] for f in self.handler({"Records": records}, LambdaContext())["batchItemFailures"]
            }
            for m in messages:
                if m["MessageId"] not in failed:
                    self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)


class AwsPush:
    """The services as the fan-out and first-attempt functions build them, over moto."""

    def __init__(self, endpoint: PushEndpoint) -> None:
        lock = threading.Lock()
        self.clients = lru_cache(maxsize=None)(
            lambda name: SerializedClient(boto3.client(name, region_name="us-east-1"), lock)
        )
        state_machine, push_queue = create_push_workflow(self.clients)  # executions are recorded, not run
        self.queue_url = self.clients("sqs").create_queue(
            QueueName="mns-first-attempts.fifo",
            Attributes={
                "FifoQueue": "true",
                "ContentBasedDeduplication": "false",
                "DeduplicationScope": "messageGroup",
                "FifoThroughputLimit": "perMessageGroupId",
                "VisibilityTimeout": "180",
            },
        )["QueueUrl"]
        endpoint.certificate = SIGNING[1]
        settings = Settings(
            credentials=f"{ACCOUNT}:KEYID:SECRET",
            push_state_machine_arn=state_machine,
            push_queue_url=push_queue,
            first_attempt_queue_url=self.queue_url,
            signing_key=SIGNING[0],
            signing_certificate=SIGNING[1],
            signing_cert_url=endpoint.url("/cert.pem"),
            push_allowed_networks="127.0.0.0/8",  # the test endpoints listen on 127.0.0.1
        )
        create_tables(self.clients("dynamodb"), settings)
        self.services: Services = build_services(settings, dynamodb=self.clients("dynamodb"), clients=self.clients)
        self.topics = self.services.topics

    def subscribe(self, topic: str, name: str, endpoint: str) -> None:
        given = xml("Subscription", Endpoint=endpoint, NotifyContentFormat="SIMPLIFIED")
        self.topics.subscribe(ACCOUNT, topic, name, requests.subscription_input(given))

    def publish(self, topic: str, text: str) -> TopicMessage:
        given = xml("Message", MessageBody=text)
        return self.topics.publish(ACCOUNT, topic, requests.publish_input(given))

    def queued(self) -> int:
        attributes = self.clients("sqs").get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["All"])
        counts = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
        return sum(int(attributes["Attributes"][name]) for name in counts)


@pytest.fixture
def aws(monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    with mock_aws():
        yield


@pytest.mark.slow
def test_a_hanging_subscription_does_not_delay_its_healthy_sibling_on_aws(aws, push_endpoint, hanging_endpoint):
    push = AwsPush(push_endpoint)
    push.topics.create_topic(ACCOUNT, "siblings", requests.topic_attribute_changes(xml("Topic")))
    push.subscribe("siblings", "hanging", hanging_endpoint.url("/h"))
    push.subscribe("siblings", "healthy", push_endpoint.url("/h"))
    stream = Stream(make_fanout_handler(published_messages, lambda: push.services))
    pollers = FifoEventSource(push.clients("sqs"), push.queue_url, make_first_attempt_handler(lambda: push.services))
    try:
        published_at: dict[str, float] = {}
        start = time.monotonic()
        for i in range(PUBLISHES):
            time.sleep(max(0.0, start + i * INTERVAL - time.monotonic()))
            message = push.publish("siblings", f"m{i}")
            published_at[message.message_id] = time.monotonic()
            stream.put(message)
        hits = push_endpoint.wait_for(PUBLISHES, timeout=5)
        delays = delivery_delays(published_at, hits, lambda hit: hit.headers["x-mns-message-id"])
        assert len(delays) == PUBLISHES
        print("healthy delays:", [round(d, 2) for d in delays])
        assert_not_held_up(delays)
        assert len(hanging_endpoint.wait_for(PUBLISHES // 2, timeout=5)) >= PUBLISHES // 2  # attempted meanwhile
        assert stream.failures == []
        assert max(pollers.batches) > 1  # some batch held both subscriptions' messages
    finally:
        stream.stop()
        pollers.stop()  # lets the hanging attempts in flight reach their 5 s deadline
    assert push.services.push().counters.executions_started >= PUBLISHES // 2  # the hanging one's retries


def test_a_stream_record_fanned_out_again_hands_each_attempt_over_once(aws, push_endpoint):
    push = AwsPush(push_endpoint)
    push.topics.create_topic(ACCOUNT, "t", requests.topic_attribute_changes(xml("Topic")))
    push.subscribe("t", "a", push_endpoint.url("/a"))
    push.subscribe("t", "b", push_endpoint.url("/b"))
    message = push.publish("t", "hello")
    fanout = push.services.fanout()
    assert fanout.fan_out(message) == {}  # both handed over, none attempted here
    assert fanout.fan_out(message) == {}  # a stream batch retried: deduplicated by the delivery
    assert push.queued() == 2 and push_endpoint.hits == []
    received = push.clients("sqs").receive_message(
        QueueUrl=push.queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    )["Messages"]
    assert len({m["Attributes"]["MessageGroupId"] for m in received}) == 2  # one group per subscription
