"""Write and read units a message costs on the DynamoDB engine, send + receive + delete, through the real services.

    python -m bench.pack_units [--messages N] [--packed] [--receivers-only]

Runs over the in-memory DynamoDB double (`tests/support/simulator/dynamodb.py`, which bills every call and index write by
DynamoDB's rules, checked against moto and `tests/support/recording.py`), simulated clock. Per case: a fresh queue, its
caches warmed by one message, then `--messages` messages sent in batches, each batch received (by one consumer, as
many as were sent) and deleted by receipt handle a simulated second later. Bodies are random bytes in base64 cut to
length: incompressible. "indexed": the queue's writes keep the ready index from the start (a queue that has ever
been busy). FIFO: every message in one group. `--packed`: the engine storing batches packed
(`Settings.packed_batches`, `mnsd.storage.dynamodb.items.packs`; a FIFO batch, a pack per group's run: `group_packs`).
"2 receivers": the queue has two receivers (their indexes on too), and each batch is received and deleted on the
queue and on each receiver: the figures are per message sent, its copies' lifecycles included (`--receivers-only`:
only those cases). Left out: contention between consumers (lost claims), retries, the operation log, the wait tier.
"""

from __future__ import annotations

import argparse
import base64
import os
from typing import Any

from bench.capacity import ACCOUNT, SimulatedClock
from bench.capacity_figures import indexed
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB


def body(length: int) -> str:
    return base64.b64encode(os.urandom(length)).decode()[:length]


def fresh(packed: bool) -> tuple[Any, SimulatedDynamoDB, SimulatedClock]:
    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.queues.notifier import LocalNotifier
    from mnsd.services import build_services

    clock = SimulatedClock()
    client = SimulatedDynamoDB(now=clock.now, record_calls=False)
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", packed_batches=packed)
    create_tables(client, settings)
    return build_services(settings, dynamodb=client, clock=clock, notifier=LocalNotifier()), client, clock


def units(
    size: int,
    batch: int,
    messages: int,
    fifo: bool = False,
    index: bool = True,
    packed: bool = False,
    receivers: int = 0,
) -> tuple[float, float]:
    """(write units, read units) per message of `messages` lifecycles of `size`-byte bodies sent in `batch`es (on the
    queue and on each of its `receivers`)."""
    from mnsd.model.inputs import MessageInput
    from mnsd.model.queues import QueueAttributeChanges
    from mnsd.queues.receivers import ReceiverInput

    services, client, clock = fresh(packed)
    queues = QueuesByName(services)
    queues.create_queue(ACCOUNT, "q", QueueAttributeChanges(queue_type="fifo" if fifo else None))
    names = ["q"]
    for n in range(receivers):
        queues.receivers.create(ACCOUNT, "q", f"r{n}", ReceiverInput())
        names.append(f"q.r{n}")
    if index and not fifo:
        for name in names:
            indexed(queues, name)

    def batch_of(n: int) -> list[Any]:
        return [MessageInput(body(size), None, 8, message_group_id="g" if fifo else "") for _ in range(n)]

    def lifecycle(n: int) -> None:
        assert all(r.error is None for r in queues.send(ACCOUNT, "q", batch_of(n)))
        got = {name: queues.receive(ACCOUNT, name, n, 0) for name in names}
        assert all(len(some) == n for some in got.values()), {name: len(some) for name, some in got.items()}
        clock.t += 1
        for name, some in got.items():
            if n == 1:
                queues.delete(ACCOUNT, name, some[0].receipt_handle)
            else:
                assert not queues.batch_delete(ACCOUNT, name, [r.receipt_handle for r in some])
        clock.t += 0.1

    lifecycle(batch)  # warm: the queue's records cached, as in a busy container
    client.usage.reset()
    for _ in range(messages // batch):
        lifecycle(batch)
    usage = client.usage
    return sum(usage.wcu.values()) / messages, sum(usage.rcu.values()) / messages


CASES = [
    ("standard, indexed, batched 16, 1 KB incompressible", dict(size=1024, batch=16)),
    ("standard, indexed, batched 16, 64 B incompressible", dict(size=64, batch=16)),
    ("standard, indexed, single, 1 KB incompressible", dict(size=1024, batch=1)),
    ("standard, indexed, single, 64 B incompressible", dict(size=64, batch=1)),
    ("standard, quiet, batched 16, 1 KB incompressible", dict(size=1024, batch=16, index=False)),
    ("standard, quiet, single, 1 KB incompressible", dict(size=1024, batch=1, index=False)),
    ("FIFO, one group, batched 16, 1 KB incompressible", dict(size=1024, batch=16, fifo=True)),
    ("FIFO, one group, batched 16, 64 B incompressible", dict(size=64, batch=16, fifo=True)),
    ("FIFO, one group, single, 1 KB incompressible", dict(size=1024, batch=1, fifo=True)),
]
RECEIVER_CASES = [
    ("standard, 2 receivers, indexed, batched 16, 1 KB incompressible", dict(size=1024, batch=16, receivers=2)),
    ("standard, 2 receivers, indexed, batched 16, 64 B incompressible", dict(size=64, batch=16, receivers=2)),
    ("standard, 2 receivers, indexed, single, 4 KB incompressible", dict(size=4096, batch=1, receivers=2)),
    ("standard, 2 receivers, indexed, single, 1 KB incompressible", dict(size=1024, batch=1, receivers=2)),
]


def main() -> None:
    from bench.capacity import no_real_sleeps

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=160)
    parser.add_argument("--packed", action="store_true", help="batches stored packed (Settings.packed_batches)")
    parser.add_argument("--receivers-only", action="store_true", help="only the cases of a queue with receivers")
    args = parser.parse_args()
    no_real_sleeps()
    print("case | write units / message | read units / message")
    for label, case in ([] if args.receivers_only else CASES) + RECEIVER_CASES:
        wcu, rcu = units(messages=args.messages, packed=args.packed, **case)  # type: ignore[arg-type]
        print(f"{label} | {wcu:.3f} | {rcu:.3f}")


if __name__ == "__main__":
    main()
