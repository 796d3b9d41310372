"""Units one message costs sent, received and deleted alone on a busy (indexed) standard queue, with others in flight.

    python -m bench.index_writes [--lifecycles N]

Runs over the in-memory DynamoDB double (`tests/support/simulator/dynamodb.py`: every call and every ready-index write billed
by DynamoDB's rules, the same as `tests/support/recording.py` over moto), simulated clock. Per case: a fresh queue, its
ready index on from the start, batches not packed (every message its own lease), holding `in flight` messages
received and not deleted (`capacity_figures.holding`: visibility 12 h, received 16 a receive), 16 more waiting; then `--lifecycles` times one message sent, received
(one message) and deleted by its handle, 0.1 simulated seconds apart, by one client: the figures are per lifecycle.
Bodies 1 KB, incompressible. Write units are the table's and the index's together (the index's apart too); read
units are the Queries' (index and table) and GetItem/BatchGetItem's. The design: `docs/ready-index-writes.md`.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.capacity import ACCOUNT, SimulatedClock
from bench.capacity_figures import holding
from bench.pack_units import body
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB

IN_FLIGHT = (1, 16, 1000)


def fresh() -> tuple[QueuesByName, SimulatedDynamoDB, SimulatedClock]:
    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.queues.notifier import LocalNotifier
    from mnsd.services import build_services

    clock = SimulatedClock()
    client = SimulatedDynamoDB(now=clock.now, record_calls=True)
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", packed_batches=False)  # (every message a lease)
    create_tables(client, settings)
    services = build_services(settings, dynamodb=client, clock=clock, notifier=LocalNotifier())
    return QueuesByName(services), client, clock


def units(in_flight: int, lifecycles: int) -> tuple[float, float, float]:
    """(write units, of them the index's, read units) per lifecycle of one message, `in_flight` others held."""
    from mnsd.model.inputs import MessageInput

    queues, client, clock = fresh()
    holding(queues, "q", in_flight, index=True)

    def send(n: int) -> None:
        assert all(r.error is None for r in queues.send(ACCOUNT, "q", [MessageInput(body(1024), None, 8)] * n))

    def lifecycle() -> None:
        send(1)
        clock.t += 0.1
        (got,) = queues.receive(ACCOUNT, "q", 1, 0)
        clock.t += 0.1
        queues.delete(ACCOUNT, "q", got.receipt_handle)
        clock.t += 0.1

    send(16)
    lifecycle()  # warm: the queue's records cached, as in a busy container
    client.usage.reset()
    for _ in range(lifecycles):
        lifecycle()
    usage: Any = client.usage
    index = sum(call.index_wcu for call in usage.calls)
    return sum(usage.wcu.values()) / lifecycles, index / lifecycles, sum(usage.rcu.values()) / lifecycles


def main() -> None:
    from bench.capacity import no_real_sleeps

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lifecycles", type=int, default=200)
    args = parser.parse_args()
    no_real_sleeps()
    print("others in flight | write units / message | of them the index's | read units / message")
    for held in IN_FLIGHT:
        wcu, index, rcu = units(held, args.lifecycles)
        print(f"{held} | {wcu:.3f} | {index:.3f} | {rcu:.3f}")


if __name__ == "__main__":
    main()
