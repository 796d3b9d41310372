"""DynamoDB work per receive with messages in flight ahead, and per message lifecycle (single, batched by 16).

In-process moto (`mock_aws`) + the queue services (`mnsd.queues`) (no HTTP), real clock, the recording client of
`tests/support/recording.py` (units by DynamoDB's size rules, index writes included where the table has an index).
Bounded: at most `IN_FLIGHT` messages put in flight, 32 lifecycles per row.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from collections import Counter
from typing import Any

from bench._common import md_table, use_local_aws_defaults, write_result
from bench.queue_lifecycle import setup
from tests.support.by_name import QueuesByName

IN_FLIGHT = (0, 1000)
RECEIVES = 10
MESSAGES = 32
BODY = base64.b64encode(os.urandom(768)).decode()  # 1 KB base64 body


def receive_units(services, recorder, account: str, in_flight: int) -> tuple[float, float, float]:
    """(message-table read units, items read, requests) per single receive with `in_flight` received ahead."""
    from mnsd.model.inputs import MessageInput
    from mnsd.model.queues import QueueAttributeChanges

    queues = QueuesByName(services)
    name = f"inflight{in_flight}"
    queues.create_queue(account, name, QueueAttributeChanges(visibility_timeout="3600"))
    for start in range(0, in_flight, 16):
        queues.send(account, name, [MessageInput(BODY, None, 8)] * min(16, in_flight - start))
    held = 0
    while held < in_flight:
        held += len(queues.receive(account, name, 16, 0))
    for _ in range(RECEIVES):
        queues.send(account, name, [MessageInput(BODY, None, 8)])
    rcu = items = requests = 0.0
    for _ in range(RECEIVES):
        recorder.reset()
        (got,) = queues.receive(account, name, 1, 0)
        calls = [c for c in recorder.calls if c.table != services.settings.meta_table]
        rcu += sum(c.rcu for c in calls)
        items += sum(c.items_read for c in calls)
        requests += len(recorder.calls)
        queues.delete(account, name, got.receipt_handle)
    return rcu / RECEIVES, items / RECEIVES, requests / RECEIVES


def lifecycle(services, recorder, account: str, batch: int) -> dict[str, object]:
    """Requests and units per message over `MESSAGES` lifecycles, single or batched."""
    from mnsd.model.inputs import MessageInput

    queues = QueuesByName(services)
    name = f"life{batch}"
    queues.create_queue(account, name, None)
    recorder.reset()
    for _ in range(MESSAGES // batch):
        queues.send(account, name, [MessageInput(BODY, None, 8)] * batch)
        got: list[Any] = []
        while len(got) < batch:
            got += queues.receive(account, name, batch - len(got), 0)
        if batch == 1:
            queues.delete(account, name, got[0].receipt_handle)
        else:
            assert not queues.batch_delete(account, name, [g.receipt_handle for g in got])
    calls = list(recorder.calls)
    meta = services.settings.meta_table
    ops = Counter(c.op + ("(meta)" if c.table == meta else "") for c in calls)
    return {
        "requests": len(calls) / MESSAGES,
        "by op": ", ".join(f"{op} {n / MESSAGES:.3g}" for op, n in sorted(ops.items())),
        "wcu": sum(c.wcu for c in calls) / MESSAGES,
        "index wcu": sum(getattr(c, "index_wcu", 0.0) for c in calls) / MESSAGES,
        "rcu": sum(c.rcu for c in calls) / MESSAGES,
        "meta rcu": sum(c.rcu for c in calls if c.table == meta) / MESSAGES,
    }


def main() -> None:
    use_local_aws_defaults()
    started = time.perf_counter()
    label = sys.argv[1] if len(sys.argv) > 1 else "after"
    mock, services, recorder = setup()
    from mnsd.access.keys import StaticKeyStore

    account = StaticKeyStore(services.settings.credentials).default.account_id
    receive_rows = []
    for n in IN_FLIGHT:
        rcu, items, requests = receive_units(services, recorder, account, n)
        receive_rows.append([label, f"{n:,}", f"{rcu:.2f}", f"{items:.1f}", f"{requests:.1f}"])
        print(receive_rows[-1], flush=True)
    life_rows = []
    for batch in (1, 16):
        row = lifecycle(services, recorder, account, batch)
        life_rows.append(
            [
                label,
                "single" if batch == 1 else "batched by 16",
                f"{row['requests']:.3g}",
                row["by op"],
                f"{row['wcu']:.3g}",
                f"{row['index wcu']:.3g}",
                f"{row['rcu']:.3g} ({row['meta rcu']:.3g} meta)",
            ]
        )
        print(life_rows[-1], flush=True)
    mock.stop()
    receive_table = md_table(
        ["code", "in flight ahead", "message-table RCU per receive", "items read per receive", "requests"],
        receive_rows,
    )
    life_table = md_table(
        ["code", "lifecycle", "requests/msg", "by op per msg", "WCU/msg (base)", "index WCU/msg", "RCU/msg"],
        life_rows,
    )
    print(receive_table)
    print(life_table)
    if os.environ.get("BENCH_WRITE"):
        body = f"{receive_table}\n\n{life_table}\n\nElapsed: {time.perf_counter() - started:.0f} s.\n"
        write_result("striped_queues_raw", "Striped queues: raw figures", body)


if __name__ == "__main__":
    main()
