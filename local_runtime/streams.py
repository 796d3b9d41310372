"""Streams in the local runtime: the message table's changes, read and handed to what consumes the
DynamoDB stream on AWS (the operation log). On moto, the table's stream records (`LocalStreamReader`, turned
into change events by `mnsd.storage.dynamodb.tables.changes`); on the embedded engine, its change events
(`SqliteChangeReader`).

moto records stream records but its HTTP routing does not answer DynamoDB Streams requests here, so
the reader takes them from moto's backend directly and shapes them as a Lambda event would (epoch
seconds in `ApproximateCreationDateTime`).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from typing import Any

from local_runtime.background import BackgroundLoop
from local_runtime.report import ErrorReport
from mnsd.log.changes import MessageChange
from mnsd.storage.sqlite import SqliteStorage

POLL_SECONDS = 0.1
MOTO_ACCOUNT = "123456789012"


def lambda_record(record: dict[str, Any]) -> dict[str, Any]:
    """A record of moto's stream backend as a Lambda event holds it (the creation time in epoch seconds)."""
    change = dict(record["dynamodb"])
    created = change.get("ApproximateCreationDateTime")
    if isinstance(created, datetime.datetime):
        change["ApproximateCreationDateTime"] = created.replace(tzinfo=datetime.UTC).timestamp()
    elif isinstance(created, str):
        parsed = datetime.datetime.fromisoformat(created)
        change["ApproximateCreationDateTime"] = parsed.replace(tzinfo=datetime.UTC).timestamp()
    return {**record, "dynamodb": change}


class LocalStreamReader(BackgroundLoop):
    """Polls one table's stream from the start and calls `consume(records)` with each batch."""

    def __init__(self, table: str, region: str, consume: Callable[[list[dict[str, Any]]], object], lock: Any) -> None:
        self.table = table
        self.region = region
        self.consume = consume
        self.lock = lock  # the backend's lock: moto is not thread-safe
        self.errors = ErrorReport(f"stream {table}")
        super().__init__(f"stream-{table}")

    def _backend(self) -> Any:
        from moto.dynamodbstreams.models import dynamodbstreams_backends

        return dynamodbstreams_backends[MOTO_ACCOUNT][self.region]

    def _run(self) -> None:
        with self.lock:
            backend = self._backend()
            arn = backend.list_streams(self.table)[0]["StreamArn"]
            shard = backend.describe_stream(arn)["Shards"][0]["ShardId"]
            iterator = backend.get_shard_iterator(arn, shard, "TRIM_HORIZON", None).arn
        while not self._stop.is_set():
            try:
                with self.lock:
                    result = backend.get_records(iterator, 1000)
            except Exception:  # the backend is stopping
                return
            iterator = result["NextShardIterator"]
            records = [lambda_record(r) for r in result["Records"]]
            if records:
                try:
                    self.consume(records)
                    self.errors.succeeded()
                except Exception as error:
                    self.errors.failed(error)
            else:
                self._stop.wait(POLL_SECONDS)


class SqliteChangeReader(BackgroundLoop):
    """The embedded engine's stream: hands its change events to `consume` and forgets them once consumed;
    also sweeps what retention ended, as TTL does, and checkpoints the WAL when idle (so commits on the
    request path do not)."""

    def __init__(
        self,
        storage: SqliteStorage,
        consume: Callable[[list[MessageChange]], object],
        now_ms: Callable[[], int],
        sweep_seconds: float = 30.0,
    ) -> None:
        self.storage = storage
        self.consume = consume
        self.now_ms = now_ms
        self.sweep_seconds = sweep_seconds
        self.errors = ErrorReport("sqlite changes")
        super().__init__("sqlite-changes")

    def drain(self) -> int:
        """Consume the pending change events; how many."""
        records, upto = self.storage.messages.changes()
        if records:
            self.consume(records)
            self.storage.messages.forget_changes(upto)
        return len(records)

    def _run(self) -> None:
        next_sweep = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() >= next_sweep:
                    self.storage.sweep_expired(self.now_ms())
                    next_sweep = time.monotonic() + self.sweep_seconds
                if self.drain():
                    self.errors.succeeded()
                    continue
                self.storage.database.checkpoint()
                self.errors.succeeded()
            except Exception as error:  # kept: the records are consumed again on the next round
                self.errors.failed(error)
            self._stop.wait(POLL_SECONDS)
