"""Which store holds a queue's messages: a FIFO queue's are in the FIFO store (`mnsd.storage.FifoMessageStore`,
which keeps each group's order), every other queue's (receivers included) in the standard one. Chosen here only."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.queues.model import Queue
from mnsd.storage import FifoMessageStore, MessageStore


@dataclass(frozen=True)
class MessageStores:
    standard: MessageStore  # standard queues' and their receivers'
    fifo: FifoMessageStore  # FIFO queues'

    def of(self, queue: Queue) -> MessageStore:
        """The store of a queue's messages, by its kind."""
        return self.fifo if queue.attributes.fifo else self.standard
