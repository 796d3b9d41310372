"""The contract's view of the DynamoDB engine on queues that keep the ready index
(`mnsd.storage.dynamodb.placement.Spread`)."""

from __future__ import annotations

from mnsd.storage import Storage
from mnsd.storage.dynamodb.messages import DynamoMessageStore
from mnsd.storage.dynamodb.placement import Placement

# One stripe, its writes keeping the ready index since the epoch, the index built: what the engine keeps for such
# a queue.
INDEXED = Placement(stripes=1, index_since=1, plain_stripes=0)


def indexed_queues(storage: Storage) -> Storage:
    """The DynamoDB engine placing every queue that has no record (the contract's queues) as `INDEXED`."""
    assert isinstance(storage.messages, DynamoMessageStore)
    storage.messages.placer.placements.unrecorded = INDEXED
    return storage


def reads_index(storage: Storage) -> bool:
    """Whether the contract's queues are read from an index that orders by visibility (priority best effort)."""
    messages = storage.messages
    return isinstance(messages, DynamoMessageStore) and messages.placer.placements.unrecorded.spread.reads_index(0)
