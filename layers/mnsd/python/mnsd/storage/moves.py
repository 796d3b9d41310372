"""What a move (`MessageStore.move`: dead-lettering on receive, redrive) is in the operation log, on every engine."""

from __future__ import annotations

from mnsd.log.changes import MessageEvent
from mnsd.model.messages import DLQ_ORIGIN_MESSAGE_ID, Message


def move_event(target: Message) -> MessageEvent:
    """The source's event of a move: a dead letter (its target names the message it came from) or a redrive."""
    marked = any(p.name == DLQ_ORIGIN_MESSAGE_ID for p in target.system_properties)
    return MessageEvent.DEAD_LETTER if marked else MessageEvent.REDRIVE
