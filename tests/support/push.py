"""Push delivery over moto with the retry workflow running: the services, the worker, and calls to drive them."""

from __future__ import annotations

import threading
import time
from functools import lru_cache

import boto3

from local_runtime.moto_client import SerializedClient
from local_runtime.push import LocalPushWorker, create_push_workflow
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.push.signing import generate_signing_material
from mnsd.push.workflow import TASK_HEARTBEAT_SECONDS
from mnsd.services import build_services
from mnsd.wire import codec, requests

ACCOUNT = "1000000000000001"


REGION = "cn-hangzhou"


class Push:
    """Services over moto with the retry workflow running, and helpers to drive them."""

    def __init__(self, endpoint, heartbeat_seconds: int = TASK_HEARTBEAT_SECONDS, start_worker: bool = True) -> None:
        lock = threading.Lock()
        self.clients = lru_cache(maxsize=None)(
            lambda name: SerializedClient(boto3.client(name, region_name="us-east-1"), lock)
        )
        arn, queue_url = create_push_workflow(self.clients, heartbeat_seconds)
        self.queue_url = queue_url
        endpoint.certificate = SIGNING[1]
        settings = Settings(
            credentials=f"{ACCOUNT}:KEYID:SECRET",
            region=REGION,
            push_state_machine_arn=arn,
            push_queue_url=queue_url,
            signing_key=SIGNING[0],
            signing_certificate=SIGNING[1],
            signing_cert_url=endpoint.url("/cert.pem"),
            push_allowed_networks=LOOPBACK,  # the test endpoints listen on 127.0.0.1
        )
        create_tables(self.clients("dynamodb"), settings)
        self.services = build_services(settings, dynamodb=self.clients("dynamodb"), clients=self.clients)
        self.arn = arn
        self.topics = self.services.topics
        self.fanout = self.services.fanout()
        self.retries = self.services.push().retry_worker
        self.workflow = self.services.push().workflow
        self.counters = self.services.push().counters
        self.worker = LocalPushWorker(lambda: self.services, self.clients("sqs"), queue_url)
        if start_worker:
            self.worker.start()

    def topic(self, name: str = "t", logging: bool = False) -> str:
        self.topics.create_topic(
            ACCOUNT, name, requests.topic_attribute_changes(body("Topic", LoggingEnabled=str(logging)))
        )
        return name

    def subscribe(self, topic: str, name: str, endpoint: str, **fields: str) -> None:
        self.topics.subscribe(
            ACCOUNT, topic, name, requests.subscription_input(body("Subscription", Endpoint=endpoint, **fields))
        )

    def publish(self, topic: str, text: str = "hello", extra: str = ""):
        xml = f'<Message xmlns="http://mns.aliyuncs.com/doc/v1"><MessageBody>{text}</MessageBody>{extra}</Message>'
        message = self.topics.publish(ACCOUNT, topic, requests.publish_input(codec.parse(xml.encode())))
        return message, self.fanout.fan_out(message)

    def executions(self) -> list[dict]:
        return self.clients("stepfunctions").list_executions(stateMachineArn=self.arn)["executions"]

    def wait_finished(self, timeout: float = 60) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            executions = self.executions()
            if executions and all(e["status"] != "RUNNING" for e in executions):
                return executions
            time.sleep(0.05)
        raise AssertionError(f"executions still running: {self.executions()}")

    def wait_for_log(self, event: str, count: int, timeout: float = 10) -> list[dict]:
        """The worker records a drop just after the execution ends: wait for it."""
        deadline = time.monotonic() + timeout
        while len(self.log(event)) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.log(event)

    def log(self, event: str | None = None) -> list[dict]:
        items = self.clients("dynamodb").scan(TableName=self.services.settings.log_table)["Items"]
        records = [{k: next(iter(v.values())) for k, v in item.items()} for item in items]
        return sorted((r for r in records if event is None or r["event"] == event), key=lambda r: r["sk"])


SIGNING = generate_signing_material()


LOOPBACK = "127.0.0.0/8,::1/128"


def body(tag: str, **fields: str) -> codec.Element:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in fields.items())
    return codec.parse(f'<{tag} xmlns="http://mns.aliyuncs.com/doc/v1">{inner}</{tag}>'.encode())
