"""What a FIFO message given back costs on DynamoDB: DynamoDB requests and units per message, over the capacity
simulator (`tests/support/simulator/dynamodb.py`, real services, a simulated clock), for three lifecycles of single messages
in a quiet FIFO queue of `--groups` groups:

  plain       send, receive, delete
  give back   send, receive (visibility 30 s), ChangeMessageVisibility to 0 s, receive again, delete
  extend      send, receive (visibility 30 s), ChangeMessageVisibility to 60 s, delete

and, for each, the units of the ChangeMessageVisibility calls alone, and whether the given-back message came back at
once (its group released by the shorter visibility: `came back`).

    python -m bench.fifo_give_back [--messages 200] [--groups 100]
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.capacity import ACCOUNT, SimulatedClock, make_services, no_real_sleeps
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB

BODY = "x" * 700  # a 1 KB message: lease and body inline within one write unit
QUEUE = "fifo-give-back"


def _queue(groups: int) -> tuple[QueuesByName, SimulatedDynamoDB, SimulatedClock]:
    from mnsd.model.queues import QueueAttributeChanges

    clock = SimulatedClock()
    client = SimulatedDynamoDB(now=clock.now, record_calls=False)
    queues = QueuesByName(make_services(client, clock))
    queues.create_queue(ACCOUNT, QUEUE, QueueAttributeChanges(queue_type="fifo", visibility_timeout="30"))
    return queues, client, clock


def _usage(client: SimulatedDynamoDB) -> tuple[float, float, float]:
    usage = client.usage
    return sum(usage.requests.values()), sum(usage.wcu.values()), sum(usage.rcu.values())


def lifecycle(kind: str, messages: int, groups: int) -> dict[str, float]:
    """Per message: DynamoDB requests, WCU and RCU of the whole lifecycle, and of its visibility changes."""
    from mnsd.model.inputs import MessageInput

    queues, client, clock = _queue(groups)
    back = 0
    change = [0.0, 0.0, 0.0]
    for n in range(messages):
        clock.t += 0.05
        group = f"group-{n % groups}"
        queues.send(ACCOUNT, QUEUE, [MessageInput(body=BODY, delay_seconds=None, priority=8, message_group_id=group)])
        if n == 0:
            client.usage.reset()  # (the queue's creation and first send warm the caches, as a busy container's are)
        (got,) = queues.receive(ACCOUNT, QUEUE, 1, 0)
        handle = got.receipt_handle
        if kind != "plain":
            before = _usage(client)
            handle, _ = queues.change_visibility(ACCOUNT, QUEUE, handle, 0 if kind == "give back" else 60)
            after = _usage(client)
            change = [c + a - b for c, a, b in zip(change, after, before, strict=True)]
        if kind == "give back":
            try:
                (again,) = queues.receive(ACCOUNT, QUEUE, 1, 0)
            except Exception:  # noqa: BLE001 (MessageNotExist: its group still held)
                clock.t += 31  # the receive's 30 s
                (again,) = queues.receive(ACCOUNT, QUEUE, 1, 0)
            else:
                back += again.message.message_id == got.message.message_id
            handle = again.receipt_handle
        queues.delete(ACCOUNT, QUEUE, handle)
    requests, wcu, rcu = _usage(client)
    counted = messages - 1
    figures = {"requests": requests / counted, "wcu": wcu / counted, "rcu": rcu / counted}
    if kind != "plain":
        figures.update({f"change {k}": v / messages for k, v in zip(("requests", "wcu", "rcu"), change, strict=True)})
    if kind == "give back":
        figures["came back"] = back / messages
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--groups", type=int, default=100)
    args = parser.parse_args(argv)
    no_real_sleeps()
    print(f"FIFO lifecycles of single 1 KB messages over {args.groups} groups, {args.messages} each, per message:")
    for kind in ("plain", "give back", "extend"):
        figures: dict[str, Any] = lifecycle(kind, args.messages, args.groups)
        line = f"  {kind:10s} {figures['requests']:.3f} requests, {figures['wcu']:.3f} WCU, {figures['rcu']:.3f} RCU"
        if "change wcu" in figures:
            line += (
                f"; the visibility change: {figures['change requests']:.3f} requests, {figures['change wcu']:.3f} WCU, "
                f"{figures['change rcu']:.3f} RCU"
            )
        if "came back" in figures:
            line += f"; came back at once: {figures['came back']:.0%}"
        print(line)


if __name__ == "__main__":
    main()
