"""What a message's history costs on the SQLite engine as its queue's operation log grows.

A queue's log partition holds N records (5 events each of N / 5 messages, times spread over an hour) on a database
file, as `make run` keeps it. Timed: `SqliteOperationLog.history` of one message (the index on the message id), and,
for scale, reading the queue's whole partition by time (what finding one message would cost without the index: the
hourly metrics' read). Medians over the lookups of random messages.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import uuid
from typing import TYPE_CHECKING

from bench._common import md_table, median, write_result

if TYPE_CHECKING:
    from mnsd.storage.sqlite import SqliteStorage

EVENTS = ("send", "receive", "change_visibility", "receive", "delete")
NOW = 1_765_000_000_000


def populated(path: str, records: int) -> SqliteStorage:
    from mnsd.log.oplog import LogRecord
    from mnsd.storage.sqlite import sqlite_storage

    storage = sqlite_storage(path)
    batch = []
    for n in range(records):
        message, event = divmod(n, len(EVENTS))
        time_ms = NOW + (n * 3_600_000) // records
        batch.append(LogRecord("A", "queue", "q", EVENTS[event], time_ms, f"M{message:08d}", uuid.uuid4().hex))
        if len(batch) == 5000:
            storage.log.write(batch)
            batch = []
    storage.log.write(batch)
    return storage


def measure(records: int, lookups: int, scans: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-history-") as folder:
        storage = populated(folder, records)
        messages = records // len(EVENTS)
        times = []
        for _ in range(lookups):
            wanted = f"M{random.randrange(messages):08d}"
            start = time.perf_counter()
            found = storage.log.history("A", "queue", "q", wanted, 1000)
            times.append(time.perf_counter() - start)
            assert len(found.records) == len(EVENTS)
        whole = []
        for _ in range(scans):
            start = time.perf_counter()
            read = storage.log.read("A", "queue", "q", NOW, NOW + 3_600_000, records + 1)
            whole.append(time.perf_counter() - start)
            assert len(read.events) == records
        storage.database.close()
    return median(times) * 1e6, median(whole) * 1e3, messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--lookups", type=int, default=300)
    parser.add_argument("--scans", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for records in args.records:
        history_us, whole_ms, messages = measure(records, args.lookups, args.scans)
        rows.append([f"{records:,}", f"{messages:,}", f"{history_us:.0f}", f"{whole_ms:.1f}"])
        print(rows[-1], flush=True)
    table = md_table(
        ["log records of the queue", "messages", "history of one, p50 µs", "whole partition, p50 ms"], rows
    )
    run = f"--records {' '.join(map(str, args.records))} --lookups {args.lookups} --scans {args.scans}"
    body = (
        f"Run as: `.venv/bin/python -m bench.message_history {run}`.\n\n"
        "SQLite engine on a database file (as `make run`), one queue's log partition; "
        f"{args.lookups} lookups of random messages (5 events each), {args.scans} reads of the whole partition.\n\n"
        f"{table}\n\n"
        "The history reads one range of the index `operation_log_message (message_id, pk)`: its time stays flat as "
        "the partition grows, where finding the message among the partition's records grows with it. On DynamoDB "
        "the history is one Query of one key of the index `message` (a few items: 0.5 read units, eventually "
        "consistent, by DynamoDB's size rules; moto scans a whole table for any index query, so it is not timed here)."
    )
    write_result("message_history", "A message's history: its cost as the log grows", body)


if __name__ == "__main__":
    main()
