"""DynamoDB write units per message: a dead-letter move and a delete with rewind on, beside the plain lifecycle.

In-process moto (`mock_aws`) and the queue services (`mnsd.queues`) directly (no HTTP), a hand-moved clock (no sleeps). The
DynamoDB client is the recording proxy of tests/support/recording.py, which bills each call by DynamoDB's size
rules (`mnsd.storage.capacity`; TransactWriteItems at twice the units of its items).
"""

from __future__ import annotations

import time
from typing import Any

from bench._common import md_table, use_local_aws_defaults, write_result
from bench.capacity import SimulatedClock
from bench.queue_lifecycle import b64_body
from tests.support.by_name import QueuesByName
from tests.support.recording import Recorder, recorded_moto_services

MESSAGES = 16  # per row


def setup():
    clock = SimulatedClock(start=time.time())
    return (*recorded_moto_services(clock), clock)


def units(recorder: Recorder) -> tuple[float, str]:
    """Write units on the message table since the last reset, and the calls that spent them."""
    calls = [c for c in recorder.calls if c.table != "mns-meta" and c.wcu]
    ops = ", ".join(f"{c.op} {c.wcu:g}" for c in calls)
    recorder.reset()
    return sum(c.wcu for c in calls), ops


def row(services, recorder, clock, account: str, body: str, mode: str) -> list[object]:
    """Per message: write units of send, receive, and the last step (delete, delete with rewind on, DLQ move)."""
    from mnsd.ground import errors
    from mnsd.model.inputs import MessageInput
    from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges

    queues = QueuesByName(services)
    name = f"q{time.monotonic_ns()}"
    given = QueueAttributeChanges(visibility_timeout="1")
    if mode == "rewind":
        given = QueueAttributeChanges(visibility_timeout="1", rewind_period="600")
    if mode == "move":
        queues.create_queue(account, name + "-dlq")
        given = QueueAttributeChanges(visibility_timeout="1", dlq_policy=DlqPolicyInput("True", name + "-dlq", "1"))
    queues.create_queue(account, name, given)
    totals = {"send": 0.0, "receive": 0.0, "last": 0.0}
    trace = ""
    for _ in range(MESSAGES):
        recorder.reset()
        queues.send(account, name, [MessageInput(body, None, 8)])
        totals["send"] += units(recorder)[0]
        (got,) = queues.receive(account, name, 1, 0)
        totals["receive"] += units(recorder)[0]
        if mode == "move":
            clock.sleep(1.5)  # visible again: the next receive would exceed MaxReceiveCount 1
            try:
                queues.receive(account, name, 1, 0)
                raise AssertionError("the message was received instead of moved")
            except errors.MessageNotExist:
                pass
        else:
            queues.delete(account, name, got.receipt_handle)
        spent, trace = units(recorder)
        totals["last"] += spent
    send, receive, last = (totals[k] / MESSAGES for k in ("send", "receive", "last"))
    return [f"{send:g}", f"{receive:g}", f"{last:g}", f"{send + receive + last:g}", trace]


def receive_reads(services, recorder, clock, account: str, kept: int) -> list[str]:
    """Read units of one receive on a queue with rewind on after `kept` messages were received and deleted (so
    kept), sent at a quiet producer's 80 messages/s: as soon as they are kept, and once the queue's ready index
    is built when those receives turned it on (`mnsd.storage.dynamodb.placement.stripes`)."""
    from mnsd.ground import errors
    from mnsd.model.inputs import MessageInput
    from mnsd.model.queues import QueueAttributeChanges

    queues = QueuesByName(services)
    name = f"r{time.monotonic_ns()}"
    queues.create_queue(account, name, QueueAttributeChanges(rewind_period="600"))
    for start in range(0, kept, 16):
        queues.send(account, name, [MessageInput("k", None, 8) for _ in range(min(16, kept - start))])
        clock.sleep(0.2)
        for got in queues.receive(account, name, 16, 0):
            queues.delete(account, name, got.receipt_handle)

    def one_receive() -> float:
        queues.send(account, name, [MessageInput("last", None, 8)])
        recorder.reset()
        queues.receive(account, name, 1, 0)
        return sum(c.rcu for c in recorder.calls if c.table != "mns-meta")

    def spread() -> Any:  # the engine's placement of the queue (`mnsd.storage.dynamodb.placement.placement`)
        return queues.messages.placer.of(queues.get_queue(account, name).queue_id).spread

    first = one_receive()
    if not spread().indexing:
        return [str(kept), f"{first:g}", "- (index off)"]
    clock.sleep(services.settings.index_settle_seconds)
    while spread().plain:
        try:
            queues.receive(account, name, 16, 0)  # (builds the index a step further)
        except errors.MessageNotExist:
            pass
    return [str(kept), f"{first:g}", f"{one_receive():g}"]


def main() -> None:
    use_local_aws_defaults()
    mock, services, recorder, clock = setup()
    from mnsd.access.keys import StaticKeyStore

    account = StaticKeyStore(services.settings.credentials).default.account_id
    bodies = [("100 B", b64_body(100)), ("1 KB base64", b64_body(1024)), ("64 KB base64", b64_body(65536))]
    modes = [("plain lifecycle: delete", "plain"), ("delete with rewind on", "rewind"), ("dead-letter move", "move")]
    rows = []
    for body_label, body in bodies:
        for mode_label, mode in modes:
            rows.append([body_label, mode_label, *row(services, recorder, clock, account, body, mode)])
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    reads = [receive_reads(services, recorder, clock, account, kept) for kept in (0, 100, 300)]
    print(reads, flush=True)
    mock.stop()
    headers = ["body", "last step", "send WCU", "receive WCU", "last step WCU", "total WCU", "last step's calls"]
    write_result(
        "dead_letters",
        "Write units per message: dead-letter move and delete with rewind on",
        f"""
Per message, averaged over {MESSAGES} messages per row, message table only (the meta table is read, never
written, per message). In-process moto + the queue services (`mnsd.queues`), a hand-moved clock. Each message is sent, received
once, then: deleted (plain), deleted on a queue with `RewindPeriod` 600 (the lease is re-marked kept in
place), or left to become visible again on a queue whose `DlqPolicy` has `MaxReceiveCount` 1, so that the
next receive moves it to the dead-letter queue.

{md_table(headers, rows)}

Read units of the message table for one receive of the one message left, on a queue with rewind on
after `kept` messages were received and deleted (so kept, sent at 80 messages/s): at once, while the queue
is read from the table (a kept lease is read there, and counts among the leases a receive could not take:
the receives that read 100 turn the queue's ready index on), and once that index is built (120 s later; kept
leases are not in it):

{md_table(["kept leases", "receive RCU, read from the table", "receive RCU, once the index is built"], reads)}

Reading it: a delete with rewind on costs what a delete costs (one write of the lease: an UpdateItem
instead of a DeleteItem), and the kept lease stays until TTL (free). A dead-letter move is one
TransactWriteItems of two small items (4 units: transactions bill twice) plus, when the body does not fit
in the target's lease, a plain PutItem of the body item first (outside the transaction, so billed once;
nothing reads it before its lease exists). With the body item inside the transaction the 64 KB row cost
102 units for the move (measured before that change); the 1 KB row 6. The source's out-of-line body is
left to TTL, as a delete leaves it.
""",
    )


if __name__ == "__main__":
    main()
