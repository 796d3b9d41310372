"""Which store holds a queue's messages: a FIFO queue's (and its receivers') are in the FIFO store
(`mnsd.model.ports.FifoMessageStore`, which keeps each group's order), every other queue's in the standard one, as
the queue's kind chooses (`QueueKind.chosen_store`)."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.model.kinds import Counter, kind_of
from mnsd.model.ports import FifoMessageStore, MessageStore, StandardMessageStore
from mnsd.model.queues import Queue


@dataclass(frozen=True, kw_only=True)
class MessageStores:
    standard: StandardMessageStore  # standard queues' (and their receivers')
    fifo: FifoMessageStore  # FIFO queues' (and their receivers')

    def of(self, queue: Queue) -> MessageStore:
        """The store of a queue's messages, by its kind."""
        return kind_of(queue).chosen_store(self.standard, self.fifo)

    def counter(self, queue_id: str, now_ms: int) -> Counter:
        """The group counters of a FIFO queue's (or receiver's) incarnation, read at `now_ms` (`QueueKind.placed`)."""
        return lambda group, count: self.fifo.sequence(queue_id, group, count, now_ms)
