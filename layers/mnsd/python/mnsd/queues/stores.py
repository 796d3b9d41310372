"""Which store holds a queue's messages: a FIFO queue's (and its receivers') are in the FIFO store
(`mnsd.storage.FifoMessageStore`, which keeps each group's order), every other queue's in the standard one. Chosen
here only.
And what a service over queues' records and their messages starts with (`QueueServiceBase`)."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.catalog import Catalog
from mnsd.clock import Clock
from mnsd.model.ports import FifoMessageStore, MessageStore, StandardMessageStore
from mnsd.model.queues import Queue
from mnsd.settings import Settings


@dataclass(frozen=True)
class MessageStores:
    standard: StandardMessageStore  # standard queues' (and their receivers')
    fifo: FifoMessageStore  # FIFO queues' (and their receivers')

    def of(self, queue: Queue) -> MessageStore:
        """The store of a queue's messages, by its kind."""
        return self.fifo if queue.attributes.fifo else self.standard


@dataclass(eq=False)  # a service: compared by identity
class QueueServiceBase:
    """The fields a service over queues' records and their messages starts with (`QueueControl`,
    `DeadLetterService`); each service's own fields follow them."""

    catalog: Catalog
    messages: MessageStores  # a queue's store: `messages.of(queue)`
    clock: Clock
    settings: Settings
