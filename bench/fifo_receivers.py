"""FIFO queues and multiple receivers on the local runtime (embedded engine), side by side with moto's SQS.

- FIFO: the lifecycle (send, receive, delete) of messages over 100 groups, on a FIFO queue of ours and on an SQS
  FIFO queue of moto's server, beside a standard queue of ours in the same run; each consumer checks that every
  group reaches it in send order while it holds the group (order breaks are counted, and must be 0).
- Receivers: one send reaching three consumers: a queue of ours with two receivers (each consumed on its own)
  against three SQS queues each sent the same batch (what a topic fanning out to queues does).

    .venv/bin/python -m bench.fifo_receivers [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from bench._common import md_table, use_local_aws_defaults, write_result
from bench.local_engine import (
    BODY,
    CONSUMERS,
    KEY_ID,
    KEY_SECRET,
    PRODUCERS,
    MotoSqs,
    Ours,
    Rate,
    batch_taker,
    lifecycle,
    sqs_batch_taker,
)
from mnsclient.resources import ResourceClient
from mnsclient.signing import Key
from mnsd.wire import codec

GROUPS = 100


class OrderCheck:
    """Per group, the highest sequence number seen: a message below it (delivered after a later one of its group,
    which FIFO forbids once the later one was deleted) is a break."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last: dict[str, int] = {}
        self.breaks = 0

    def saw(self, group: str, number: int) -> None:
        with self.lock:
            if number < self.last.get(group, -1):
                self.breaks += 1
            self.last[group] = max(number, self.last.get(group, -1))


def _sequenced(worker: int, batch: int, n: int) -> tuple[str, str]:
    """The group and body of a producer's n-th message of a batch: `{group}:{number}`, numbered per group in the
    order the producer sends them (each producer owns its groups, so its sends are the group's order)."""
    number = batch * 16 + n
    group = f"g{(number % (GROUPS // PRODUCERS)) * PRODUCERS + worker}"
    return group, f"{number:08d}:{BODY[:1000]}"


def ours_lifecycle(server: Ours, name: str, total: int, fifo: bool, check: OrderCheck) -> Rate:
    from mns.queue import Message

    queue_type = "fifo" if fifo else "normal"
    ResourceClient(server.endpoint, Key(KEY_ID, KEY_SECRET)).call(
        "PUT", f"/queues/{name}", codec.Node("Queue", [("QueueType", queue_type)])
    )

    def send_batch(worker: int) -> Callable[[int], None]:
        queue = server.account().get_queue(name)
        queue.set_encoding(False)
        batches = iter(range(10**9))

        def send(n: int) -> None:
            batch = next(batches)
            sequenced = [_sequenced(worker, batch, i) for i in range(n)]
            queue.batch_send_message(
                [Message(body, message_group_id=group if fifo else "") for group, body in sequenced]
            )

        return send

    def consume(worker: int) -> Callable[[], int]:
        def seen(got: list[Any]) -> None:
            for message in got:
                check.saw(message.message_group_id, int(message.message_body.split(":", 1)[0]))

        return batch_taker(server.account().get_queue(name), seen if fifo else None)

    return lifecycle(total, send_batch, consume)


def sqs_fifo_lifecycle(sqs: MotoSqs, name: str, total: int, check: OrderCheck) -> Rate:
    attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    url = sqs.client().create_queue(QueueName=f"{name}.fifo", Attributes=attributes)["QueueUrl"]

    def send_batch(worker: int) -> Callable[[int], None]:
        client = sqs.client()
        batches = iter(range(10**9))

        def send(n: int) -> None:
            batch = next(batches)
            sequenced = [_sequenced(worker, batch, i) for i in range(n)]
            for start in range(0, n, 10):  # SQS batches hold 10 at most
                entries = [
                    {"Id": str(i), "MessageBody": body, "MessageGroupId": group}
                    for i, (group, body) in enumerate(sequenced[start : start + 10], start)
                ]
                client.send_message_batch(QueueUrl=url, Entries=entries)

        return send

    def consume(worker: int) -> Callable[[], int]:
        def seen(got: list[dict[str, Any]]) -> None:
            for message in got:
                check.saw(message["Attributes"]["MessageGroupId"], int(message["Body"].split(":", 1)[0]))

        return sqs_batch_taker(sqs.client(), url, seen, ["MessageGroupId"])

    return lifecycle(total, send_batch, consume)


def ours_receivers(server: Ours, name: str, total: int, receivers: int) -> Rate:
    """A queue and its receivers each consume every message: lifecycles = messages x consumers."""
    from mns.queue import Message, QueueMeta

    server.account().get_queue(name).create(QueueMeta())
    client = ResourceClient(server.endpoint, Key(KEY_ID, KEY_SECRET))
    addresses = [name]
    for n in range(receivers):
        client.call("PUT", f"/queues/{name}/receivers/r{n}", codec.Node("Receiver", []))
        addresses.append(f"{name}.r{n}")

    def send_batch(worker: int) -> Callable[[int], None]:
        queue = server.account().get_queue(name)
        queue.set_encoding(False)
        return lambda n: queue.batch_send_message([Message(BODY) for _ in range(n)])

    def consume(worker: int) -> Callable[[], int]:
        return batch_taker(server.account().get_queue(addresses[worker % len(addresses)]))

    return lifecycle(total * len(addresses), send_batch, consume, consumers=CONSUMERS * len(addresses) // 2)


def sqs_fanned(sqs: MotoSqs, name: str, total: int, copies: int) -> Rate:
    """Each batch sent to `copies` SQS queues (a topic's fan-out to queues), each queue consumed on its own."""
    urls = [sqs.client().create_queue(QueueName=f"{name}-{n}")["QueueUrl"] for n in range(copies)]

    def send_batch(worker: int) -> Callable[[int], None]:
        client = sqs.client()

        def send(n: int) -> None:
            for url in urls:
                for start in range(0, n, 10):
                    entries = [{"Id": str(i), "MessageBody": BODY} for i in range(start, min(n, start + 10))]
                    client.send_message_batch(QueueUrl=url, Entries=entries)

        return send

    def consume(worker: int) -> Callable[[], int]:
        return sqs_batch_taker(sqs.client(), urls[worker % len(urls)])

    return lifecycle(total * copies, send_batch, consume, consumers=CONSUMERS * copies // 2)


def main(argv: list[str] | None = None) -> None:
    use_local_aws_defaults()
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args(argv)
    total = 800 if args.quick else 8000  # a multiple of 16 x producers
    fifo_rows: list[list[object]] = []
    receiver_rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as data_dir:
        server = Ours(data_dir)
        sqs = MotoSqs()
        try:
            ours_check, sqs_check = OrderCheck(), OrderCheck()
            standard = ours_lifecycle(server, "standard", total, False, OrderCheck())
            fifo = ours_lifecycle(server, "ordered", total, True, ours_check)
            theirs = sqs_fifo_lifecycle(sqs, "ordered", total, sqs_check)
            fifo_rows = [
                ["ours, standard queue", str(standard), "-"],
                [f"ours, FIFO queue ({GROUPS} groups)", str(fifo), ours_check.breaks],
                [f"moto SQS, FIFO queue ({GROUPS} groups)", str(theirs), sqs_check.breaks],
            ]
            print(fifo_rows, flush=True)
            mine = ours_receivers(server, "fanned", total, 2)
            fanned = sqs_fanned(sqs, "fanned", total, 3)
            receiver_rows = [
                ["ours: a queue + 2 receivers", str(mine)],
                ["moto SQS: 3 queues, each sent every batch", str(fanned)],
            ]
            print(receiver_rows, flush=True)
        finally:
            sqs.stop()
            server.stop()
    ratio = fifo.per_second / theirs.per_second
    body = f"""
Command: `.venv/bin/python -m bench.fifo_receivers`. Ours: `python -m local_runtime` (SQLite engine) driven by
the official SDK; moto: `ThreadedMotoServer` driven by boto3; both in their own processes, clients as threads.

## FIFO: {total:,} messages over {GROUPS} groups, {PRODUCERS} producers, {CONSUMERS} consumers
Each producer owns a quarter of the groups and numbers each group's messages in the order it sends them;
consumers batch-receive (16 ours, 10 SQS, 1 s long polls) and batch-delete at once. "Order breaks": a message
received after a later one of its group (must be 0). messages/s = messages deleted / time until all were.

{md_table(["queue", "messages/s", "order breaks"], fifo_rows)}

Ours FIFO / moto SQS FIFO: {ratio:.1f}x.

## Multiple receivers: {total:,} messages sent once, consumed by each of 3 consumers
Lifecycles/s = (messages x 3) deleted / time until all were. Ours: the queue and its two receivers, each
consumed by its own threads; SQS: three queues, every batch sent to each (a topic fanning out to queues).

{md_table(["setup", "lifecycles/s"], receiver_rows)}
"""
    print(body)
    if not args.quick:
        write_result("fifo_receivers", "FIFO queues and multiple receivers, locally", body)


if __name__ == "__main__":
    main()
