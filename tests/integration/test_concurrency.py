"""Many consumers on one queue over moto (serialized like DynamoDB's per-call atomicity), real clock.

Each run has a deadline for its concurrent phase, generous for a loaded machine. Should the deadline end it,
what is left is drained by one consumer afterwards and the run still checks every message was received
exactly once: these tests fail for lost or duplicated messages (or too many failed claims), never because
the machine was slow.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.ground import errors
from mnsd.ground.clock import SystemClock
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import QueueAttributeChanges, QueueCounts
from mnsd.services import build_services
from mnsd.storage.dynamodb.items.conditions import condition_failed
from mnsd.storage.dynamodb.items.packs import entry_of
from tests.integration.placements import placement
from tests.support.by_name import QueuesByName
from tests.support.wrappers import Wrapping

ACCOUNT = "1000000000000001"
MESSAGES = int(os.environ.get("MNS_CONCURRENCY_MESSAGES", "800"))
BATCH = 16
DEADLINE = float(os.environ.get("MNS_CONCURRENCY_DEADLINE", "300"))


class ClaimCounter(Wrapping):
    """A DynamoDB client that counts conditional claims (UpdateItem returning the new lease) and their failures."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.claims = 0
        self.failed = 0

    def update_item(self, **kwargs: Any) -> Any:
        claim = kwargs.get("ReturnValues") == "ALL_NEW"
        self.claims += claim
        try:
            return self.inner.update_item(**kwargs)
        except ClientError as exc:
            self.failed += claim and condition_failed(exc)
            raise


class Harness:
    def __init__(self, service, messages: int, batch: int, deadline: float, groups: int = 0) -> None:
        self.service = service
        self.messages = messages
        self.batch = batch
        self.groups = groups  # a FIFO queue's: each batch sent in one of them, in turn
        self.order: dict[str, list[str]] = collections.defaultdict(list)  # each group's messages as received
        self.sent: dict[str, str] = {}
        self.received: collections.Counter[str] = collections.Counter()
        self.bodies: dict[str, str] = {}
        self.lock = threading.Lock()
        self.producer_done = threading.Event()
        self.failures: list[BaseException] = []
        self.deadline = time.monotonic() + deadline
        self.counter: ClaimCounter | None = None
        self.hot_until = 0  # the queue is hot while it holds at least this many messages
        self.hot: tuple[int, int] | None = None  # (failed claims, delivered) when it stopped being hot

    def produce(self, first: int = 0, end: int | None = None) -> None:
        try:
            for start in range(first, self.messages if end is None else end, BATCH):
                batch = [MessageInput(f"body-{i}", None, 1 + i % 16) for i in range(start, start + BATCH)]
                if self.groups:
                    group = f"g{start // BATCH % self.groups}"
                    batch = [MessageInput(m.body, None, 8, message_group_id=group) for m in batch]
                for result in self.service.send(ACCOUNT, "q", batch):
                    assert result.error is None
                    with self.lock:
                        self.sent[result.message.message_id] = result.message.body
        except BaseException as exc:  # noqa: BLE001
            self.failures.append(exc)
        finally:
            self.producer_done.set()

    def finished(self) -> bool:
        with self.lock:
            return self.producer_done.is_set() and sum(self.received.values()) >= len(self.sent)

    def consume(self) -> None:
        try:
            while time.monotonic() < self.deadline and not self.finished():
                self.consume_once(1)
        except BaseException as exc:  # noqa: BLE001
            self.failures.append(exc)

    def consume_once(self, wait: int) -> int:
        try:
            got = self.service.receive(ACCOUNT, "q", self.batch, wait)
        except errors.MessageNotExist:
            return 0
        with self.lock:
            for item in got:
                self.received[item.message.message_id] += 1
                self.order[item.message.message_group_id].append(item.message.message_id)
                self.bodies[item.message.message_id] = item.message.body
            delivered = sum(self.received.values())
            left = len(self.sent) - delivered
            if self.hot is None and self.counter and self.producer_done.is_set() and left < self.hot_until:
                self.hot = (self.counter.failed, delivered)
        if self.batch == 1:
            self.service.delete(ACCOUNT, "q", got[0].receipt_handle)
        else:
            failed = self.service.batch_delete(ACCOUNT, "q", [item.receipt_handle for item in got])
            assert failed == [], failed
        return len(got)

    def drain(self) -> int:
        """Receive what the concurrent phase left (the deadline ended it), one consumer; how many."""
        drained = 0
        while not self.finished():
            got = self.consume_once(0)
            if not got:
                break
            drained += got
        return drained


def run(
    dynamodb, consumers: int, messages: int, batch: int, backlog: int = 0, groups: int = 0, **settings: Any
) -> tuple[Harness, tuple[int, int], str]:
    """`backlog` messages are sent before the consumers start, the others while they run (to a FIFO queue, in
    `groups`, if given); the harness, (failed claims, delivered messages) while the queue was hot (it held at least
    two receives' worth per consumer)."""
    started = time.monotonic()
    counter = ClaimCounter(dynamodb)
    client = SerializedClient(counter)
    settings.setdefault("poll_interval_ms", 50)
    config = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", **settings)
    create_tables(client, config)
    service = QueuesByName(build_services(config, dynamodb=client, clock=SystemClock()))
    kind = "fifo" if groups else None
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="300", queue_type=kind))
    harness = Harness(service, messages, batch, DEADLINE, groups)
    harness.counter, harness.hot_until = counter, 2 * consumers * batch
    harness.produce(0, backlog)
    harness.producer_done.clear()

    threads = [threading.Thread(target=harness.produce, args=(backlog,))]
    threads += [threading.Thread(target=harness.consume) for _ in range(consumers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE + 60)
    concurrent = time.monotonic() - started
    drained = harness.drain()
    delivered = sum(harness.received.values())
    hot = harness.hot or (counter.failed, delivered)
    report = (
        f"{messages} messages, {consumers} consumers (batch {batch}): concurrent phase {concurrent:.1f} s"
        + (
            f", then the deadline ({DEADLINE:.0f} s) ended it and {drained} were drained by one consumer"
            if drained
            else ""
        )
        + f"; failed claims {counter.failed} of {counter.claims} ({counter.failed / max(1, delivered):.2f} per "
        f"delivered message; {hot[0] / max(1, hot[1]):.2f} over the first {hot[1]}, while the queue held at least "
        f"{harness.hot_until}); stripes {placement(service).stripes}"
    )
    print("\n" + report)

    assert not harness.failures, harness.failures
    assert not any(thread.is_alive() for thread in threads), report
    assert len(harness.sent) == messages
    duplicates = {mid: n for mid, n in harness.received.items() if n > 1}
    assert duplicates == {}, report
    assert set(harness.received) == set(harness.sent), (
        f"lost {len(set(harness.sent) - set(harness.received))}; {report}"
    )
    assert harness.bodies == harness.sent
    assert service.queue_counts(service.get_queue(ACCOUNT, "q")) == QueueCounts(0, 0, 0)
    return harness, hot, report


def test_concurrent_consumers_receive_each_message_once(dynamodb):
    run(dynamodb, consumers=8, messages=MESSAGES, batch=BATCH)


# A hot queue: a backlog, more sent all along, on as many stripes as contention grows it to.
def test_64_consumers_on_a_hot_queue_rarely_lose_a_claim(dynamodb):
    _, (failed, delivered), report = run(dynamodb, consumers=64, messages=384, batch=1, backlog=320, queue_stripes=64)
    assert failed / delivered < 0.5, report


# The same with batches stored packed (`mnsd.storage.dynamodb.items.packs`): 64 consumers on 16 messages a lease item,
# each message received once (`run`); receiving one at a time, they rarely lose a claim. (Receiving 16 at a time,
# 64 consumers want 1,024 of 384 messages: they lose many by construction.)
@pytest.mark.slow
@pytest.mark.parametrize("batch", [1, BATCH])
def test_64_consumers_on_a_hot_queue_of_packed_batches_each_message_once(dynamodb, batch):
    _, (failed, delivered), report = run(
        dynamodb, consumers=64, messages=384, batch=batch, backlog=320, queue_stripes=64, packed_batches=True
    )
    assert batch > 1 or failed / delivered < 0.5, report


# Batches of 16: a backlog of 2,560 holds more than two receives' worth per consumer (2,048), so the hot phase is
# measured over some 1,000 deliveries (1,024 messages were one receive per consumer: a race for the last few).
# One lease per message (packed, the test above).
@pytest.mark.slow
def test_64_consumers_batched_on_a_hot_queue_rarely_lose_a_claim(dynamodb):
    _, (failed, delivered), report = run(
        dynamodb, consumers=64, messages=3072, batch=BATCH, backlog=2560, queue_stripes=64, packed_batches=False
    )
    assert failed / delivered < 0.5, report


# A FIFO queue with batches packed (`mnsd.storage.dynamodb.fifo.group_packs`: a group's batch one lease item): consumers
# receiving 16 at a time get each message once (`run`), each group's in send order (a group's next run is claimed
# only once the one before it is deleted).
def test_consumers_on_a_fifo_queue_of_packed_batches_each_message_once_in_order(dynamodb):
    harness, _, report = run(
        dynamodb, consumers=8, messages=192, batch=BATCH, backlog=128, groups=4, packed_batches=True
    )
    assert all(entry_of(message_id) is not None for message_id in harness.sent), "not packed"
    sent: dict[str, list[str]] = collections.defaultdict(list)
    for message_id, body in harness.sent.items():  # (in send order)
        sent[f"g{int(body.split('-')[1]) // BATCH % 4}"].append(message_id)
    assert harness.order == sent, report
