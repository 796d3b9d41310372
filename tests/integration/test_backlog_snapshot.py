"""The daily backlog snapshot on moto (DynamoDB and S3), through its Lambda handler: one gzipped JSON line per queue
(receivers left out), each queue's counts what GetQueueAttributes answers, its oldest message's enqueue time to the
millisecond of an injected clock; a queue whose read fails is left out and counted."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from local_runtime.dispatch import LocalContext
from local_runtime.tables import create_tables
from mnsd.entry.monitoring import NoKeys
from mnsd.entry.snapshot import make_snapshot_handler
from mnsd.ground.clock import ms
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import Backlog, Queue
from mnsd.monitoring.snapshot import take_snapshot
from mnsd.queues.receivers import ReceiverInput
from mnsd.services import Services, build_services
from tests.support.by_name import QueuesByName
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
OTHER = "1000000000000002"
BUCKET = "mns-data"


@pytest.fixture
def world(aws_credentials, monkeypatch) -> Iterator[tuple[Services, ManualClock]]:
    clock = ManualClock()
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET,{OTHER}:KEYID2:SECRET2")
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(dynamodb, settings)
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
        monkeypatch.setenv("MNS_SNAPSHOT_BUCKET", BUCKET)
        monkeypatch.setenv("MNS_SNAPSHOT_PREFIX", "exports/backlog")
        yield build_services(settings, dynamodb=dynamodb, clock=clock, keys=NoKeys()), clock


def send(services: Services, account: str, name: str, *bodies: str, delay: int | None = None) -> None:
    services.messages.send(services.addresses.resolve(account, name), [MessageInput(body, delay, 8) for body in bodies])


def test_each_queue_is_one_line_with_its_own_counts_and_oldest_message(world):
    services, clock = world
    queues = QueuesByName(services)
    queues.create_queue(ACCOUNT, "orders")
    queues.receivers.create(ACCOUNT, "orders", "audit", ReceiverInput())
    queues.create_queue(ACCOUNT, "idle")
    queues.create_queue(OTHER, "orders")
    first_sent = ms(clock.now())
    send(services, ACCOUNT, "orders", "first")
    clock.advance(40)
    send(services, ACCOUNT, "orders", "a", "b", "c")
    send(services, ACCOUNT, "orders", "later", delay=300)
    send(services, OTHER, "orders", "x")
    clock.advance(20)
    assert len(queues.receive(ACCOUNT, "orders", 2, 0)) == 2  # two in flight
    clock.advance(15.25)

    answer = make_snapshot_handler(lambda: services)({"source": "aws.events"}, LocalContext())

    assert answer["key"] == f"exports/backlog/{ms(clock.now())}.json.gz"
    assert (answer["queues"], answer["failed"]) == (3, 0)
    body = boto3.client("s3").get_object(Bucket=BUCKET, Key=answer["key"])["Body"].read()
    rows = {(row["account"], row["queue"]): row for row in map(json.loads, gzip.decompress(body).splitlines())}
    assert set(rows) == {(ACCOUNT, "orders"), (ACCOUNT, "idle"), (OTHER, "orders")}  # no receiver
    for (account, name), row in rows.items():
        queue = queues.get_queue(account, name)
        counts = queues.queue_counts(queue)  # what GetQueueAttributes answers
        assert row["queue_id"] == queue.queue_id
        assert (row["active"], row["inactive"], row["delayed"]) == (counts.active, counts.inactive, counts.delayed)
        assert row["read_at"] == ms(clock.now())
    assert (rows[ACCOUNT, "orders"]["active"], rows[ACCOUNT, "orders"]["inactive"]) == (2, 2)
    assert rows[ACCOUNT, "orders"]["delayed"] == 1
    assert rows[ACCOUNT, "orders"]["oldest_enqueue_time"] == first_sent
    assert rows[ACCOUNT, "idle"]["oldest_enqueue_time"] is None
    assert (rows[OTHER, "orders"]["active"], rows[OTHER, "orders"]["inactive"]) == (1, 0)


class FailingFor:
    """The queues' backlogs, save one queue's, whose read fails (throttled)."""

    def __init__(self, services: Services, failing: str) -> None:
        self.services = services
        self.failing = failing

    def backlog(self, queue: Queue) -> Backlog:
        if queue.name == self.failing:
            raise RuntimeError("throttled")
        return self.services.queues.backlog(queue)

    def held_groups(self, queue: Queue) -> int | None:
        return None


def test_a_queue_whose_read_fails_is_left_out_and_counted(world):
    services, clock = world
    queues = QueuesByName(services)
    for name in ("a", "b", "c"):
        queues.create_queue(ACCOUNT, name)
    send(services, ACCOUNT, "c", "m")
    snapshot = take_snapshot(FailingFor(services, "b"), services.queues.every_queue(), clock, workers=2)
    assert [row.queue for row in snapshot.rows] == ["a", "c"] and snapshot.failed == 1
    assert [row.active for row in snapshot.rows] == [0, 1]
    assert snapshot.key("exports/backlog/") == f"exports/backlog/{ms(clock.now())}.json.gz"
