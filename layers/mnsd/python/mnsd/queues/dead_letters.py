"""Where messages go when they cannot be processed, and how they come back: a queue's dead letters (moved at the
receive that would exceed MaxReceiveCount), their redrive to the queues they came from, a rewind, and the dead
letters the service itself sends (a push given up)."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.control.catalog import Catalog
from mnsd.control.registry import Registry
from mnsd.ground import actor, errors
from mnsd.ground.clock import Clock, ms
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.kinds import DEAD_LETTER_GROUP, kind_of
from mnsd.model.messages import (
    DLQ_SOURCE_ARN,
    DLQ_TYPE_QUEUE,
    Message,
    Property,
    dead_letter_marks,
    without_dead_letter_marks,
)
from mnsd.model.queues import DlqPolicy, Queue
from mnsd.queues.activity import QueueActivity
from mnsd.queues.addresses import QueueAddresses
from mnsd.queues.arrivals import Arrivals
from mnsd.queues.control import queue_arn
from mnsd.queues.notifier import Notifier
from mnsd.queues.stores import MessageStores

# A redrive moves at most this many messages per request (the answer says how many; call again for more)
# and looks at most this far into the dead-letter queue past the messages it cannot move.
MAX_REDRIVE = 1000
MAX_REDRIVE_SCAN = 1000
REDRIVE_PAGE = 64


@dataclass(eq=False, kw_only=True)  # a service: compared by identity
class DeadLetterService:
    messages: MessageStores  # a queue's store: `messages.of(queue)`
    arrivals: Arrivals  # where moved messages land
    notifier: Notifier
    activity: QueueActivity
    catalog: Catalog  # a policy's target
    registry: Registry[Queue]  # the queues' records
    addresses: QueueAddresses  # a redrive's sources
    clock: Clock
    settings: Settings

    # --- at a receive ---------------------------------------------------------------------------

    def at_receive(self, queue: Queue, policy: DlqPolicy, candidates: list[Message], now_ms: int) -> list[Message]:
        """A receive's candidates with those whose next receive would exceed MaxReceiveCount moved to the policy's
        target; what may still be claimed. (The target gone, nothing moves and every candidate stays.)"""
        moves, kept = kind_of(queue).dead_letter_split(candidates, policy.max_receive_count)
        if moves and not self._dead_letter(queue, policy, moves, now_ms):
            return candidates
        return kept

    def _dead_letter(self, queue: Queue, policy: DlqPolicy, groups: list[list[Message]], now_ms: int) -> bool:
        """Move each group's messages (a FIFO group's spent head; else one message each) to the policy's target in
        their order, a group's moves stopping at the first lost to another consumer (each move is atomic and
        conditioned on the lease as observed: of concurrent receivers, one moves it). False when the target queue no
        longer exists."""
        target = self.catalog.get_queue(queue.account_id, policy.target)
        if target is None:
            return False
        source_arn = queue_arn(self.settings.region, queue)
        moved: list[Message] = []
        store = self.messages.of(queue)
        store.load_bodies([message for group in groups for message in group])
        for group in groups:
            for message in group:
                letter = self._dead_letter_of(message, target, source_arn, now_ms)
                if message.body is None or not store.move(message, now_ms, letter):
                    break  # (one gone since it was read stays unloaded)
                moved.append(letter)
        if moved:
            self.arrivals.moved_in(target, moved, now_ms)
            self.activity.dead_lettered(queue, len(moved))
        return True

    def _dead_letter_of(self, message: Message, target: Queue, source_arn: str, now_ms: int) -> Message:
        """The dead letter of `message` in `target`: same body, priority, properties and end of retention."""
        marks = dead_letter_marks(DLQ_TYPE_QUEUE, source_arn, message.message_id)
        return self.arrivals.moved(
            message, target, now_ms, without_dead_letter_marks(message.system_properties) + marks
        )

    # --- sent by the service ----------------------------------------------------------------------

    def send(
        self,
        account_id: str,
        queue_name: str,
        body: str,
        user_properties: tuple[Property, ...],
        system_properties: tuple[Property, ...],
        group: str = DEAD_LETTER_GROUP,
    ) -> Message:
        """Store a dead letter (a message the service itself sends, with system properties) in a queue (in `group`
        there when it is a FIFO queue)."""
        queue = self.registry.get(account_id, queue_name)
        given = MessageInput(body, 0, 8, user_properties, system_properties, message_group_id=group)
        now_ms = ms(self.clock.now())
        ids = self.messages.of(queue).new_ids(queue.queue_id, 1, now_ms)
        (message,) = self.arrivals.new_messages(queue, [given], now_ms, ids)
        if self.arrivals.store(queue, [message], now_ms, sent=False):
            raise errors.InternalError()
        return message

    # --- back where they came from ----------------------------------------------------------------

    def redrive(self, queue: Queue) -> int:
        """Move the dead letters of a queue back to the queues they came from; how many moved.

        Each goes back as a new message of its source queue (the current one of that name in the same
        account), without the DLQ system properties, with its end of retention. Messages in flight, and
        those whose source queue no longer exists, stay. A dead letter of a receiver goes back to that receiver
        alone, and one of a queue to the queue alone: its receivers had their own copy of the message.
        """
        now_ms = ms(self.clock.now())
        sources: dict[str, Queue | None] = {}
        stay: set[str] = set()
        store = self.messages.of(queue)
        moved = 0
        while moved < MAX_REDRIVE:
            wanted = min(MAX_REDRIVE_SCAN, len(stay) + REDRIVE_PAGE)
            found = [m for m in store.peek_ready(queue.queue_id, now_ms, wanted) if m.message_id not in stay]
            if not found:
                break
            store.load_bodies(found)
            for message in found[: MAX_REDRIVE - moved]:
                if message.body is not None and self._redrive_one(queue, message, sources, now_ms):
                    moved += 1
                else:
                    stay.add(message.message_id)
        return moved

    def _redrive_one(self, queue: Queue, message: Message, sources: dict[str, Queue | None], now_ms: int) -> bool:
        source = self._redrive_source(queue.account_id, message, sources)
        if source is None or source.queue_id == queue.queue_id:
            return False
        back = self.arrivals.moved(message, source, now_ms, without_dead_letter_marks(message.system_properties))
        with actor.recording(queue.attributes.logging_enabled):
            moved = self.messages.of(queue).move(message, now_ms, back)
        if not moved:
            return False
        self.notifier.notify(source.queue_id)
        return True

    def _redrive_source(self, account_id: str, message: Message, sources: dict[str, Queue | None]) -> Queue | None:
        arn = next((p.value for p in message.system_properties if p.name == DLQ_SOURCE_ARN), "")
        prefix = f"acs:mns:{self.settings.region}:{account_id}:queues/"
        if not arn.startswith(prefix):
            return None  # not a dead letter of this account's queues
        source = arn[len(prefix) :]
        if source not in sources:
            sources[source] = self.addresses.find(account_id, source)
        return sources[source]

    def rewind(self, queue: Queue, since: int) -> int:
        """Make every retained message enqueued at or after `since` (Unix seconds) receivable again."""
        period = queue.attributes.rewind_period
        if not period:
            raise errors.InvalidArgument("The queue's RewindPeriod is 0: rewind is off.")
        now = self.clock.now()
        low, high = int(now) - period, int(now)
        if not low <= since <= high:
            raise errors.out_of_range("rewindtime", low, high, "seconds")
        rewound = self.messages.of(queue).rewind(queue.queue_id, since * 1000, ms(now))
        if rewound:
            self.notifier.notify(queue.queue_id)
        return rewound
