"""Many consumers on one queue over moto (serialized like DynamoDB's per-call atomicity), real clock.

The concurrent phase has a deadline, generous for a loaded machine. Should the deadline end it, what is left is
drained by one consumer afterwards, and the run still checks that every message was received exactly once: the
test fails for lost or duplicated messages, never because the machine was slow.
"""

import collections
import os
import threading
import time

from local_runtime.server import SerializedClient
from local_runtime.tables import create_tables
from mnsd import errors
from mnsd.clock import SystemClock
from mnsd.queue_model import MessageInput, QueueAttributeChanges, QueueCounts
from mnsd.services import build_services
from mnsd.settings import Settings

ACCOUNT = "1000000000000001"
MESSAGES = int(os.environ.get("MNS_CONCURRENCY_MESSAGES", "800"))
CONSUMERS = 8
BATCH = 16
DEADLINE = float(os.environ.get("MNS_CONCURRENCY_DEADLINE", "300"))


class Harness:
    def __init__(self, service) -> None:
        self.service = service
        self.sent: dict[str, str] = {}
        self.received: collections.Counter[str] = collections.Counter()
        self.bodies: dict[str, str] = {}
        self.lock = threading.Lock()
        self.producer_done = threading.Event()
        self.failures: list[BaseException] = []
        self.deadline = time.monotonic() + DEADLINE

    def produce(self) -> None:
        try:
            for start in range(0, MESSAGES, BATCH):
                batch = [MessageInput(f"body-{i}", None, 1 + i % 16) for i in range(start, start + BATCH)]
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
                self.consume_once()
        except BaseException as exc:  # noqa: BLE001
            self.failures.append(exc)

    def consume_once(self, wait: int = 1) -> int:
        try:
            got = self.service.receive(ACCOUNT, "q", BATCH, wait)
        except errors.MessageNotExist:
            return 0
        with self.lock:
            for item in got:
                self.received[item.message.message_id] += 1
                self.bodies[item.message.message_id] = item.message.body
        failed = self.service.batch_delete(ACCOUNT, "q", [item.receipt_handle for item in got])
        assert failed == [], failed
        return len(got)

    def drain(self) -> int:
        """Receive what the concurrent phase left (its deadline ended it), with one consumer; how many."""
        drained = 0
        while not self.finished():
            got = self.consume_once(0)
            if not got:
                break
            drained += got
        return drained


def test_concurrent_consumers_receive_each_message_once(dynamodb):
    started = time.monotonic()
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", poll_interval_ms=50)
    client = SerializedClient(dynamodb)
    create_tables(client, settings)
    service = build_services(settings, dynamodb=client, clock=SystemClock()).queues
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="300"))
    harness = Harness(service)

    threads = [threading.Thread(target=harness.produce)]
    threads += [threading.Thread(target=harness.consume) for _ in range(CONSUMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE + 10)
    concurrent = time.monotonic() - started
    assert not any(thread.is_alive() for thread in threads)
    drained = harness.drain()
    print(
        f"\n{MESSAGES} messages, {CONSUMERS} consumers: {concurrent:.1f} s concurrent, "
        f"received {len(harness.received)}, {drained} of them drained after the deadline"
    )

    assert not harness.failures, harness.failures
    assert len(harness.sent) == MESSAGES
    duplicates = {mid: n for mid, n in harness.received.items() if n > 1}
    assert duplicates == {}
    assert set(harness.received) == set(harness.sent), f"lost {len(set(harness.sent) - set(harness.received))}"
    assert harness.bodies == harness.sent
    assert service.queue_counts(service.get_queue(ACCOUNT, "q")) == QueueCounts(0, 0, 0)
