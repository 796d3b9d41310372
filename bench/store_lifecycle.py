"""The SQLite engine's standard-queue lifecycle in process, without the server: messages/s of `--messages` 1 KB messages
sent, received (a receive's scan and claim) and deleted in batches of 16 through the message port, one thread.

    PYTHONPATH=layers/mnsd/python:. python -m bench.store_lifecycle [--messages 20000]

Runs on a checkout from before issue 32 too (its scan took the candidates and `enough`), for an A/B in one run.
"""

from __future__ import annotations

import argparse
import inspect
import tempfile
import time

BATCH = 16
NOW = 1_700_000_000_000


def lifecycle(messages: int) -> float:
    from mnsd.model.messages import Content, Message, body_md5
    from mnsd.storage.sqlite import sqlite_storage

    with tempfile.TemporaryDirectory() as data:
        store = sqlite_storage(data).messages
        before_issue_32 = "enough" in inspect.signature(store.scan_ready).parameters
        text = "x" * 700
        content = Content(body_md5(text), text, 8)
        now = NOW
        started = time.perf_counter()
        for _ in range(0, messages, BATCH):
            now += 5
            ids = store.new_ids("q1", BATCH, now)
            store.put([Message.enqueued("q1", id_, now, now, now // 1000 + 3600, content) for id_ in ids])
            args = (64,) if before_issue_32 else (BATCH,)
            scan = store.scan_ready("q1", now, *args, **({"enough": BATCH} if before_issue_32 else {}))
            claimed = scan.claim(scan.messages, BATCH, now, now + 30_000)
            store.delete_many([(m.ref, m.version) for m in claimed], now + 1)
        return messages / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=20_000)
    print(f"{lifecycle(parser.parse_args().messages):.0f} msg/s")


if __name__ == "__main__":
    main()
