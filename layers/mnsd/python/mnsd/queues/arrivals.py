"""New messages of a queue, whoever sends them (producers, a dead-letter move, a redrive, a push given up): their
ids and places (as their queue's kind places them), and their storing with each receiver's copy, waking the long polls."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.model.inputs import MessageInput
from mnsd.model.kinds import kind_of
from mnsd.model.messages import Content, Message, Property
from mnsd.model.queues import Queue
from mnsd.queues.activity import QueueActivity
from mnsd.queues.notifier import Notifier, wake
from mnsd.queues.receivers import ReceiverService
from mnsd.queues.stores import MessageStores


@dataclass(eq=False, kw_only=True)  # a service's part: compared by identity
class Arrivals:
    messages: MessageStores  # a queue's store: `messages.of(queue)`
    notifier: Notifier  # wakes long polls
    receivers: ReceiverService
    activity: QueueActivity

    def placed(self, queue: Queue, messages: list[Message], now_ms: int) -> list[Message]:
        """New messages of the queue at their places in it, as its kind places them (`QueueKind.placed`)."""
        return kind_of(queue).placed(messages, self.messages.counter(queue.queue_id, now_ms))

    def new_messages(
        self, queue: Queue, inputs: list[MessageInput], now_ms: int, message_ids: list[str]
    ) -> list[Message]:
        """Messages sent to the queue at `now_ms`, with these ids, placed (not yet stored)."""
        return self.placed(
            queue, [self._enqueued(queue, m, now_ms, id_) for m, id_ in zip(inputs, message_ids, strict=True)], now_ms
        )

    @staticmethod
    def _enqueued(queue: Queue, message: MessageInput, now_ms: int, message_id: str) -> Message:
        delay = queue.attributes.delay_seconds if message.delay_seconds is None else message.delay_seconds
        available = now_ms + delay * 1000
        content = Content(
            message.body_md5,
            message.body,
            message.priority,
            message.user_properties,
            message.system_properties,
            message.message_group_id,
            queue.attributes.logging_enabled,
        )
        expires_at = now_ms // 1000 + queue.attributes.message_retention_period
        return Message.enqueued(queue.queue_id, message_id, now_ms, available, expires_at, content)

    def moved(self, message: Message, target: Queue, now_ms: int, system_properties: tuple[Property, ...]) -> Message:
        """`message` as a new message of `target` (`Message.moved`), placed there."""
        (message_id,) = self.messages.of(target).new_ids(target.queue_id, 1, now_ms)
        logging = target.attributes.logging_enabled
        (moved,) = self.placed(
            target, [message.moved(target.queue_id, message_id, now_ms, system_properties, logging)], now_ms
        )
        return moved

    def store(self, queue: Queue, messages: list[Message], now_ms: int, sent: bool = True) -> set[str]:
        """Store new messages of the queue and its receivers' copies of them in one `put`, and wake their long polls;
        the ids of the messages not stored, or whose copy was not (the sender is told to send them again)."""
        copies = self.receivers.copies(queue, messages, now_ms)
        failed = self.messages.of(queue).put(messages + [copy for m in messages for copy in copies[m.message_id]])
        lost = {
            m.message_id for m in messages if {m.message_id, *(c.message_id for c in copies[m.message_id])} & failed
        }
        if len(lost) < len(messages):
            wake(self.notifier, queue.queue_id, [m.visible_at for m in messages if m.message_id not in lost], now_ms)
            self.receivers.notify(queue)
        if sent:  # (a dead letter is no message sent)
            self.activity.sent(queue, [m for m in messages if m.message_id not in lost])
        return lost

    def moved_in(self, queue: Queue, moved: list[Message], now_ms: int) -> None:
        """Messages were moved into a queue (dead letters): wake its long polls, and copy them to its receivers,
        stored after the moves (a copy not stored is not retried: the move, which the receive needs, is done)."""
        self.notifier.notify(queue.queue_id, len(moved))
        if not queue.receivers:
            return
        copies = self.receivers.copies(queue, moved, now_ms)
        self.messages.of(queue).put([copy for found in copies.values() for copy in found])
        self.receivers.notify(queue)
