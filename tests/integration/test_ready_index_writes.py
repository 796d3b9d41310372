"""The ready index's writes for a single message on a busy (indexed) standard queue (`docs/ready-index-writes.md`):
a claim leaves the entry's sort key in place (one index write, not two), receives read past the held entries, a
table written before (claimed leases with `w == v` in the future) is read unchanged, and 16 racing consumers own
each message once. Over the DynamoDB double (`tests/support/simulator/dynamodb.py`: every index write billed by DynamoDB's
rules, checked against moto and `tests/support/recording.py`), simulated clock.
"""

from __future__ import annotations

import collections
import threading
from typing import Any

from bench.capacity import SimulatedClock
from bench.capacity_figures import indexed
from local_runtime.tables import create_tables
from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.messages import MessageRef
from mnsd.model.queues import QueueAttributeChanges, QueueCounts
from mnsd.services import build_services
from mnsd.storage.dynamodb.items import layout
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB

ACCOUNT = "1000000000000001"


def busy_queue(client: Any, clock: SimulatedClock, visibility: int = 30, **settings_: Any) -> QueuesByName:
    """Services over `client` with a standard queue "q" whose writes keep the ready index (a queue once busy)."""
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", **settings_)
    create_tables(client, settings)
    queues = QueuesByName(build_services(settings, dynamodb=client, clock=clock))
    queues.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout=str(visibility)))
    indexed(queues, "q")
    return queues


def send(queues: QueuesByName, n: int = 1) -> None:
    for _ in range(n):
        assert all(r.error is None for r in queues.send(ACCOUNT, "q", [MessageInput("m" * 100, None, 8)]))


def receive(queues: QueuesByName) -> list[Any]:
    """One receive of one message, without waiting: [] when there is none."""
    try:
        return list(queues.receive(ACCOUNT, "q", 1, 0))
    except errors.MessageNotExist:
        return []


def index_writes(double: SimulatedDynamoDB) -> float:
    assert double.usage.calls is not None
    return sum(call.index_wcu for call in double.usage.calls)


def test_a_single_message_on_a_busy_queue_writes_the_index_three_times():
    clock = SimulatedClock()
    double = SimulatedDynamoDB(now=clock.now, record_calls=True)
    queues = busy_queue(double, clock)
    send(queues, 3)  # (a busy queue: others wait beside the one measured)
    (first,) = queues.receive(ACCOUNT, "q", 1, 0)  # (warm: the queue's records cached)
    queues.delete(ACCOUNT, "q", first.receipt_handle)
    assert double.usage.calls is not None
    for _ in range(10):
        double.usage.reset()
        send(queues)
        assert index_writes(double) == 1  # the entry put
        double.usage.reset()
        (got,) = queues.receive(ACCOUNT, "q", 1, 0)
        claims = [c for c in double.usage.calls if c.op == "UpdateItem"]
        assert [(c.wcu, c.index_wcu) for c in claims] == [(1, 1)]  # the claim: the entry rewritten in place
        clock.t += 1
        double.usage.reset()
        queues.delete(ACCOUNT, "q", got.receipt_handle)
        assert index_writes(double) == 1  # the entry deleted
        clock.t += 0.1
    assert queues.queue_counts(queues.get_queue(ACCOUNT, "q")) == QueueCounts(2, 0, 0)


def old_claim(double: SimulatedDynamoDB, queues: QueuesByName, item: dict[str, Any], now_ms: int, vis: int) -> None:
    """A claim as the layout before wrote it: `w` moved with `v`, the version plain."""
    double.update_item(
        TableName=queues.messages.table,
        Key={"pk": item["pk"], "sk": item["sk"]},
        UpdateExpression="SET v = :vis, w = :vis, r = :next, d = d + :one, f = if_not_exists(f, :now)",
        ExpressionAttributeValues={
            ":vis": {"N": str(vis)},
            ":next": {"N": "1"},
            ":one": {"N": "1"},
            ":now": {"N": str(now_ms)},
        },
    )


def test_a_table_written_by_the_layout_before_is_read_unchanged():
    clock = SimulatedClock()
    double = SimulatedDynamoDB(now=clock.now, record_calls=True)
    queues = busy_queue(double, clock)
    send(queues, 3)
    queue = queues.get_queue(ACCOUNT, "q")
    table = queues.messages.table
    leases = sorted(
        (i for i in double.scan(TableName=table)["Items"] if layout.is_lease(i)), key=lambda i: i["sk"]["S"]
    )
    now_ms = int(clock.now() * 1000)
    long_held, waiting, short_held = leases
    old_claim(double, queues, long_held, now_ms, now_ms + 600_000)  # in flight, claimed by the code before
    old_claim(double, queues, short_held, now_ms, now_ms + 5_000)
    ids = {name: layout.message_id_of(i) for name, i in zip(("long", "waiting", "short"), leases, strict=True)}
    # In flight: neither received nor counted receivable.
    assert queues.queue_counts(queue) == QueueCounts(1, 2, 0)
    (got,) = queues.receive(ACCOUNT, "q", 1, 0)
    assert got.message.message_id == ids["waiting"]
    queues.delete(ACCOUNT, "q", got.receipt_handle)
    assert receive(queues) == []
    # The next visible time a long poll waits for: the old claim's own.
    scan = queues.messages.scan_ready(queue.queue_id, int(clock.now() * 1000), 1)
    assert scan.messages == [] and scan.next_visible_at == now_ms + 5_000
    # Receivable again at its time exactly, not later; claimed again, its entry's key stays (one index write).
    clock.t = (now_ms + 4_999) / 1000
    assert receive(queues) == []
    clock.t = (now_ms + 5_000) / 1000
    double.usage.reset()
    (again,) = queues.receive(ACCOUNT, "q", 1, 0)
    assert again.message.message_id == ids["short"] and again.message.dequeue_count == 2
    assert again.message.version == 2  # (the receipt rule: the version as read, plus one)
    claims = [c for c in double.usage.calls if c.op == "UpdateItem"]
    assert [(c.wcu, c.index_wcu) for c in claims] == [(1, 1)]
    assert queues.queue_counts(queue) == QueueCounts(0, 2, 0)
    # The old claim's handle (version 1) still deletes its message; the new one's deletes the other.
    store = queues.messages
    long_ref = MessageRef.from_key(queue.queue_id, long_held["sk"]["S"])
    assert store.delete_many([(long_ref, 1)], int(clock.now() * 1000)) == [True]
    queues.delete(ACCOUNT, "q", again.receipt_handle)
    assert queues.queue_counts(queue) == QueueCounts(0, 0, 0)


class Serialized:
    """The double for threads: one call at a time (DynamoDB applies each write to an item atomically), each moving
    the simulated clock by `step` seconds."""

    def __init__(self, double: SimulatedDynamoDB, clock: SimulatedClock, step: float) -> None:
        self._double = double
        self._clock = clock
        self._step = step
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._double, name)
        if not callable(attribute):
            return attribute

        def call(**kwargs: Any) -> Any:
            with self._lock:
                self._clock.t += self._step
                return attribute(**kwargs)

        return call


class Race:
    """Producers sending single messages and consumers receiving one at a time on one queue, in threads: each
    consumer deletes what it receives, but for the first receive of a fifth of the messages (it dies holding it:
    visible again after the timeout). What each receive held and each delete removed is kept."""

    def __init__(self, queues: QueuesByName, total: int) -> None:
        self.queues = queues
        self.total = total
        self.lock = threading.Lock()
        self.holds: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)  # id -> (received, visible)
        self.deleted: collections.Counter[str] = collections.Counter()
        self.abandoned: set[str] = set()
        self.failures: list[BaseException] = []

    def run(self, producers: int, consumers: int) -> None:
        each = self.total // producers
        threads = [threading.Thread(target=self._guarded, args=(send, self.queues, each)) for _ in range(producers)]
        threads += [threading.Thread(target=self._guarded, args=(self._consume,)) for _ in range(consumers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not self.failures and not any(thread.is_alive() for thread in threads)

    def _guarded(self, work: Any, *args: Any) -> None:
        try:
            work(*args)
        except BaseException as exc:  # (told to the test by `run`)
            self.failures.append(exc)

    def _consume(self) -> None:
        for _ in range(5_000):
            with self.lock:
                if len(self.deleted) >= self.total:
                    return
            got = receive(self.queues)
            if got:
                self._hold(got[0])

    def _hold(self, got: Any) -> None:
        message = got.message
        with self.lock:
            self.holds[message.message_id].append((message.visible_at - 1000, message.visible_at))  # (1 s timeout)
            if message.message_id not in self.abandoned and len(self.abandoned) < self.total // 5:
                self.abandoned.add(message.message_id)
                return
        try:
            self.queues.delete(ACCOUNT, "q", got.receipt_handle)
        except errors.MessageNotExist:
            return  # (held past its timeout: another consumer may own it now)
        with self.lock:
            self.deleted[message.message_id] += 1


def test_sixteen_racing_consumers_own_each_message_once():
    clock = SimulatedClock()
    double = SimulatedDynamoDB(now=clock.now, record_calls=True)
    queues = busy_queue(Serialized(double, clock, 0.002), clock, visibility=1)
    send(queues)
    (warm,) = queues.receive(ACCOUNT, "q", 1, 0)
    queues.delete(ACCOUNT, "q", warm.receipt_handle)
    double.usage.reset()
    race = Race(queues, 256)
    race.run(producers=16, consumers=16)
    # Every message received and deleted once; the abandoned ones received again, after their timeout only.
    assert len(race.deleted) == race.total and set(race.deleted.values()) == {1}
    assert all(len(race.holds[m]) >= 2 for m in race.abandoned)
    for times in race.holds.values():
        times.sort()
        for (_, visible), (received, _) in zip(times, times[1:], strict=False):
            assert received >= visible  # never owned by two consumers at once
    # The index writes: a put (1), each claim in place (1) or moving the entry (2), the delete (1).
    claims = sum(len(times) for times in race.holds.values())
    assert index_writes(double) <= 2 * race.total + 1.25 * claims, (index_writes(double), claims)


def test_a_receive_finds_a_message_behind_hundreds_held_in_place_and_moves_the_long_held():
    clock = SimulatedClock()
    double = SimulatedDynamoDB(now=clock.now, record_calls=True)
    queues = busy_queue(double, clock, max_queue_stripes=1)  # (one stripe: all 300 in one partition's head)
    send(queues, 300)
    now_ms = int(clock.now() * 1000)
    table = queues.messages.table
    held = [i for i in double.scan(TableName=table)["Items"] if layout.is_lease(i)]
    for item in held:  # claimed in place (as racing consumers that met no crowd leave them), for an hour
        double.update_item(
            TableName=table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression="SET v = :vis, r = :held, d = :one",
            ExpressionAttributeValues={
                ":vis": {"N": str(now_ms + 3_600_000)},
                ":held": {"N": str(layout.held_version(1, now_ms + 3_600_000))},
                ":one": {"N": "1"},
            },
        )
    queue = queues.get_queue(ACCOUNT, "q")
    assert queues.queue_counts(queue) == QueueCounts(0, 300, 0)
    clock.t += 1
    send(queues)
    (got,) = queues.receive(ACCOUNT, "q", 1, 0)  # (behind 300 held entries: read past, not given up on)
    queues.delete(ACCOUNT, "q", got.receipt_handle)

    # Met again under the same claims seconds later: held long, moved out of the receives' way (`w = v`).
    def held_in_place() -> int:
        return len(
            double.query(
                TableName=table,
                IndexName=layout.READY_INDEX,
                KeyConditionExpression="pk = :p AND w <= :now",
                ExpressionAttributeValues={":p": held[0]["pk"], ":now": {"N": str(int(clock.now() * 1000))}},
            )["Items"]
        )

    left = [held_in_place()]
    for _ in range(10):
        clock.t += 6
        send(queues)
        (again,) = queues.receive(ACCOUNT, "q", 1, 0)
        queues.delete(ACCOUNT, "q", again.receipt_handle)
        left.append(held_in_place())
        if not left[-1]:
            break
    assert left[0] == 300 and left[-1] == 0, left
    assert queues.queue_counts(queue) == QueueCounts(0, 300, 0)
    double.usage.reset()
    send(queues)
    queues.receive(ACCOUNT, "q", 1, 0)
    assert double.usage.calls is not None and sum(c.rcu for c in double.usage.calls if c.op == "Query") <= 1
