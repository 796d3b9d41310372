"""The contract's view of the DynamoDB engine on queues that keep the ready index
(`mnsd.storage.dynamodb.placement.placement.Spread`)."""

from __future__ import annotations

import threading

import boto3
from moto import mock_aws

from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.model.messages import Message
from mnsd.model.ports import MessageStore
from mnsd.storage import Storage
from mnsd.storage.dynamodb import dynamodb_storage
from mnsd.storage.dynamodb.items.layout import TTL_ATTRIBUTE
from mnsd.storage.dynamodb.placement.placement import Placement
from mnsd.storage.dynamodb.standard.striped import StripedMessageStore
from mnsd.storage.sqlite import SqliteStorage, sqlite_storage
from tests.support.simulator.dynamodb import SimulatedDynamoDB

# The engines the contract suite runs against, each behind the `storage` fixture (conftest.py).
ENGINES = ["dynamodb-moto", "dynamodb-fake", "dynamodb-fake-indexed", "sqlite-file", "sqlite-memory"]
# The DynamoDB engine storing batches packed (`Settings.packed_batches`): the suites of packed batches run on these too.
PACKED_ENGINES = ["dynamodb-moto-packed", "dynamodb-fake-packed", "dynamodb-fake-indexed-packed"]

# One stripe, its writes keeping the ready index since the epoch, the index built: what the engine keeps for such
# a queue.
INDEXED = Placement(stripes=1, index_since=1, plain_stripes=0)


def indexed_queues(storage: Storage) -> Storage:
    """The DynamoDB engine placing every queue that has no record (the contract's queues) as `INDEXED`."""
    assert isinstance(storage.messages, StripedMessageStore)
    storage.messages.placer.placements.unrecorded = INDEXED
    return storage


def reads_index(storage: Storage) -> bool:
    """Whether the contract's queues are read from an index that orders by visibility (priority best effort)."""
    messages = storage.messages
    return isinstance(messages, StripedMessageStore) and messages.placer.placements.unrecorded.spread.reads_index(0)


def end_lifetimes(storage: Storage, now_ms: int) -> None:
    """What each engine does, by `now_ms`, with what has outlived its time: DynamoDB's TTL deletes every item of
    the message table whose TTL (`layout.TTL_ATTRIBUTE`, epoch seconds) has passed; SQLite's sweep removes expired
    messages and group counters past their lifetime (`SqliteStorage.sweep_expired`)."""
    if isinstance(storage, SqliteStorage):
        storage.sweep_expired(now_ms)
        return
    messages = storage.messages
    assert isinstance(messages, StripedMessageStore)
    items = messages.client.scan(TableName=messages.table)["Items"]  # (the contract's tables are small)
    for item in items:
        if TTL_ATTRIBUTE in item and int(item[TTL_ATTRIBUTE]["N"]) <= now_ms // 1000:
            messages.client.delete_item(TableName=messages.table, Key={"pk": item["pk"], "sk": item["sk"]})


def claim_one(store: MessageStore, message: Message, now_ms: int, visible_at: int) -> Message | None:
    """One message claimed on its own, as a receive claims what it found: through a scan of its queue
    (`ReadyScan.claim`, the one claim path); None if its lease is no longer as observed and Active."""
    claimed = store.scan_ready(message.queue_id, now_ms, 1).claim([message], 1, now_ms, visible_at)
    return claimed[0] if claimed else None


def engine(request, tmp_path):
    """The storage of the engine `request.param` names."""
    settings = Settings(packed_batches=request.param.endswith("-packed"))
    if request.param.startswith("dynamodb-moto"):
        request.getfixturevalue("aws_credentials")
        with mock_aws():
            # moto is not thread-safe: one call at a time gives it DynamoDB's per-call atomicity.
            client = SerializedClient(boto3.client("dynamodb", region_name="us-east-1"))
            create_tables(client, settings)
            yield dynamodb_storage(client, settings)
        return
    if request.param.startswith("dynamodb-fake"):
        # The benchmarks' in-memory DynamoDB (tests/support/simulator/dynamodb.py): the contract holds on it as on moto.
        client = SerializedClient(SimulatedDynamoDB())
        create_tables(client, settings)
        storage = dynamodb_storage(client, settings)
        if "-indexed" in request.param:
            storage = indexed_queues(storage)
        yield storage
        return
    path = tmp_path / "data" if request.param == "sqlite-file" else ":memory:"
    storage = sqlite_storage(path)
    yield storage
    storage.database.close()


def racing_owners(
    storage: Storage,
    queue_id: str,
    workers: int,
    per_scan: int,
    now_ms: int,
    visible_at: int,
    one_per_scan: bool = False,
) -> dict[str, list[int]]:
    """`workers` threads released at once, each scanning `per_scan` ready messages of `queue_id` and claiming what it
    saw (one claim a scan when `one_per_scan`) until nothing is ready: each claimed message id with who claimed it."""
    owners: dict[str, list[int]] = {}
    lock = threading.Lock()
    start = threading.Barrier(workers)

    def consume(worker: int) -> None:
        start.wait()
        for _ in range(40):
            scan = storage.messages.scan_ready(queue_id, now_ms, per_scan)
            if not scan.messages:
                return
            for seen in scan.messages:
                if claim_one(storage.messages, seen, now_ms, visible_at) is not None:
                    with lock:
                        owners.setdefault(seen.message_id, []).append(worker)
                    if one_per_scan:
                        break

    threads = [threading.Thread(target=consume, args=(worker,)) for worker in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return owners
