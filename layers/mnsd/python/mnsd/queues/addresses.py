"""Where a request's queue path leads, decided once, at the edge: a queue by its name, or one of a queue's
receivers by its address `{queue}.{receiver}` (`mnsd.model.names`), as a queue of its own (`mnsd.queues.receivers.view`).

Operations resolve the path here and hand the services a `Queue`; nothing past this module tells a queue from a
receiver by its name. What only a queue's own name may be given to (sending, redriving, deleting the queue) is
refused here for a receiver's address, with a hint of what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.control.catalog import Catalog
from mnsd.control.registry import Registry
from mnsd.ground import errors
from mnsd.model.names import is_receiver_address
from mnsd.model.queues import Queue
from mnsd.queues.receivers import ReceiverService

# What to do instead of giving a receiver's address where only a queue's name goes.
SEND = "Send to the queue: each of its receivers gets every message sent to it."
REDRIVE = "Redrive the queue: a receiver's messages are copies of the queue's."
DELETE = "Delete a receiver with DELETE /queues/{queue}/receivers/{receiver}."


@dataclass(eq=False, kw_only=True)  # a service: compared by identity
class QueueAddresses:
    registry: Registry[Queue]  # the queues' records
    catalog: Catalog
    receivers: ReceiverService

    def resolve(self, account_id: str, address: str, fresh: bool = False) -> Queue:
        """The queue a name names, or the receiver an address names: QueueNotExist (ReceiverNotExist) if none.
        `fresh`: the queue's record as stored now, not as this container last read it (on AWS each function has its
        own cache: an attributes read right after a change or a delete made through another function)."""
        if is_receiver_address(address):
            return self.receivers.resolve(account_id, address)
        if fresh:
            self.registry.kind.check_name(address)
            self.catalog.get_queue(account_id, address, fresh=True)  # this container's record renewed, or forgotten
        return self.registry.get(account_id, address)

    def queue(self, account_id: str, name: str, instead: str) -> Queue:
        """The queue a name names; a receiver's address refused (InvalidArgument, saying what to do `instead`)."""
        refuse_receiver(name, instead)
        return self.registry.get(account_id, name)

    def find(self, account_id: str, address: str) -> Queue | None:
        """The queue or receiver an address names now (a dead letter's source, read from its properties), or None."""
        if is_receiver_address(address):
            return self.receivers.find(account_id, address)
        return self.catalog.get_queue(account_id, address)


def refuse_receiver(name: str, instead: str) -> None:
    """Refuse a receiver's address where only a queue's own name may be given."""
    if is_receiver_address(name):
        raise errors.InvalidArgument(f"The operation is not supported on a receiver ({name}). {instead}")
