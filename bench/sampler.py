"""What the metrics sampler costs (`mnsd.monitoring`): DynamoDB read units per monitored queue per run (a run a minute),
and the sampler's own CPU per queue, which sizes its Lambda function.

Read units: the real services and sampler over the in-memory DynamoDB double (`tests/support/simulator`, billed by DynamoDB's
size rules, checked against moto by the test suite), one account per shape of queue, each run in a container whose
caches of the queue records have expired (as a minute after the last run). The listing (every account's queue
records and the account map) is counted in the figure per queue.

CPU: the sampler in this process with boto3 (the functions' client configuration, 16 threads) against moto's server in
another process, so that only the sampler's CPU (boto3's signing and parsing, the engine's reading of the items) is
counted; `time.process_time` over a run of `--queues` queues, after a first run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from typing import Any

from bench._common import md_table, use_local_aws_defaults, write_result
from bench._servers import free_port
from bench.capacity import SimulatedClock, make_services
from mnsd.metrics import NoMetrics
from mnsd.model.kinds import kind_of
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB

BODY = "x" * 700  # a 1 KB message
BATCH = 16
RUNS_PER_MONTH = 60 * 24 * 30
READ_PER_MILLION = 0.125  # DynamoDB on demand, per million read request units (us-east-1)


def send(queues: Any, account: str, name: str, total: int, fifo: bool = False, pause: float = 0.01) -> None:
    """`total` messages in batches of 16, `pause` seconds apart (0.01: 1,600 messages/s, which grows a queue)."""
    from mnsd.model.inputs import MessageInput

    for start in range(0, total, BATCH):
        count = min(BATCH, total - start)
        group = f"g{start // BATCH % 100}" if fifo else ""
        queues.send(account, name, [MessageInput(BODY, None, 8, message_group_id=group)] * count)
        queues.clock.t += pause


ACCOUNT = "1000000000000001"


def empty(queues: Any) -> int:
    for i in range(1000):
        queues.create_queue(ACCOUNT, f"idle-{i:04}")
    return 1000


def small(queues: Any) -> int:
    for i in range(1000):
        queues.create_queue(ACCOUNT, f"small-{i:04}")
        send(queues, ACCOUNT, f"small-{i:04}", 10)
        queues.receive(ACCOUNT, f"small-{i:04}", 2, 0)
    return 1000


def deep(total: int, pause: float = 0.01) -> Any:
    def make(queues: Any) -> int:
        queues.create_queue(ACCOUNT, "deep")
        send(queues, ACCOUNT, "deep", total, pause=pause)  # fast enough, the queue grows stripes as it would
        return 1

    return make


def fifo_queue(queues: Any) -> int:
    from mnsd.model.queues import QueueAttributeChanges

    queues.create_queue(ACCOUNT, "ordered", QueueAttributeChanges(queue_type="fifo"))
    send(queues, ACCOUNT, "ordered", 1000, fifo=True)
    queues.receive(ACCOUNT, "ordered", 16, 0)
    queues.receive(ACCOUNT, "ordered", 4, 0)
    return 1


def fanned(queues: Any) -> int:
    from mnsd.queues.receivers import ReceiverInput

    queues.create_queue(ACCOUNT, "fanned")
    for name in ("audit", "billing"):
        queues.receivers.create(ACCOUNT, "fanned", name, ReceiverInput())
    send(queues, ACCOUNT, "fanned", 10)
    return 3


SHAPES = {
    "1,000 empty queues": empty,
    "1,000 queues of 10 messages, 2 in flight": small,
    "a quiet queue of 1,000 messages (sent at 16/s)": deep(1000, pause=1.0),
    "a busy queue of 1,000 messages (sent at 1,600/s)": deep(1000),
    "a busy queue of 100,000 messages": deep(100_000),
    "a FIFO queue of 1,000 messages in 100 groups, 20 in flight": fifo_queue,
    "a queue with 2 receivers, 10 messages (3 addresses)": fanned,
}


def units() -> list[list[object]]:
    """Each shape in a store of its own: the account map read by the listing holds only its queues."""
    from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits

    rows: list[list[object]] = []
    for label, make in SHAPES.items():
        clock = SimulatedClock()
        client = SimulatedDynamoDB(now=clock.now, record_calls=True)
        services = make_services(client, clock)
        count = make(QueuesByName(services))
        clock.t += 120  # a later minute: the records cached by the last calls have expired
        client.usage.reset()
        every = list(services.queues.every_queue())
        run = BacklogSampler(services.queues, NullSink(), clock, SamplerLimits(workers=1)).run(every)
        assert run.sampled == count, (label, run)
        by_table: dict[str, float] = {"meta": 0.0, "messages": 0.0}
        requests: Counter[str] = Counter()
        for call in client.usage.calls or []:
            table = "meta" if "meta" in call.table else "messages"
            by_table[table] += call.rcu
            requests[table] += 1
        total = sum(by_table.values())
        placer = services.storage.messages.placer
        stripes = max(1 if kind_of(q).fifo else placer.of(q.queue_id).stripes for q in every)
        rows.append(
            [
                label + (f" ({stripes} stripes)" if stripes > 1 else ""),
                count,
                f"{requests['meta'] / count:.2f} / {requests['messages'] / count:.2f}",
                f"{by_table['meta'] / count:.2f} / {by_table['messages'] / count:.2f}",
                f"**{total / count:.2f}**",
                f"${total / count * RUNS_PER_MONTH * READ_PER_MILLION / 1e6:.4f}",
            ]
        )
    return rows


class NullSink(NoMetrics):
    """Monitors every queue (the sampler reads them all) and counts nothing."""

    def monitors(self, chosen: bool | None) -> bool:
        return True


MOTO_SERVER = """
import sys
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[1]), verbose=False)
server.start()
print("ready", flush=True)
sys.stdin.read()
"""


def cpu(queues_count: int) -> tuple[float, float, int]:
    """(CPU ms per queue of a run, wall s of the run, queues) with boto3 against moto's server."""
    import boto3

    from local_runtime.tables import create_tables
    from mnsd.entry.monitoring import NoKeys
    from mnsd.ground.clock import SystemClock
    from mnsd.ground.settings import Settings
    from mnsd.model.inputs import MessageInput
    from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits
    from mnsd.services import build_services, client_config

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", MOTO_SERVER, str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        while "ready" not in server.stdout.readline():
            pass
        limits = SamplerLimits()
        config = client_config(max_pool_connections=limits.workers)
        dynamodb = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}", config=config)
        settings = Settings(credentials="1000000000000001:K:S", max_queues=queues_count, meta_cache_seconds=5)
        create_tables(dynamodb, settings)
        clock = SystemClock()
        services = build_services(settings, dynamodb=dynamodb, clock=clock, keys=NoKeys())
        account = "1000000000000001"
        for i in range(queues_count):
            services.queues.create_queue(account, f"q-{i:05}")
            if i % 2:
                services.messages.send(
                    services.addresses.resolve(account, f"q-{i:05}"), [MessageInput(BODY, None, 8)] * 5
                )
        sampler = BacklogSampler(services.queues, NullSink(), clock, limits)
        sampler.run(list(services.queues.every_queue()))  # connections made, code warm
        time.sleep(6)  # the queue records cached by that run expire, as they have a minute later
        started, wall = time.process_time(), time.perf_counter()
        every = list(services.queues.every_queue())
        run = sampler.run(every)
        used, wall = time.process_time() - started, time.perf_counter() - wall
        assert run.sampled == queues_count, run
        return used / queues_count * 1000, wall, queues_count
    finally:
        server.kill()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=500, help="queues of the CPU run")
    args = parser.parse_args()
    use_local_aws_defaults()
    rows = units()
    table = md_table(
        [
            "monitored queues",
            "queues",
            "requests per queue (meta / messages)",
            "read units per queue (meta / messages)",
            "read units per queue per run",
            "per queue per month (a run a minute)",
        ],
        rows,
    )
    print(table)
    cpu_ms, wall, n = cpu(args.queues)
    print(f"CPU {cpu_ms:.2f} ms per queue, run of {n} queues {wall:.2f} s")
    body = (
        "## DynamoDB read units per monitored queue per run (the in-memory double, DynamoDB's billing rules)\n\n"
        "Each shape in an account of its own, sampled in a run a minute after the last (the records' cache expired);"
        " the listing of the account's queue records and of the account map is counted in.\n\n"
        + table
        + f"\n\nPer month: {RUNS_PER_MONTH:,} runs at ${READ_PER_MILLION} per million read request units "
        "(DynamoDB on demand, us-east-1).\n\n"
        "## The sampler's CPU per queue (boto3 against moto's server in another process)\n\n"
        f"{n} queues in one account, every other one holding 5 messages, 16 reading threads: "
        f"**{cpu_ms:.2f} ms of CPU per queue** (`time.process_time` of this process over one run, listing included), "
        f"the run took {wall:.2f} s of wall time here (moto's server, on the same 2 cores, answering).\n"
    )
    write_result("sampler", "The metrics sampler: read units and CPU per monitored queue", body)


if __name__ == "__main__":
    main()
