"""The daily backlog snapshot: every queue's counts and oldest message, read the way GetQueueAttributes and the metrics
sampler read them (`MessageStore.backlog`: bounded reads, exact up to a few thousand leases per state range, estimated
beyond), one JSON line a queue. The analytics job `backlog_snapshot` reads these lines instead of an export of the
message table, which is then not exported at all (docs/analytics.md: what that costs and what it gives up).

Receivers are left out: their messages are their queue's. A queue whose read fails is left out of the snapshot and
counted (`BacklogSnapshot.failed`); the others are written.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from aws_lambda_powertools import Logger

from mnsd.ground.clock import Clock, ms
from mnsd.model.names import is_receiver_address
from mnsd.model.queues import Queue
from mnsd.monitoring.sampler import Backlogs

logger = Logger(service="mns")

SNAPSHOT_SUFFIX = ".json.gz"  # `<prefix>/<snapshot time, epoch ms>.json.gz`: the newest by name is the latest


@dataclass(frozen=True)
class BacklogRow:
    """One queue's line: its counts, when its oldest message not delayed was enqueued, and when it was read (ms)."""

    account: str
    queue: str
    queue_id: str
    active: int
    inactive: int
    delayed: int
    oldest_enqueue_time: int | None
    read_at: int


@dataclass(frozen=True)
class BacklogSnapshot:
    taken_at: int  # ms: when the run started (the snapshot's time)
    rows: list[BacklogRow]
    failed: int  # queues whose read failed (logged): not in `rows`

    def key(self, prefix: str) -> str:
        return f"{prefix.rstrip('/')}/{self.taken_at}{SNAPSHOT_SUFFIX}"

    def body(self) -> bytes:
        """The rows as gzipped JSON lines (what Spark reads with `glue_jobs.schemas.BACKLOG_SCHEMA`)."""
        lines = "".join(json.dumps(asdict(row), separators=(",", ":")) + "\n" for row in self.rows)
        return gzip.compress(lines.encode("utf-8"), mtime=0)


def take_snapshot(queues: Backlogs, every_queue: Iterable[Queue], clock: Clock, workers: int = 16) -> BacklogSnapshot:
    """Read the backlog of every queue of `every_queue` (receivers skipped), `workers` at a time."""
    taken_at = ms(clock.now())
    chosen = [queue for queue in every_queue if not is_receiver_address(queue.name)]

    def read(queue: Queue) -> BacklogRow | None:
        try:
            backlog = queues.backlog(queue)
        except Exception:
            logger.exception("backlog not read", extra={"account": queue.account_id, "queue": queue.name})
            return None
        counts = backlog.counts
        return BacklogRow(
            queue.account_id,
            queue.name,
            queue.queue_id,
            counts.active,
            counts.inactive,
            counts.delayed,
            backlog.oldest_enqueue_time,
            ms(clock.now()),
        )

    with ThreadPoolExecutor(max_workers=workers) as pool:
        read_rows = list(pool.map(read, chosen))
    rows = [row for row in read_rows if row is not None]
    return BacklogSnapshot(taken_at, rows, len(read_rows) - len(rows))
