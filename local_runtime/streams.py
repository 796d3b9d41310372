"""DynamoDB streams in the local runtime: the message table's stream, read and handed to the handler
that consumes it on AWS (the operation log).

moto records stream records but its HTTP routing does not answer DynamoDB Streams requests here, so
the reader takes them from moto's backend directly and shapes them as a Lambda event would (epoch
seconds in `ApproximateCreationDateTime`).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from typing import Any

POLL_SECONDS = 0.1
MOTO_ACCOUNT = "123456789012"


def _lambda_record(record: dict[str, Any]) -> dict[str, Any]:
    change = dict(record["dynamodb"])
    created = change.get("ApproximateCreationDateTime")
    if isinstance(created, datetime.datetime):
        change["ApproximateCreationDateTime"] = created.replace(tzinfo=datetime.UTC).timestamp()
    elif isinstance(created, str):
        parsed = datetime.datetime.fromisoformat(created)
        change["ApproximateCreationDateTime"] = parsed.replace(tzinfo=datetime.UTC).timestamp()
    return {**record, "dynamodb": change}


class LocalStreamReader:
    """Polls one table's stream from the start and calls `consume(records)` with each batch."""

    def __init__(self, table: str, region: str, consume: Callable[[list[dict[str, Any]]], object], lock: Any) -> None:
        self.table = table
        self.region = region
        self.consume = consume
        self.lock = lock  # the backend's lock: moto is not thread-safe
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"stream-{table}", daemon=True)

    def start(self) -> LocalStreamReader:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

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
            records = [_lambda_record(r) for r in result["Records"]]
            if records:
                try:
                    self.consume(records)
                except Exception as error:
                    print(f"stream {self.table}: {type(error).__name__}: {error}", flush=True)
            else:
                self._stop.wait(POLL_SECONDS)
