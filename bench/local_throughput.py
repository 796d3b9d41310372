"""Local throughput and latency of send -> receive -> delete: ours (official MNS SDK against
LocalServer) side by side with moto's SQS server (boto3), one sequential client, same process."""

from __future__ import annotations

import base64
import os
import time

from bench._common import md_table, pct, use_local_aws_defaults, write_result
from bench._servers import start_ours, start_sqs

N = 300
BODY = base64.b64encode(os.urandom(768)).decode()  # 1 KB SDK-like body


def timed(fn, *args):
    t = time.perf_counter()
    result = fn(*args)
    return result, (time.perf_counter() - t) * 1000


def run(send, receive, delete, n: int) -> dict[str, list[float]]:
    lat: dict[str, list[float]] = {"send": [], "receive": [], "delete": []}
    started = time.perf_counter()
    for _ in range(n):
        _, ms = timed(send)
        lat["send"].append(ms)
        handle, ms = timed(receive)
        lat["receive"].append(ms)
        _, ms = timed(delete, handle)
        lat["delete"].append(ms)
    lat["_wall"] = [time.perf_counter() - started]
    return lat


def ours(n: int):
    from mns.queue import Message, QueueMeta

    server, account = start_ours()
    queue = account.get_queue("bench-throughput")
    queue.create(QueueMeta())
    queue.set_encoding(False)
    lat = run(
        lambda: queue.send_message(Message(BODY)),
        lambda: queue.receive_message(0).receipt_handle,
        lambda h: queue.delete_message(h),
        10,
    )  # warm-up
    lat = run(
        lambda: queue.send_message(Message(BODY)),
        lambda: queue.receive_message(0).receipt_handle,
        lambda h: queue.delete_message(h),
        n,
    )
    server.stop()
    return lat


def sqs(n: int):
    server, client = start_sqs()
    url = client.create_queue(QueueName="bench-throughput")["QueueUrl"]

    def receive():
        return client.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"][0]["ReceiptHandle"]

    def send():
        client.send_message(QueueUrl=url, MessageBody=BODY)

    def delete(h):
        client.delete_message(QueueUrl=url, ReceiptHandle=h)

    run(send, receive, delete, 10)
    lat = run(send, receive, delete, n)
    server.stop()
    return lat


def main() -> None:
    use_local_aws_defaults()
    results = {"ours (MNS SDK -> LocalServer)": ours(N), "moto SQS server (boto3)": sqs(N)}
    (our_name, a), (sqs_name, b) = results.items()
    rows = []
    for op in ("send", "receive", "delete"):
        rows.append(
            [
                op,
                f"{pct(a[op], 50):.2f}",
                f"{pct(a[op], 99):.2f}",
                f"{pct(b[op], 50):.2f}",
                f"{pct(b[op], 99):.2f}",
                f"{pct(a[op], 50) / pct(b[op], 50):.2f}x",
            ]
        )
    ops_a, ops_b = 3 * N / a["_wall"][0], 3 * N / b["_wall"][0]
    rows.append(
        [
            "lifecycle ops/s (3 ops per message)",
            f"{ops_a:.0f}",
            "",
            f"{ops_b:.0f}",
            "",
            f"{ops_a / ops_b:.2f}x (throughput)",
        ]
    )
    rows.append(["messages/s (full lifecycle)", f"{N / a['_wall'][0]:.0f}", "", f"{N / b['_wall'][0]:.0f}", "", ""])
    headers = ["operation", "ours p50 ms", "ours p99 ms", "SQS p50 ms", "SQS p99 ms", "ours/SQS (p50 latency)"]
    table = md_table(headers, rows)
    print(table)
    body = f"""
{N} messages, each sent, received and deleted in turn by one sequential client (10 warm-up lifecycles
first), 1 KB base64 body. Ours: official `aliyun-mns-sdk` (`mns`, encoding off) against
`LocalServer(port=0, quiet=True)` (HTTP -> API Gateway event -> Lambda handler -> moto DynamoDB).
SQS: moto's `ThreadedMotoServer` driven by boto3 (`send_message`, `receive_message`, `delete_message`).
Both servers run in the benchmark process (same GIL as the client), one after the other.

{table}

Ratios above 1 mean ours is slower (latency) or faster (throughput row). Local numbers measure the
Python stacks (moto's DynamoDB emulation, the SDK's XML, signing), not AWS.
"""
    write_result("local_throughput", "Local throughput: ours vs moto SQS", body)


if __name__ == "__main__":
    main()
