"""Receive latency by queue depth (100 / 1,000 / 10,000): ours (MNS SDK -> LocalServer) vs moto SQS,
plus DynamoDB items evaluated per receive in our storage (in-process, recording client)."""

from __future__ import annotations

import base64
import os
import time

from bench._common import md_table, pct, use_local_aws_defaults, write_result
from bench._servers import start_ours, start_sqs

DEPTHS = (100, 1000, 10000)
# moto's SQS did not finish 30 receives at 10,000 deep within 3 minutes on this machine: bounded to 1,000.
SQS_DEPTHS = (100, 1000)
PAIRS = 30
BODY = base64.b64encode(os.urandom(192)).decode()  # 256-char body keeps fills quick


def ours() -> dict[int, list[float]]:
    from mns.queue import Message, QueueMeta

    server, account = start_ours()
    out = {}
    for depth in DEPTHS:
        queue = account.get_queue(f"depth{depth}")
        queue.create(QueueMeta())
        queue.set_encoding(False)
        for start in range(0, depth, 16):
            queue.batch_send_message([Message(BODY) for _ in range(min(16, depth - start))])
        lat = []
        for _ in range(PAIRS):
            t = time.perf_counter()
            msg = queue.receive_message(0)
            lat.append((time.perf_counter() - t) * 1000)
            queue.delete_message(msg.receipt_handle)
        out[depth] = lat
        print(f"ours depth {depth}: p50 {pct(lat, 50):.1f} ms p99 {pct(lat, 99):.1f} ms", flush=True)
        queue.delete()
    server.stop()
    return out


def sqs() -> dict[int, list[float]]:
    server, client = start_sqs()
    out = {}
    for depth in SQS_DEPTHS:
        url = client.create_queue(QueueName=f"depth{depth}")["QueueUrl"]
        for start in range(0, depth, 10):
            entries = [{"Id": str(i), "MessageBody": BODY} for i in range(min(10, depth - start))]
            client.send_message_batch(QueueUrl=url, Entries=entries)
        lat = []
        for _ in range(PAIRS):
            t = time.perf_counter()
            msg = client.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"][0]
            lat.append((time.perf_counter() - t) * 1000)
            client.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
        out[depth] = lat
        print(f"sqs depth {depth}: p50 {pct(lat, 50):.1f} ms p99 {pct(lat, 99):.1f} ms", flush=True)
        client.delete_queue(QueueUrl=url)
    server.stop()
    return out


def evaluated_per_receive() -> dict[int, tuple[float, float, float]]:
    """(items evaluated by the Query, message-table RCU, requests) per receive, in-process."""
    from bench.queue_lifecycle import setup
    from mnsd.access.keys import StaticKeyStore
    from mnsd.model.inputs import MessageInput

    mock, services, recorder = setup()
    account = StaticKeyStore(services.settings.credentials).default.account_id
    out = {}
    for depth in DEPTHS:
        name = f"eval{depth}"
        services.queues.create_queue(account, name, None)
        raw = services.storage.messages.client._raw
        services.storage.messages.client = raw  # fill unrecorded (fast)
        for start in range(0, depth, 16):
            services.messages.send(
                services.addresses.resolve(account, name), [MessageInput(BODY, None, 8)] * min(16, depth - start)
            )
        services.storage.messages.client = services.catalog.table.client
        recorder.reset()
        for _ in range(10):
            got = services.messages.receive(services.addresses.resolve(account, name), 1, 0)
            services.messages.delete(services.addresses.resolve(account, name), got[0].receipt_handle)
        q = [c for c in recorder.calls if c.op == "Query"]
        rcu = sum(c.rcu for c in recorder.calls if c.table != "mns-meta" and c.op == "Query")
        out[depth] = (sum(c.items_read for c in q) / 10, rcu / 10, len(q) / 10)
    mock.stop()
    return out


def main() -> None:
    use_local_aws_defaults()
    started = time.perf_counter()
    a, b = ours(), sqs()
    evaluated = evaluated_per_receive()

    def sqs_cell(depth: int, q: int) -> str:
        return f"{pct(b[depth], q):.1f}" if depth in b else "not measured (over the time bound)"

    rows = [
        [f"{d:,}", f"{pct(a[d], 50):.1f}", f"{pct(a[d], 99):.1f}", sqs_cell(d, 50), sqs_cell(d, 99)] for d in DEPTHS
    ]
    rows.append(
        [
            "growth 10k/100, 1k/100 (p50)",
            f"{pct(a[10000], 50) / pct(a[100], 50):.1f}x, {pct(a[1000], 50) / pct(a[100], 50):.1f}x",
            "",
            f"-, {pct(b[1000], 50) / pct(b[100], 50):.1f}x",
            "",
        ]
    )
    table = md_table(["depth", "ours p50 ms", "ours p99 ms", "SQS p50 ms", "SQS p99 ms"], rows)
    ev_rows = [[f"{d:,}", f"{v[0]:.0f}", f"{v[1]:.2f}", f"{v[2]:.1f}"] for d, v in evaluated.items()]
    ev_table = md_table(
        ["depth", "items evaluated per receive (Query)", "Query RCU per receive", "Queries per receive"], ev_rows
    )
    print(table)
    print(ev_table)
    body = f"""
{PAIRS} receive+delete pairs per depth (receive timed), one sequential client, 256-char body.
Ours: MNS SDK against `LocalServer` (filled with BatchSend of 16). SQS: moto's `ThreadedMotoServer`
with boto3 (filled with `send_message_batch` of 10). Both in this process, one after the other.

{table}

**Caveat:** moto's DynamoDB `Query` walks the whole partition in Python, so our local receive latency
growth with depth reflects moto, not DynamoDB (where a Query reads only the page it returns).

## DynamoDB work per receive (in-process, recording client)

{ev_table}

The receive Query starts with `Limit = 4 x wanted` (4 for a single-message receive; pages double, up to
1,000, only while it skips leases that are not receivable), so the items evaluated per receive do not
depend on the depth of an Active backlog. Here bodies are 256 chars.

Elapsed: {time.perf_counter() - started:.0f} s.
"""
    write_result("receive_depth", "Receive latency by queue depth: ours vs moto SQS", body)


if __name__ == "__main__":
    main()
