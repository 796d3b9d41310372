"""FIFO queues' messages on the DynamoDB message table: `mnsd.storage.FifoMessageStore` over `fifo_groups.FifoGroups`.

A FIFO queue's messages are not striped: each group has a partition of its own and a group item, and
`mnsd.storage.dynamodb.fifo_groups` reads, claims, deletes and rewinds them (its docstring says how). This store is the
queue-level face of it: the writes and reads every message store shares (`message_table`), counts from a sample of
the groups' leases (`stripe_counts.plain_sample`), and a move in one transaction with the group item's part
(`FifoGroups.moved_out`). The ids of new messages still come from the queue's `Placer`, as a standard queue's.
"""

from __future__ import annotations

from typing import Any

from mnsd.model.messages import Message, MessageRef, MessageState
from mnsd.model.ports import ReadyScan
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.dynamodb import dead_letters
from mnsd.storage.dynamodb.fifo_groups import FifoGroups
from mnsd.storage.dynamodb.layout import message_items
from mnsd.storage.dynamodb.message_table import MessageTable
from mnsd.storage.dynamodb.placer import Placer
from mnsd.storage.dynamodb.stripe_counts import Sample, oldest_of, plain_sample


class DynamoFifoMessages:
    """`mnsd.storage.FifoMessageStore`: FIFO queues' messages, each group in its own partition."""

    def __init__(self, client: Any, table: str, placer: Placer) -> None:
        self.items = MessageTable(client, table)
        self.groups = FifoGroups(client, table, placer)
        self.placer = placer

    @property
    def client(self) -> Any:
        return self.items.client

    @property
    def table(self) -> str:
        return self.items.name

    # --- writes -------------------------------------------------------------------------------

    def new_ids(self, queue_id: str, count: int, now_ms: int, sent: bool = True) -> list[str]:
        return self.placer.new_ids(queue_id, count, now_ms, sent)

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        return self.groups.sequence(queue_id, group, count, now_ms)

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (with BatchWriteItem; their group items counted them at `sequence`)."""
        items = [item for m in messages for item in message_items(m)]  # (a group is read from the table: no index)
        return self.items.put(items, self.placer.growth.pressure.throttled)

    def claim(self, message: Message, now_ms: int, visible_at: int) -> Message | None:
        """A run of one message (its group's head read now, `FifoGroups.claim_runs`)."""
        claimed = self.groups.claim_runs([message], 1, now_ms, visible_at)
        return claimed[0] if claimed else None

    def delete(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        return self.groups.delete(ref, version, now_ms)

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return [self.groups.delete(ref, version, now_ms) for ref, version in leases]

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        return self.groups.change_visibility(ref, version, now_ms, visible_at)

    # --- reads --------------------------------------------------------------------------------

    def scan_ready(self, queue_id: str, now_ms: int, wanted: int, enough: int = 0) -> ReadyScan:
        """The runs of free groups (`FifoGroups.scan`), claimed with the heads the scan saw."""
        return self.groups.scan(queue_id, now_ms, wanted, enough)

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        return self.groups.held_groups(queue_id, now_ms, limit)

    def load_bodies(self, messages: list[Message]) -> None:
        self.items.load_bodies(messages)

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        return self.backlog(queue_id, now_ms).counts

    def backlog(self, queue_id: str, now_ms: int) -> Backlog:
        """The counts (`FifoGroups.counts`: the first groups' leases read, the others from their group items),
        and the oldest enqueue time among the Active and Inactive leases read."""
        samples: list[Sample] = []

        def plain(partition: str, now: int) -> dict[MessageState, float]:
            samples.append(plain_sample(self.items, partition, now))
            return samples[-1].states

        counts = self.groups.counts(queue_id, now_ms, plain)
        return Backlog(counts, oldest_of(samples))

    # --- dead letters and rewind ----------------------------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        """One transaction: the source lease and its group item's count, and the target (a standard queue's too)."""
        also = self.groups.moved_out(source)
        return dead_letters.move(self.client, self.table, source, now_ms, target, self.placer.indexed(target), also)

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return [self.groups.delete_keeping(ref, version, now_ms) for ref, version in leases]

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        return self.groups.rewind(queue_id, since_ms, now_ms)

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
        return self.groups.drop_kept(queue_id)
