"""Capacity figures of one queue on DynamoDB, over the in-memory double (`tests/support/simulator/dynamodb.py`), real services.

  --figure depth       read units of one receive with 0 / 1,000 / 100,000 messages in flight ahead
  --figure claims      failed conditional claims per delivered message at 8, 32 and 64 consumers
  --figure attributes  GetQueueAttributes: requests, read units and time at 10 k and 1 M messages
  --figure lifecycle   requests and units per lifecycle, single and batched by 16
  --figure cost        all-in cost per million 1 KB messages on AWS at list prices, beside SQS

Consumers in `claims` are threads over the double behind one lock (DynamoDB's per-call atomicity),
with the interpreter switching threads every microsecond (`sys.setswitchinterval`), so their scans
and claims interleave finely; the simulated clock moves 5 ms per DynamoDB call of a consumer (so
CALL_SECONDS / consumers per call made by any of them), which lets time-based rules (stripe growth's
cooldown) act as they would. By default all consumers share one container (one set of queue services, as a local
server's threads do); `--claim-containers` gives each its own (own caches and growth rule, as on Lambda).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import cost_model
from bench.bodies import json_like
from bench.capacity import ACCOUNT, SimulatedClock, make_services, no_real_sleeps
from bench.cost_model import Usage
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB as FakeDynamoDB

BATCH = 16
CALL_SECONDS = 0.005  # simulated duration of one DynamoDB call in `claims`
# A 1 KB JSON-like body (an order with its lines): compresses about 2x, as real JSON events do (700 repeated
# characters compressed to 15 bytes and understated every stored body).
BODY = json_like(1024, random.Random(1))


def fresh(stripes: int | None = None, pinned: bool = False) -> tuple[Any, FakeDynamoDB, SimulatedClock]:
    clock = SimulatedClock()
    client = FakeDynamoDB(now=clock.now, record_calls=False)
    services = make_services(client, clock, stripes, pinned)
    return services, client, clock


def inputs(n: int) -> list[Any]:
    from mnsd.model.inputs import MessageInput

    return [MessageInput(body=BODY, delay_seconds=None, priority=8)] * n


def send(queues: Any, name: str, total: int) -> None:
    for start in range(0, total, BATCH):
        queues.send(ACCOUNT, name, inputs(min(BATCH, total - start)))


# --- read units per receive against messages in flight ---------------------------------------------


def placement(queues: Any, name: str) -> Any:
    """The DynamoDB engine's placement of a queue (`mnsd.storage.dynamodb.placement.placement.Placement`)."""
    return queues.messages.placer.of(queues.get_queue(ACCOUNT, name).queue_id)


def indexed(queues: Any, name: str) -> None:
    """Turn a new queue's ready index on and call it built (nothing to build yet): a queue that had turned it on."""
    queue_id, placements = queues.get_queue(ACCOUNT, name).queue_id, queues.messages.placer.placements
    started = placements.start_index(queue_id, placements.of(queue_id), int(queues.clock.now() * 1000))
    placements.advance_index(queue_id, started, None)


def holding(queues: Any, name: str, held: int, index: bool = False, settle: bool = True, burst: bool = False) -> None:
    """Create a queue (visibility 12 h) holding `held` messages received and not deleted: in flight; `index`: its
    ready index on and built from the start. They are sent at 80 messages/s (a quiet producer; `burst`: all at
    once, which grows the queue's stripes), then received one receive a simulated second: receives that read the
    leases in flight turn a quiet queue's index on; with `settle`, it is then left to settle
    (`Settings.index_settle_seconds`) and receives build it, as on a live queue."""
    from mnsd.ground import errors
    from mnsd.model.queues import QueueAttributeChanges

    queues.create_queue(ACCOUNT, name, QueueAttributeChanges(visibility_timeout="43200"))
    if index:
        indexed(queues, name)
    for start in range(0, held, BATCH):
        queues.send(ACCOUNT, name, inputs(min(BATCH, held - start)))
        queues.clock.t += 0 if burst else BATCH / 80
    taken = 0
    while taken < held:
        taken += len(queues.receive(ACCOUNT, name, BATCH, 0))
        queues.clock.t += 1
    if not settle or not placement(queues, name).spread.indexing:
        return
    queues.clock.t += queues.settings.index_settle_seconds
    while placement(queues, name).spread.plain:
        try:
            queues.receive(ACCOUNT, name, BATCH, 0)
        except errors.MessageNotExist:
            pass  # (every message is held: the receive builds the index all the same)


def index_state(queues: Any, name: str) -> str:
    spread = placement(queues, name).spread
    return "read" if spread.reads_index(0) else "kept, being built" if spread.indexing else "off"


def receive_units(queues: Any, client: FakeDynamoDB, clock: SimulatedClock, name: str) -> tuple[float, dict[str, int]]:
    """Read units and requests of one receive of 1 message (two sent first), the container warm."""
    clock.t += 1
    send(queues, name, 2)
    clock.t += 1
    queues.receive(ACCOUNT, name, 1, 0)  # warm: queue record cached, as in a busy container
    client.usage.reset()
    assert len(queues.receive(ACCOUNT, name, 1, 0)) == 1
    return sum(client.usage.rcu.values()), dict(client.usage.requests)


def depth(in_flight: list[int], stripes: int = 1, quiet_up_to: int = 1000) -> list[str]:
    """A queue whose index is on and built, at each depth; and up to `quiet_up_to` in flight a queue that starts
    quiet, measured as soon as it holds them (its index turned on by those receives, not built yet) and once its
    index settled and was built."""
    lines = ["in flight ahead | queue | read units of one receive (1 message) | requests | ready index"]
    base = None
    for n in in_flight:
        cases = [("index on from the start", True, True)]
        if n <= quiet_up_to:
            cases += [("quiet at first, just filled", False, False), ("quiet at first, index built", False, True)]
        for label, index, settle in cases:
            services, client, clock = fresh(stripes, pinned=True)
            queues = QueuesByName(services)
            holding(queues, "depth", n, index=index, settle=settle)
            rcu, requests = receive_units(queues, client, clock, "depth")
            base = rcu if base is None else base
            state = index_state(queues, "depth")
            lines.append(f"{n:>15,} | {label} | {rcu:.1f} ({rcu / base:.2f}x the first case) | {requests} | {state}")
    return lines


# --- contention -------------------------------------------------------------------------------------


def drain(queues: Any, queue: str, patience: int, take: Callable[[list[Any]], None]) -> None:
    """Receive up to 16 messages at a time from `queue` and hand them to `take`, until the queue has been found
    empty `patience` times in a row."""
    from mnsd.ground import errors

    empty = 0
    while empty < patience:
        try:
            got = queues.receive(ACCOUNT, queue, BATCH, 0)
        except errors.MessageNotExist:
            empty += 1
            continue
        empty = 0
        take(got)


def consume(queues: Any, delivered: list[int], lock: threading.Lock) -> None:
    """One consumer: receive 16, delete them, until the queue has been empty five times in a row."""

    def delete(got: list[Any]) -> None:
        queues.batch_delete(ACCOUNT, "claims", [r.receipt_handle for r in got])
        with lock:
            delivered.append(len(got))

    drain(queues, "claims", 5, delete)


@dataclass(frozen=True)
class TimedClient:
    """Moves the simulated clock by `step` seconds at each DynamoDB call: the consumers' calls take time."""

    _client: FakeDynamoDB
    _clock: SimulatedClock
    _step: float

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(**kwargs: Any) -> Any:
            self._clock.t += self._step
            return attribute(**kwargs)

        return call


def container(client: Any, clock: SimulatedClock) -> Any:
    """The queue service of another function container over the same tables (its own caches and growth rule)."""
    from mnsd.ground.settings import Settings
    from mnsd.queues.notifier import LocalNotifier
    from mnsd.services import build_services

    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET")
    return QueuesByName(build_services(settings, dynamodb=client, clock=clock, notifier=LocalNotifier()))


def contend(consumers: int, messages: int, containers: bool = False) -> str:
    from local_runtime.moto_client import SerializedClient

    clock = SimulatedClock()
    client = FakeDynamoDB(now=clock.now)
    # Each consumer's DynamoDB call takes CALL_SECONDS; consumers call in parallel, so simulated time moves
    # CALL_SECONDS / consumers per call made by any of them.
    timed = SerializedClient(TimedClient(client, clock, CALL_SECONDS / consumers))
    queues = make_services(timed, clock).queues
    queues.create_queue(ACCOUNT, "claims")
    send(queues, "claims", messages)
    client.usage.reset()
    delivered: list[int] = []
    lock = threading.Lock()
    # One container serving every consumer (a local server's threads), or one container per consumer (Lambda).
    services = [container(timed, clock) if containers else queues for _ in range(consumers)]
    threads = [threading.Thread(target=consume, args=(service, delivered, lock)) for service in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = client.usage.failed_conditions["UpdateItem"]
    total = sum(delivered)
    stripes = placement(queues, "claims").stripes
    rcu = sum(client.usage.rcu.values()) / max(1, total)
    receives = len(delivered) / max(1, total)
    return (
        f"{consumers:>9} | {total:>9} | {failed:>24} | {failed / max(1, total):.3f} | {stripes} | {rcu:.3f}"
        f" | {receives:.3f}"
    )


def claims(consumer_counts: list[int], messages: int, containers: bool = False) -> list[str]:
    lines = [
        "consumers | delivered | failed conditional claims | per delivered message | stripes at the end"
        " | read units per delivered message | receives (with messages) per delivered message"
    ]
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        lines += [contend(consumers, messages, containers) for consumers in consumer_counts]
    finally:
        sys.setswitchinterval(previous)
    return lines


# --- GetQueueAttributes -------------------------------------------------------------------------------


def attributes(sizes: list[int], stripes: int = 1) -> list[str]:
    lines = ["messages (all Active) | queue | requests | read units | wall time on the double | counts answered"]
    for n, (label, index) in ((n, case) for n in sizes for case in (("quiet", False), ("index on", True))):
        services, client, clock = fresh(stripes, pinned=True)
        queues = QueuesByName(services)
        queues.create_queue(ACCOUNT, "big")
        if index:
            indexed(queues, "big")
        for start in range(0, n, BATCH):  # 16 messages per simulated ms: 16,000 messages/s
            clock.t += 0.001
            queues.send(ACCOUNT, "big", inputs(min(BATCH, n - start)))
        clock.t += 1
        client.usage.reset()
        started = time.perf_counter()
        counts = queues.queue_counts(queues.get_queue(ACCOUNT, "big"))
        wall = time.perf_counter() - started
        requests = sum(client.usage.requests.values())
        rcu = sum(client.usage.rcu.values())
        lines.append(
            f"{n:>9,} | {label} | {requests} ({dict(client.usage.requests)}) | {rcu:.1f} | {wall * 1000:.0f} ms | {counts}"
        )
    return lines


# --- per lifecycle --------------------------------------------------------------------------------------


def lifecycle(messages: int = 320, held: int = 0, burst: bool = False) -> dict[str, dict[str, float]]:
    """Per message: DynamoDB requests, write and read units, API requests, for single and batched lifecycles;
    `held` messages received first and kept in flight meanwhile (consumers that hold what they work on), sent at
    a quiet producer's rate or (`burst`) all at once."""
    out: dict[str, dict[str, float]] = {}
    for label, batch in (("single", 1), ("batched by 16", BATCH)):
        services, client, clock = fresh()
        queues = QueuesByName(services)
        holding(queues, "life", held, burst=burst)
        stripes = placement(queues, "life").stripes
        if burst:  # quiet for two hours after the burst: the queue sends over few of its stripes again
            clock.t += 7200
            width = placement(queues, "life").send_width(int(clock.t * 1000))
            label += f" ({stripes} stripes, sending over {width}, two hours after the burst)"
        elif stripes > 1:
            label += f" ({stripes} stripes)"
        queues.send(ACCOUNT, "life", inputs(1))  # warm the container's caches, as a busy one is
        queues.delete(ACCOUNT, "life", queues.receive(ACCOUNT, "life", 1, 0)[0].receipt_handle)
        client.usage.reset()
        api = 0
        step = max(
            0.01, batch / 160
        )  # 50 or 80 messages/s: a quiet queue (`mnsd.storage.dynamodb.placement.stripes`: it keeps one stripe)
        for _ in range(messages // batch):
            clock.t += step
            queues.send(ACCOUNT, "life", inputs(batch))
            got = queues.receive(ACCOUNT, "life", batch, 0)
            clock.t += step
            if batch == 1:
                queues.delete(ACCOUNT, "life", got[0].receipt_handle)
            else:
                queues.batch_delete(ACCOUNT, "life", [r.receipt_handle for r in got])
            api += 3
        usage = client.usage
        out[label] = {
            "requests": sum(usage.requests.values()) / messages,
            "wcu": sum(usage.wcu.values()) / messages,
            "rcu": sum(usage.rcu.values()) / messages,
            "api": api / messages,
            **{f"op {op}": count / messages for op, count in sorted(usage.requests.items())},
        }
    return out


def lifecycle_lines(figures: dict[str, dict[str, float]]) -> list[str]:
    lines = ["lifecycle | DynamoDB requests / message | WCU / message | RCU / message | by operation"]
    for label, f in figures.items():
        ops = ", ".join(f"{k[3:]} {v:.3f}" for k, v in f.items() if k.startswith("op "))
        lines.append(f"{label} | {f['requests']:.3f} | {f['wcu']:.3f} | {f['rcu']:.3f} | {ops}")
    return lines


def cost_lines(figures: dict[str, dict[str, float]]) -> list[str]:
    """All-in $ per million messages of each lifecycle, by `bench/cost_model.py` (bench/message_cost.py measures
    every body size and queue kind through the engine on moto)."""
    lines = [
        cost_model.prices_line(),
        "per million 1 KB JSON-like messages | HTTP API | Lambda | DynamoDB | total | SQS standard",
    ]
    for label, f in figures.items():
        batch = 1 if f["api"] >= 1 else BATCH
        usage = Usage(messages=1_000_000, write_units=f["wcu"] * 1e6, read_units=f["rcu"] * 1e6)
        for op in usage.operations.values():  # (the DynamoDB calls spread evenly over the three requests)
            op.requests = op.metered_requests = round(f["api"] / 3 * 1e6)
            op.dynamodb_calls = round(f["requests"] / 3 * 1e6)
        parts = cost_model.per_million(usage)
        dynamodb = parts["DynamoDB writes"] + parts["DynamoDB reads"]
        lines.append(
            f"{label} | ${parts['HTTP API']:.2f} | ${parts['Lambda']:.2f} | ${dynamodb:.2f} | "
            f"${sum(parts.values()):.2f} | ${cost_model.sqs_per_million(len(BODY), batch, False):.2f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--figure", action="append", choices=["depth", "claims", "attributes", "lifecycle", "cost"])
    parser.add_argument("--in-flight", type=int, action="append", help="default 0, 1000, 100000")
    parser.add_argument("--consumers", type=int, action="append", help="default 8, 32, 64")
    parser.add_argument("--claim-messages", type=int, default=4000)
    parser.add_argument(
        "--claim-containers", action="store_true", help="claims: one container per consumer (default: one for all)"
    )
    parser.add_argument("--sizes", type=int, action="append", help="default 10000, 1000000")
    parser.add_argument(
        "--stripes", type=int, default=1, help="depth, attributes: the queue's stripes, held (its set-up is a burst)"
    )
    parser.add_argument("--held", type=int, default=0, help="lifecycle, cost: messages kept in flight meanwhile")
    parser.add_argument(
        "--burst", action="store_true", help="--held: send them all at once (the queue grows), measure 2 h later"
    )
    args = parser.parse_args()
    no_real_sleeps()
    wanted = args.figure or ["depth", "claims", "attributes", "lifecycle", "cost"]
    if "depth" in wanted:
        print("\n== read units per receive, messages in flight ahead ==", flush=True)
        print("\n".join(depth(args.in_flight or [0, 1000, 100000], args.stripes)), flush=True)
    if "claims" in wanted:
        print("\n== failed conditional claims per delivered message ==", flush=True)
        consumer_counts = args.consumers or [8, 32, 64]
        print("\n".join(claims(consumer_counts, args.claim_messages, args.claim_containers)), flush=True)
    if "attributes" in wanted:
        print("\n== GetQueueAttributes (counts) ==", flush=True)
        print("\n".join(attributes(args.sizes or [10000, 1000000], args.stripes)), flush=True)
    if "lifecycle" in wanted or "cost" in wanted:
        figures = lifecycle(held=args.held, burst=args.burst)
        if args.held:
            print(f"\n({args.held} messages received before and held in flight during the lifecycles)")
        if "lifecycle" in wanted:
            print("\n== requests and units per lifecycle ==")
            print("\n".join(lifecycle_lines(figures)))
        if "cost" in wanted:
            print("\n== all-in cost per million 1 KB messages ==")
            print("\n".join(cost_lines(figures)))


if __name__ == "__main__":
    main()
