"""A queue's kind, standard or FIFO: everything that differs by kind, in one object each (`STANDARD`, `FIFO`).

A queue's kind is stored once, as its QueueType (`QueueAttributes.queue_type`, chosen at creation, never changed);
`kind_of` reads it. A message's own mark (`Message.fifo`: kept in its group's order at `Message.position`) is set
by its queue's kind alone, as the message is placed (`QueueKind.placed`). The services ask the kind and never
decide by kind themselves: what a send takes, the order of a receive's candidates, which of them a dead-letter
policy moves, where new messages go, when a receiver may start, which store holds the messages, and what the
queue's answers show.
"""

from __future__ import annotations

import dataclasses
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Protocol

from mnsd.ground import errors
from mnsd.ground.clock import ms
from mnsd.model import fifo
from mnsd.model.messages import Message, message_group_id
from mnsd.model.ports import MessageStore
from mnsd.model.queues import QUEUE_TYPES, Queue

# A group's counter: (group, count) -> the first of `count` consecutive positions of the group (`fifo.positions`).
Counter = Callable[[str, int], int]
# The group a FIFO queue puts a message without one in: a dead letter of a push given up, or of a standard queue.
DEAD_LETTER_GROUP = "dead-letters"
FIFO_START = (
    "A receiver of a FIFO queue starts when it is created: a StartTime before then would put the messages sent "
    "earlier after those sent since in their groups."
)


class Sent(Protocol):
    """A message as a sender gives it (`mnsd.model.inputs.MessageInput`): what a kind checks of it."""

    @property
    def message_group_id(self) -> str: ...

    @property
    def delay_seconds(self) -> int | None: ...

    @property
    def priority_given(self) -> bool: ...


class QueueKind(ABC):
    """What differs between a standard queue and a FIFO queue."""

    name: str  # its QueueType, as the queue's attributes show it
    fifo: bool  # whether its messages keep their group's order
    # Whether one claim's messages may be handed to several receives (single receives the wait tier coalesced:
    # `MessageService.receive_each`): not a FIFO group's run, which goes to one receive.
    shares_claims: bool

    @abstractmethod
    def check_sent(self, message: Sent) -> None:
        """Refuse (InvalidArgument) a message the queue does not take."""

    @abstractmethod
    def candidates(self, scanned: list[Message]) -> list[Message]:
        """A receive's candidates, in the order they are to be claimed, from a store's scan of the Active ones."""

    @abstractmethod
    def dead_letter_split(
        self, candidates: list[Message], max_receive_count: int
    ) -> tuple[list[list[Message]], list[Message]]:
        """Under a dead-letter policy: (the messages to move, each list in its order; what may be claimed once they
        moved, or with nothing to move). None spent: ([], the candidates)."""

    @abstractmethod
    def placed(self, messages: list[Message], counter: Counter) -> list[Message]:
        """New messages of the queue (built by `Message.enqueued` or `Message.moved`) at their places in it."""

    @abstractmethod
    def copied(self, message: Message, queue_id: str, message_id: str) -> Message:
        """A receiver's copy of a message of its queue, before it is placed: never received, with the message's
        content, enqueue time and end of retention, receivable when the message first was."""

    @abstractmethod
    def receiver_start(self, start: int, now: float) -> bool:
        """Whether a receiver given StartTime `start` (Unix s), created at `now`, is to get copies of the messages
        enqueued from then to its creation; InvalidArgument if the kind refuses that start."""

    @abstractmethod
    def chosen_store(self, standard: MessageStore, fifo: MessageStore) -> MessageStore:
        """Which of the two stores holds the queue's messages (and its receivers')."""

    @abstractmethod
    def held_groups(self, count: Callable[[], int]) -> int | None:
        """The queue's groups in flight, as its attributes show them (`count()` counts them); None: not shown."""

    @abstractmethod
    def group(self, given: str, default: str) -> str:
        """The MessageGroupId of a message the service sends on (a push to a queue): the one given, else `default`
        where the queue needs one."""


class StandardKind(QueueKind):
    """A standard queue (QueueType `normal`): messages taken by priority, then at random; each moved on its own."""

    name = QUEUE_TYPES[0]
    fifo = False
    shares_claims = True

    def check_sent(self, message: Sent) -> None:
        return None

    def candidates(self, scanned: list[Message]) -> list[Message]:
        return sorted(scanned, key=lambda m: (m.priority, random.random()))

    def dead_letter_split(
        self, candidates: list[Message], max_receive_count: int
    ) -> tuple[list[list[Message]], list[Message]]:
        moves = [[m] for m in candidates if fifo.spent(m, max_receive_count)]
        if not moves:
            return [], candidates
        return moves, [m for m in candidates if not fifo.spent(m, max_receive_count)]

    def placed(self, messages: list[Message], counter: Counter) -> list[Message]:
        return [dataclasses.replace(m, fifo=False) if m.fifo else m for m in messages]

    def copied(self, message: Message, queue_id: str, message_id: str) -> Message:
        # (a standard message's place in queue order is when it first became receivable: its delay)
        return Message.enqueued(
            queue_id, message_id, message.enqueue_time, message.position, message.expires_at, message.content
        )

    def receiver_start(self, start: int, now: float) -> bool:
        return start * 1000 < ms(now)

    def chosen_store(self, standard: MessageStore, fifo: MessageStore) -> MessageStore:
        return standard

    def held_groups(self, count: Callable[[], int]) -> int | None:
        return None

    def group(self, given: str, default: str) -> str:
        return given


class FifoKind(QueueKind):
    """A FIFO queue (QueueType `fifo`): each group's messages in send order, one run at a time (`mnsd.model.fifo`)."""

    name = QUEUE_TYPES[1]
    fifo = True
    shares_claims = False

    def check_sent(self, message: Sent) -> None:
        """With a valid MessageGroupId, without its own delay or priority."""
        if not message.message_group_id:
            raise errors.InvalidArgument("A message sent to a fifo queue needs a MessageGroupId.")
        if message.delay_seconds is not None:
            raise errors.InvalidArgument("A fifo queue takes no DelaySeconds per message (the queue's applies).")
        if message.priority_given:
            raise errors.InvalidArgument("A fifo queue takes no Priority: its messages keep their send order.")
        message_group_id(message.message_group_id)

    def candidates(self, scanned: list[Message]) -> list[Message]:
        return scanned  # its groups' runs, in order

    def dead_letter_split(
        self, candidates: list[Message], max_receive_count: int
    ) -> tuple[list[list[Message]], list[Message]]:
        """A run's spent head moves, in order, and its group waits for a later receive; another run is cut before
        its first spent message (`fifo.dead_letter_split`)."""
        if not any(fifo.spent(m, max_receive_count) for m in candidates):
            return [], candidates
        splits = [fifo.dead_letter_split(run, max_receive_count) for run in fifo.runs(candidates)]
        return [moved for moved, _ in splits if moved], [message for _, kept in splits for message in kept]

    def placed(self, messages: list[Message], counter: Counter) -> list[Message]:
        """Each message in its group (a message without one in `DEAD_LETTER_GROUP`), at the next places of the
        group's counter, in the order given."""
        groups = [m.message_group_id or DEAD_LETTER_GROUP for m in messages]
        return [
            dataclasses.replace(m, message_group_id=group, position=position, fifo=True)
            for m, group, position in zip(messages, groups, fifo.positions(groups, counter), strict=True)
        ]

    def copied(self, message: Message, queue_id: str, message_id: str) -> Message:
        # (its receivers start when created: the message was just sent, receivable at its NextVisibleTime)
        return Message.enqueued(
            queue_id, message_id, message.enqueue_time, message.visible_at, message.expires_at, message.content
        )

    def receiver_start(self, start: int, now: float) -> bool:
        if start < int(now):
            raise errors.InvalidArgument(FIFO_START)
        return False

    def chosen_store(self, standard: MessageStore, fifo: MessageStore) -> MessageStore:
        return fifo

    def held_groups(self, count: Callable[[], int]) -> int | None:
        return count()

    def group(self, given: str, default: str) -> str:
        return given or default


STANDARD = StandardKind()
FIFO = FifoKind()
KINDS = {kind.name: kind for kind in (STANDARD, FIFO)}


def kind_of(queue: Queue) -> QueueKind:
    """A queue's kind, from its QueueType."""
    return KINDS[queue.attributes.queue_type]
