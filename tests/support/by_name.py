"""The queue calls by account and queue name, each resolving the name as an API operation does at the edge
(`mnsd.queues.addresses`, `mnsd.calls.call.Call.queue`): what the benchmarks' scripted producers and consumers, and
the service-level tests, call. Queue control (`QueueControl`: create, attributes, counts) is passed through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnsd.model.inputs import counted_handles
from mnsd.model.names import is_receiver_address
from mnsd.queues import addresses
from mnsd.wire import requests

if TYPE_CHECKING:
    from mnsd.ground.errors import MnsError
    from mnsd.model.inputs import MessageInput
    from mnsd.model.messages import Message
    from mnsd.model.queues import Queue, QueueAttributeChanges
    from mnsd.queues.messages import Received, SendResult
    from mnsd.queues.receivers import ReceiverService
    from mnsd.services import Services


class QueuesByName:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.receivers: ReceiverService = services.receivers
        self.messages: Any = services.storage.messages  # the engine's store (its placement, its client), as probed

    def __getattr__(self, name: str) -> Any:  # queue control: create_queue, queue_counts, backlog, ...
        return getattr(self.services.queues, name)

    def get_queue(self, account_id: str, name: str) -> Queue:
        return self.services.addresses.resolve(account_id, name)

    def set_queue_attributes(self, account_id: str, name: str, given: QueueAttributeChanges) -> None:
        if is_receiver_address(name):
            self.receivers.set_attributes(account_id, name, given)
        else:
            self.services.queues.set_queue_attributes(account_id, name, given)

    def delete_queue(self, account_id: str, name: str) -> None:
        addresses.refuse_receiver(name, addresses.DELETE)
        self.services.queues.delete_queue(account_id, name)

    def send(self, account_id: str, name: str, inputs: list[MessageInput]) -> list[SendResult]:
        return self.services.messages.send(self.services.addresses.queue(account_id, name, addresses.SEND), inputs)

    def receive(
        self, account_id: str, name: str, count: int, wait_seconds: int | None, received_at: float | None = None
    ) -> list[Received]:
        return self.services.messages.receive(self.get_queue(account_id, name), count, wait_seconds, received_at)

    def peek(self, account_id: str, name: str, count: int) -> list[Message]:
        return self.services.messages.peek(self.get_queue(account_id, name), count)

    def delete(self, account_id: str, name: str, handle: str | None) -> None:
        self.services.messages.delete(self.get_queue(account_id, name), handle)

    def batch_delete(self, account_id: str, name: str, handles: list[str]) -> list[tuple[str, MnsError]]:
        handles = counted_handles(handles)
        return self.services.messages.batch_delete(self.get_queue(account_id, name), handles)

    def change_visibility(self, account_id: str, name: str, handle: str | None, seconds: int) -> tuple[str, int]:
        return self.services.messages.change_visibility(self.get_queue(account_id, name), handle, seconds)

    def redrive(self, account_id: str, name: str) -> int:
        return self.services.dead_letters.redrive(self.services.addresses.queue(account_id, name, addresses.REDRIVE))

    def rewind(self, account_id: str, name: str, rewind_time: str) -> int:
        since = requests.rewind_seconds(rewind_time)
        return self.services.dead_letters.rewind(self.get_queue(account_id, name), since)
