"""DynamoDB requests and capacity units per message lifecycle (send -> receive -> delete).

In-process: moto (`mock_aws`) and the queue services (`mnsd.queues`) directly (no HTTP), real clock. The DynamoDB client
given to `build_services` is a recording proxy (tests/support/recording.py) that logs every storage call
and bills it by DynamoDB's size rules (`mnsd.storage.capacity`).
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import time
from collections import Counter

from bench._common import md_table, use_local_aws_defaults, write_result
from tests.support.by_name import QueuesByName
from tests.support.recording import recorded_moto_services

MESSAGES = 32  # per row: 32 single lifecycles, or 2 batches of 16


def b64_body(length: int) -> str:
    """SDK-like body: base64 of random bytes, exactly `length` characters."""
    raw = base64.b64encode(os.urandom(length * 3 // 4 + 3)).decode("ascii")
    return raw[:length]


def json_body(length: int) -> str:
    """A compressible JSON-like body of exactly `length` characters."""
    rng = random.Random(7)
    records, text = [], ""
    while len(text) < length:
        records.append(
            {
                "orderId": rng.randrange(10**9),
                "status": rng.choice(["NEW", "PAID", "SHIPPED"]),
                "sku": f"SKU-{rng.randrange(10**5):05d}",
                "qty": rng.randrange(1, 9),
                "price": round(rng.uniform(1, 500), 2),
                "region": "cn-hangzhou",
            }
        )
        text = json.dumps({"events": records})
    return text[:length]


def edge_body(services) -> str:
    """A base64 body whose inline lease item is as large as the store allows inline (976-992 B at send)."""
    from mnsd.model.messages import Message
    from mnsd.storage.capacity import item_size

    rng = random.Random(3)
    for _ in range(5000):
        n = rng.randrange(990, 1090)
        body = base64.b64encode(rng.randbytes(n)).decode()[:n]
        probe = Message(
            "x" * 16,
            "0123456789ABCDEF-1-19AA0000000-000000000",
            8,
            1763800000000,
            1763800000000,
            0,
            0,
            1763800000000,
            1763800000000,
            1764059200,
            "0" * 32,
            body,
        )
        items = services.storage.messages._items_for(probe)
        if len(items) == 1 and 976 <= item_size(items[0]) <= 992:
            return body
    raise RuntimeError("no edge body found")


def setup():
    from mnsd.ground.clock import SystemClock
    from mnsd.queues.notifier import LocalNotifier

    return recorded_moto_services(SystemClock(), LocalNotifier())


def run_row(services, recorder, account, body: str, batch: int, send_batch: int, messages: int):
    from mnsd.model.inputs import MessageInput

    queues = QueuesByName(services)
    qname = f"q{random.randrange(10**9)}"
    queues.create_queue(account, qname, None)
    recorder.reset()
    done = 0
    while done < messages:
        n = min(batch, messages - done)
        inputs = [MessageInput(body=body, delay_seconds=None, priority=8) for _ in range(n)]
        if batch == 1:
            queues.send(account, qname, inputs)
            got = queues.receive(account, qname, 1, 0)
            assert len(got) == 1
            queues.delete(account, qname, got[0].receipt_handle)
        else:
            for s in range(0, n, send_batch):
                queues.send(account, qname, inputs[s : s + send_batch])
            got = []
            while len(got) < n:
                got += queues.receive(account, qname, min(16, n - len(got)), 0)
            failures = queues.batch_delete(account, qname, [g.receipt_handle for g in got])
            assert not failures, failures
        done += n
    calls = list(recorder.calls)
    return calls


def summarize(label: str, body: str, calls, messages: int):
    per = messages
    ops = Counter(c.op + ("(meta)" if c.table == "mns-meta" else "") for c in calls)
    wcu = sum(c.wcu for c in calls) / per
    rcu = sum(c.rcu for c in calls) / per
    data_rcu = sum(c.rcu for c in calls if c.table != "mns-meta") / per
    target = math.ceil(len(body.encode()) / 1024) + 2
    failed = sum(c.failed_condition for c in calls)
    ops_text = ", ".join(f"{k} {v / per:.3g}" for k, v in sorted(ops.items()))
    return [
        label,
        len(body),
        f"{len(calls) / per:.3g}",
        ops_text,
        f"{wcu:.3g}",
        f"{rcu:.3g} ({data_rcu:.3g} msg table)",
        target,
        "yes" if wcu <= target else "**no**",
        failed,
    ]


def lifecycle_trace(services, recorder, account, body: str) -> list[str]:
    calls = run_row(services, recorder, account, body, 1, 1, 1)
    return [
        f"{i + 1}. {c.op} on {c.table} ({c.detail}; {c.wcu:g} WCU, {c.rcu:g} RCU)"
        f"{' CONDITION FAILED' if c.failed_condition else ''}"
        for i, c in enumerate(calls)
    ]


def main() -> None:
    use_local_aws_defaults()
    started = time.perf_counter()
    mock, services, recorder = setup()
    from mnsd.access.keys import StaticKeyStore

    account = StaticKeyStore(services.settings.credentials).default.account_id
    kb1, kb64 = b64_body(1024), b64_body(65536)
    rows_spec = [
        ("single, 1 KB base64", kb1, 1, 1),
        ("single, 64 KB base64", kb64, 1, 1),
        ("single, 1 KB JSON", json_body(1024), 1, 1),
        ("single, edge: inline item just under 1 KB at send", edge_body(services), 1, 1),
        ("single, 64 KB JSON", json_body(65536), 1, 1),
        ("batch 16, 1 KB base64", kb1, 16, 16),
        ("batch 16, 4 KB base64", b64_body(4096), 16, 16),
        ("batch 16, 64 KB base64 (send 1/batch: 64 KB batch cap)", kb64, 16, 1),
        ("batch 16, 1 KB JSON", json_body(1024), 16, 16),
    ]
    rows = []
    for label, body, batch, send_batch in rows_spec:
        calls = run_row(services, recorder, account, body, batch, send_batch, MESSAGES)
        rows.append(summarize(label, body, calls, MESSAGES))
        print(" | ".join(str(c) for c in rows[-1]), flush=True)

    traces = {
        label: lifecycle_trace(services, recorder, account, body)
        for label, body in (("1 KB base64", kb1), ("64 KB base64", kb64), ("edge", edge_body(services)))
    }
    # No per-message counters and no read-before-write on the message table.
    for label, trace in traces.items():
        print(f"\none lifecycle, {label}:")
        print("\n".join(trace))
    trace_calls = run_row(services, recorder, account, kb1, 1, 1, 1)
    msg_ops = [c.op for c in trace_calls if c.table != "mns-meta"]
    meta_writes = [c for c in trace_calls if c.table == "mns-meta" and c.wcu]
    reads_before_write = [i for i, op in enumerate(msg_ops) if op == "GetItem"]
    checks = [
        f"- Message-table operations in order (1 KB): {' -> '.join(msg_ops)}",
        f"- Meta-table writes per lifecycle (per-message counters): {len(meta_writes)}",
        f"- GetItem reads of a message item before a conditional write: {len(reads_before_write)} "
        "(the Query of a receive is the scan that finds candidates, not a read-before-write)",
    ]
    assert not meta_writes, "per-message counter writes found"
    print("\n".join(checks))
    mock.stop()

    headers = [
        "row",
        "body chars",
        "requests/msg",
        "requests by op per msg",
        "WCU/msg",
        "RCU/msg",
        "target WCU (ceil(body/1KB)+2)",
        "target met",
        "failed cond. writes",
    ]
    table = md_table(headers, rows)
    body = f"""
Per message, averaged over {MESSAGES} messages per row. In-process moto (`mock_aws`) + the queue services (`mnsd.queues`)
(no HTTP), real clock. Requests recorded by a proxy around the boto3 client passed to `build_services`
(`tests/support/recording.py`); capacity by DynamoDB's size rules (`mnsd.storage.capacity`): PutItem /
BatchWriteItem by item size, UpdateItem by max(before, after), DeleteItem by the deleted item, failed
conditional writes still billed; Query by total size of items evaluated (eventually consistent = half),
GetItem on the meta table ConsistentRead (full unit). Single rows run send -> receive -> delete one message
at a time on an otherwise empty queue (the floor: the receive Query evaluates ~1 item).
Batched rows: BatchSend 16 (BatchWriteItem, 25 items per call), BatchReceive 16, BatchDelete 16.
The 64 KB batched row sends one message per BatchSend because the API caps a batch at 64 KB total.
Base64 bodies are base64 of random bytes (zlib gets them to ~75%); JSON bodies compress much further.

{table}

"target met" compares write units only (the DESIGN floor counts writes). Read units come from the meta
`GetItem` (ConsistentRead, 1 RCU) that every request makes to resolve the queue, plus the receive Query
and, for out-of-line bodies, BatchGetItem.

## One lifecycle, call by call

1 KB base64:
{chr(10).join(traces["1 KB base64"])}

64 KB base64:
{chr(10).join(traces["64 KB base64"])}

Edge (inline item just under 1 KB at send; the claim adds `f` and grows `r`/`d`, so the item crosses
1 KB and the UpdateItem and DeleteItem each cost 2 WCU):
{chr(10).join(traces["edge"])}

## Checks
{chr(10).join(checks)}

Elapsed: {time.perf_counter() - started:.1f} s.
"""
    print(f"\nelapsed {time.perf_counter() - started:.1f}s")
    write_result("queue_lifecycle", "Queue lifecycle: DynamoDB requests and capacity per message", body)


if __name__ == "__main__":
    main()
