"""Capacity simulation: N message lifecycles per simulated second on one queue, per-partition load on DynamoDB.

The real services (`build_services`: the queue services over the DynamoDB engine) run against the in-memory
DynamoDB double (`tests/support/simulator/dynamodb.py`), which bills every call by DynamoDB's size rules and
charges it to the partitions it touched (base table and index partitions alike). The clock is
simulated (`mnsd.ground.clock` protocol): time moves only when the simulation moves it, in ticks of
`TICK` seconds. Each tick, producers send the tick's share of messages (batches of 16), consumers
receive (batches of 16, no wait) until what was sent is taken, and each received message is deleted
(batch delete by 16) 1-5 s (uniformly random; `--hold LOW,HIGH` sets it) after its receive. After the sending seconds, a few
more seconds drain what is still in flight. Consumers are simulated one after another within a tick,
so they never race for one lease here (contention is `bench.capacity_figures`' concern).

Per simulated second it prints the hottest partition's WCU and RCU (and which partition), the
partitions the queue's messages were written to (its stripes), and the requests DynamoDB refused for
throughput. By default the double throttles as DynamoDB does per partition (1,000 WCU/s, 3,000 RCU/s,
no burst or adaptive capacity), so an engine that grows its stripes under throttling can do so; a
throttled partition cannot then exceed the ceiling by much, so the refused requests are the figure to
read beside the peak. `--no-throttle` measures the demand instead.

`--fifo-groups N` makes the queue a FIFO queue whose messages spread over N groups at random (a group is held
from a run's receive until its delete, so a group passes at most one run per hold); `--receivers N` gives the
queue N receivers besides itself, each consumed as the queue is. The summary gives the units per message
lifecycle (all partitions, all seconds, over the lifecycles completed by every consumer), the reads an empty
receive made (requests to DynamoDB and read units, averaged over the receives that returned nothing) and, for a
FIFO queue, its directory's width at the end. A FIFO group passes one run per hold: over G groups a queue delivers at
most about G / hold single-message lifecycles a second (1,000 groups held 1-5 s: about 330/s), whatever the engine,
so a FIFO figure at a high rate needs a short `--hold`.

Every message has a body of its own, 1 KB (`--body`): incompressible by default (base64 of random bytes, as binary or
encrypted payloads are sent), or JSON-like; `repeated` is the 700 `x` characters the figures before 2026-11-29 used,
which compress to a few bytes and so understate what a batch's bodies cost.
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import random
import time
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from bench import bodies
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import Partition
from tests.support.simulator.dynamodb import SimulatedDynamoDB as FakeDynamoDB

if TYPE_CHECKING:
    from mnsd.model.inputs import MessageInput

ACCOUNT = "1000000000000001"
QUEUE = "capacity"
BATCH = 16
TICK = 0.05  # s
HOLD = (1.0, 5.0)  # s a consumer holds a message before deleting it
BODY_BYTES = 1024
BODIES: dict[str, tuple[str, Callable[[random.Random], str]]] = {  # --body: (what the title says, a body)
    "incompressible": ("1 KB incompressible bodies", lambda rng: bodies.incompressible(BODY_BYTES, rng)),
    "json": ("1 KB JSON-like bodies", lambda rng: bodies.json_like(BODY_BYTES, rng)),
    "repeated": ("700-byte repeated bodies", lambda rng: "x" * 700),
}
DRAIN_SECONDS = 6
START = 1_800_000_000.0
TARGET_WCU = 1000
TARGET_RCU = 3000


class SimulatedClock:
    """`mnsd.ground.clock.Clock` over simulated time: `sleep` moves it (nothing here waits in real time)."""

    def __init__(self, start: float = START) -> None:
        self.t = start

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.t += seconds


@dataclass
class Second:
    second: int
    wcu: float
    rcu: float
    wcu_partition: Partition | None
    rcu_partition: Partition | None
    stripes: int
    throttled: int
    sent: int
    deleted: int


@dataclass
class Run:
    rate: int
    seconds: int
    throttle: bool
    rows: list[Second] = field(default_factory=list)
    sent: int = 0
    received: int = 0
    deleted: int = 0
    failed_sends: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    requests: Counter[str] = field(default_factory=Counter)
    wall: float = 0.0
    cpu: float = 0.0
    final_stripes: int = 0
    consumers: int = 1  # the queue, and its receivers
    units: tuple[float, float] = (0.0, 0.0)  # WCU, RCU over the whole run
    empty_polls: int = 0  # receives that returned nothing
    empty_poll_reads: tuple[int, float] = (0, 0.0)  # read requests and RCU of those receives
    directory: int = 0  # a FIFO queue's directory partitions at the end (0: not FIFO)

    def per_lifecycle(self) -> tuple[float, float]:
        """Units per message lifecycle: per message sent, taken by every consumer (send, receive, delete)."""
        lifecycles = self.deleted / self.consumers
        return (self.units[0] / lifecycles, self.units[1] / lifecycles) if lifecycles else (0.0, 0.0)

    def per_empty_poll(self) -> tuple[float, float]:
        """Read requests and read units per receive that returned nothing."""
        if not self.empty_polls:
            return (0.0, 0.0)
        return (self.empty_poll_reads[0] / self.empty_polls, self.empty_poll_reads[1] / self.empty_polls)

    def peak(self, start: int = 0) -> tuple[float, float]:
        rows = self.rows[start:] or [Second(0, 0, 0, None, None, 0, 0, 0, 0)]
        return max(r.wcu for r in rows), max(r.rcu for r in rows)


def make_services(
    client: Any, clock: SimulatedClock, stripes: int | None = None, pinned: bool = False, packed: bool = True
) -> Any:
    """The services over `client`; a queue starts with `stripes` stripes, and keeps that count if `pinned`;
    `packed`: batches stored packed (`Settings.packed_batches`)."""
    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.queues.notifier import LocalNotifier
    from mnsd.services import build_services

    overrides: dict[str, Any] = {"credentials": f"{ACCOUNT}:KEYID:SECRET", "packed_batches": packed}
    if stripes is not None and hasattr(Settings, "queue_stripes"):
        overrides["queue_stripes"] = stripes
        if pinned:
            overrides["max_queue_stripes"] = stripes
    settings = Settings(**overrides)
    create_tables(client, settings)
    return build_services(settings, dynamodb=client, clock=clock, notifier=LocalNotifier())


def no_real_sleeps() -> None:
    """The engine backs off throttled writes with `time.sleep`: in simulated time that is no wait."""
    from mnsd.storage.dynamodb.fifo import group_writes
    from mnsd.storage.dynamodb.items import message_table

    simulated = types.SimpleNamespace(sleep=lambda seconds: None, time=time.time, monotonic=time.monotonic)
    for module in (message_table, group_writes):
        if hasattr(module, "time"):
            setattr(module, "time", simulated)  # noqa: B010 (any module of the engine that sleeps)


def queue_partitions(loads: dict[Partition, list[float]], table: str, queue_id: str) -> int:
    """The message-table partitions of the queue written in one second: `queue_id` and `queue_id#s`."""
    return sum(
        1
        for (name, index, key), (w, _) in loads.items()
        if name == table and not index and w > 0 and (key == queue_id or str(key).startswith(queue_id + "#"))
    )


def seeded_ids(rng: random.Random) -> None:
    """Message and queue ids from a seeded generator instead of `secrets`, so that a run (the stripes its
    messages land in) can be repeated exactly."""
    from mnsd.queues import receivers as queue_receivers
    from mnsd.storage import ids as message_ids
    from mnsd.storage.dynamodb.items import packs
    from mnsd.storage.dynamodb.placement import placer

    seeded = types.SimpleNamespace(
        token_hex=lambda n: rng.randbytes(n).hex(),
        token_urlsafe=lambda n: rng.randbytes(n).hex(),
        randbelow=rng.randrange,
    )
    for module in (
        queue_receivers,
        message_ids,
        placer,
        packs,
    ):  # receiver and queue ids; message ids; the stripe each id names; packed batches' ids
        module.secrets = seeded  # type: ignore[attr-defined]


class Simulation:
    def __init__(
        self,
        rate: int,
        seconds: int,
        throttle: bool,
        stripes: int | None,
        seed: int,
        fifo_groups: int = 0,
        receivers: int = 0,
        hold: tuple[float, float] = HOLD,
        packed: bool = True,
        body: str = "incompressible",
    ) -> None:
        from mnsd.model.inputs import MessageInput
        from mnsd.model.queues import QueueAttributeChanges
        from mnsd.queues.receivers import ReceiverInput

        kind = f", FIFO over {fifo_groups} groups" if fifo_groups else ""
        kind += "" if packed else ", batches not packed"
        kind += f", {BODIES[body][0]}"
        kind += f", {receivers} receivers" if receivers else ""
        kind += f", held {hold[0]:g}-{hold[1]:g} s" if hold != HOLD else ""
        self.title = f"{rate} lifecycles/s, {seconds} s{kind}"
        no_real_sleeps()
        self.rng = random.Random(seed)
        random.seed(seed)
        seeded_ids(random.Random(seed))
        self.clock = SimulatedClock()
        self.client = FakeDynamoDB(now=self.clock.now, throttle=throttle)
        self.services = make_services(self.client, self.clock, stripes, packed=packed)
        self.queues = QueuesByName(self.services)
        self.queues.create_queue(ACCOUNT, QUEUE, QueueAttributeChanges(queue_type="fifo") if fifo_groups else None)
        self.queue_id = self.services.addresses.resolve(ACCOUNT, QUEUE).queue_id
        self.consumers = [QUEUE] + [f"{QUEUE}.r{n}" for n in range(receivers)]  # the queue and its receivers
        for name in self.consumers[1:]:
            self.services.receivers.create(ACCOUNT, QUEUE, name.split(".", 1)[1], ReceiverInput())
        self.bodies = BODIES[body][1]
        self.groups = [f"group-{n}" for n in range(fifo_groups)]
        self.input = MessageInput(body="", delay_seconds=None, priority=8)
        self.run = Run(rate, seconds, throttle)
        self.hold = hold
        self.run.consumers = len(self.consumers)
        self.due: list[tuple[float, int, str, str]] = []  # (delete time, sequence, consumer, receipt handle)
        self.sequence = 0
        self.owed = 0.0  # messages to send, carried between ticks
        self.unreceived = dict.fromkeys(self.consumers, 0)

    def call(self, name: str, fn: Any, *args: Any) -> Any:
        from mnsd.ground import errors

        self.run.requests[name] += 1
        try:
            return fn(*args)
        except ClientError as exc:
            self.run.errors[f"{name}: {exc.response['Error']['Code']}"] += 1
        except errors.MnsError as exc:
            if not isinstance(exc, errors.MessageNotExist):
                self.run.errors[f"{name}: {type(exc).__name__}"] += 1
        return None

    def send(self, count: int) -> None:
        while count > 0:
            n = min(BATCH, count)
            count -= n
            batch = [self._message() for _ in range(n)]
            results = self.call("BatchSendMessage", self.queues.send, ACCOUNT, QUEUE, batch)
            if results is None:
                self.run.failed_sends += n
                continue
            ok = sum(1 for r in results if r.error is None)
            self.run.failed_sends += n - ok
            self.run.sent += ok
            for consumer in self.consumers:
                self.unreceived[consumer] += ok

    def _message(self) -> MessageInput:
        """A message of its own body (a batch's bodies differ, as clients' do: packs compress a batch together)."""
        group = self.rng.choice(self.groups) if self.groups else ""
        return dataclasses.replace(self.input, body=self.bodies(self.rng), message_group_id=group)

    def receive(self) -> None:
        for consumer in self.consumers:
            empty = 0
            while self.unreceived[consumer] > 0 and empty < 3:
                reads = self.reads()
                got = self.call("BatchReceiveMessage", self.queues.receive, ACCOUNT, consumer, BATCH, 0)
                if not got:
                    empty += 1
                    after = self.reads()
                    self.run.empty_polls += 1
                    requests, units = self.run.empty_poll_reads
                    self.run.empty_poll_reads = (requests + after[0] - reads[0], units + after[1] - reads[1])
                    continue
                self.run.received += len(got)
                self.unreceived[consumer] -= len(got)
                now = self.clock.now()
                for message in got:
                    self.sequence += 1
                    due = now + self.rng.uniform(*self.hold)
                    heapq.heappush(self.due, (due, self.sequence, consumer, message.receipt_handle))

    def reads(self) -> tuple[int, float]:
        """Read requests made to DynamoDB so far, and their read units."""
        usage = self.client.usage
        ops = ("GetItem", "BatchGetItem", "Query", "Scan")
        return sum(usage.requests[op] for op in ops), sum(usage.rcu[op] for op in ops)

    def delete_due(self) -> None:
        now = self.clock.now()
        handles: dict[str, list[str]] = {}
        while self.due and self.due[0][0] <= now:
            _, _, consumer, handle = heapq.heappop(self.due)
            handles.setdefault(consumer, []).append(handle)
        for consumer, owned in handles.items():
            for start in range(0, len(owned), BATCH):
                chunk = owned[start : start + BATCH]
                failures = self.call("BatchDeleteMessage", self.queues.batch_delete, ACCOUNT, consumer, chunk)
                if failures is not None:
                    self.run.deleted += len(chunk) - len(failures)
                    for _, error in failures:
                        self.run.errors[f"BatchDeleteMessage: {type(error).__name__}"] += 1

    def tick(self, sending: bool) -> None:
        if sending:
            self.owed += self.run.rate * TICK
            whole = int(self.owed)
            self.owed -= whole
            self.send(whole)
        self.receive()
        self.delete_due()

    def simulate(self, quiet: bool) -> Run:
        print(f"\n== {self.title} ==", flush=True)
        started, cpu_started = time.perf_counter(), time.process_time()
        table = self.services.settings.message_table
        ticks_per_second = round(1 / TICK)
        for second in range(self.run.seconds + DRAIN_SECONDS):
            sent, deleted = self.run.sent, self.run.deleted
            for step in range(ticks_per_second):
                self.clock.t = START + second + step * TICK
                self.tick(sending=second < self.run.seconds)
            absolute = int(START) + second
            w, r, wp, rp = self.client.usage.hottest(absolute)
            loads = self.client.usage.per_second.get(absolute, {})
            row = Second(
                second,
                w,
                r,
                wp,
                rp,
                queue_partitions(loads, table, self.queue_id),
                self.client.usage.throttled_per_second.get(absolute, 0),
                self.run.sent - sent,
                self.run.deleted - deleted,
            )
            self.run.rows.append(row)
            if not quiet:
                print(format_row(row, self.queue_id), flush=True)
            if not self.due and second >= self.run.seconds and max(self.unreceived.values()) <= 0:
                break
        self.run.wall = time.perf_counter() - started
        self.run.cpu = time.process_time() - cpu_started
        queue_id = self.services.addresses.resolve(ACCOUNT, QUEUE).queue_id
        self.run.final_stripes = self.queues.messages.placer.of(queue_id).stripes
        if self.groups:
            directory = getattr(self.services.storage.fifo_messages, "directory", None)
            self.run.directory = directory.width(queue_id) if directory is not None else 8  # (8: before it grew)
        self.run.units = (sum(self.client.usage.wcu.values()), sum(self.client.usage.rcu.values()))
        return self.run


def partition_name(partition: Partition | None, queue_id: str) -> str:
    if partition is None:
        return "-"
    table, index, key = partition
    key = str(key).replace(queue_id, "Q")
    return f"{table}{'/' + index if index else ''}:{key}"


def format_row(row: Second, queue_id: str) -> str:
    return (
        f"t={row.second:3d}s  hottest WCU/s {row.wcu:8.0f} ({partition_name(row.wcu_partition, queue_id)})"
        f"  RCU/s {row.rcu:8.1f} ({partition_name(row.rcu_partition, queue_id)})"
        f"  stripes written {row.stripes:3d}  throttled {row.throttled:6d}  sent {row.sent:6d}  deleted {row.deleted:6d}"
    )


def summary(run: Run) -> list[str]:
    steady = min(10, run.seconds // 2)
    w, r = run.peak()
    sw, sr = run.peak(steady)
    throttled_steady = sum(row.throttled for row in run.rows[steady:])
    within = w <= TARGET_WCU and r <= TARGET_RCU
    # Under modelled throttling a partition cannot go far past the ceiling: the target is met only if
    # nothing was refused once the queue had settled and every message went through.
    met = "met" if within and throttled_steady == 0 and run.failed_sends == 0 else "NOT met"
    lines = [
        f"rate {run.rate} lifecycles/s for {run.seconds} simulated s (+ drain), throttling "
        f"{'modelled' if run.throttle else 'off'}; {run.wall:.1f} s of wall time ({run.cpu:.1f} s of CPU)",
        f"  sent {run.sent}, received {run.received}, deleted {run.deleted}, failed sends {run.failed_sends}",
        f"  stripes at the end: {run.final_stripes}",
        f"  peak hottest partition: {w:.0f} WCU/s, {r:.1f} RCU/s (targets {TARGET_WCU} / {TARGET_RCU}: {met})",
        f"  from t={steady}s on: {sw:.0f} WCU/s, {sr:.1f} RCU/s; throttled requests from then on: {throttled_steady}",
        f"  requests to the service: {dict(run.requests)}",
        "  units per message: {:.3f} WCU, {:.3f} RCU (over {} consumer(s))".format(*run.per_lifecycle(), run.consumers),
        "  reads per empty receive: {:.2f} requests, {:.2f} RCU (over {} empty receives)".format(
            *run.per_empty_poll(), run.empty_polls
        ),
    ]
    if run.directory:
        lines.append(f"  FIFO directory partitions at the end: {run.directory}")
    if run.errors:
        lines.append(f"  errors: {dict(run.errors)}")
    return lines


def _hold(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    return float(low), float(high or low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="simulated seconds of sending (default 60)")
    parser.add_argument("--rate", type=int, action="append", help="lifecycles per second (default: 100 and 10000)")
    parser.add_argument("--no-throttle", action="store_true", help="measure demand: no per-partition ceiling")
    parser.add_argument("--stripes", type=int, help="stripes a new queue starts with (the engine's setting)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quiet", action="store_true", help="only the summaries")
    parser.add_argument("--fifo-groups", type=int, default=0, help="a FIFO queue, its messages over N groups")
    parser.add_argument("--receivers", type=int, default=0, help="N receivers on the queue besides itself")
    parser.add_argument(
        "--hold", type=_hold, default=HOLD, help="LOW,HIGH: seconds a consumer holds a message (default 1,5)"
    )
    parser.add_argument(
        "--unpacked", action="store_true", help="one lease per message (Settings.packed_batches off; packed by default)"
    )
    parser.add_argument(
        "--body", choices=sorted(BODIES), default="incompressible", help="each message's body (default incompressible)"
    )
    args = parser.parse_args()
    rates = args.rate or [100, 10000]
    runs = [
        Simulation(
            rate,
            args.seconds,
            not args.no_throttle,
            args.stripes,
            args.seed,
            args.fifo_groups,
            args.receivers,
            args.hold,
            not args.unpacked,
            args.body,
        ).simulate(args.quiet)
        for rate in rates
    ]
    print("\n== summary ==")
    for run in runs:
        print("\n".join(summary(run)))
    last = runs[-1]
    w, r = last.peak()
    print(f"hottest partition: {w:.0f} WCU/s, {r:.0f} RCU/s at {last.rate} lifecycles/s")


if __name__ == "__main__":
    main()
