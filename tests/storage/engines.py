"""The contract's view of the DynamoDB engine on queues that keep the ready index (`mnsd.queue_model.Spread`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from mnsd.queue_model import Message, MessageRef, QueueCounts, Spread
from mnsd.storage import MessageStore, ReadyScan, Storage

INDEXED = Spread(1, True, 0)


class IndexedQueues:
    """A message store whose every queue keeps its ready index (one stripe, the index built): what the service
    passes for such a queue, given for the contract's calls that name none."""

    def __init__(self, store: MessageStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def put(self, messages: list[Message]) -> set[str]:
        return self.store.put([dataclasses.replace(m, indexed=True) for m in messages])

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        return self.store.move(source, now_ms, dataclasses.replace(target, indexed=True))

    def change_visibility(
        self, ref: MessageRef, version: int, now_ms: int, visible_at: int, indexing: bool = True
    ) -> bool:
        return self.store.change_visibility(ref, version, now_ms, visible_at, True)

    def scan_ready(
        self, queue_id: str, now_ms: int, wanted: int, spread: Spread = INDEXED, enough: int = 0
    ) -> ReadyScan:
        return self.store.scan_ready(queue_id, now_ms, wanted, INDEXED, enough)

    def counts(self, queue_id: str, now_ms: int, spread: Spread = INDEXED) -> QueueCounts:
        return self.store.counts(queue_id, now_ms, INDEXED)

    def rewind(self, queue_id: str, since_ms: int, now_ms: int, spread: Spread = INDEXED) -> int:
        return self.store.rewind(queue_id, since_ms, now_ms, INDEXED)


def reads_index(storage: Storage) -> bool:
    """Whether the contract's queues are read from an index that orders by visibility (priority best effort)."""
    return isinstance(storage.messages, IndexedQueues)
