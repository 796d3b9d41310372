"""FIFO messages as the storage contract builds them: numbered by the engine, sent, offered by a scan and claimed."""

from __future__ import annotations

from collections import defaultdict

from mnsd.model.messages import Content, Message, body_md5
from mnsd.model.ports import ReadyScan
from mnsd.storage import Storage
from tests.support.stored import NOW, RETENTION

VISIBLE = NOW + 60_000


def fifo_message(storage: Storage, group: str, n: int, queue_id: str = "q1", delay_ms: int = 0) -> Message:
    """A new FIFO message of `group`, numbered by the engine (`sequence`)."""
    position = storage.fifo_messages.sequence(queue_id, group, 1, NOW)
    text = f"{group}-{n}"
    content = Content(body_md5(text), text, 8, message_group_id=group, fifo=True)
    return Message.enqueued(queue_id, f"M{n:05d}", NOW, NOW + delay_ms, NOW // 1000 + RETENTION, content, position)


def send(storage: Storage, *groups: str, queue_id: str = "q1") -> list[Message]:
    """One message per group given, in that order (numbered by their order)."""
    messages = [fifo_message(storage, group, n, queue_id) for n, group in enumerate(groups)]
    assert storage.fifo_messages.put(messages) == set()
    return messages


def runs(storage: Storage, now: int, wanted: int = 100, queue_id: str = "q1") -> dict[str, list[str]]:
    """What a FIFO scan offers, by group: message ids in the order given."""
    found: dict[str, list[str]] = defaultdict(list)
    for message in storage.fifo_messages.peek_ready(queue_id, now, wanted):
        found[message.message_group_id].append(message.message_id)
    return dict(found)


def offer(storage: Storage, now: int, wanted: int = 100) -> ReadyScan:
    """A scan of the queue, as a receive makes it: its messages are claimed through it (`ReadyScan.claim`)."""
    return storage.fifo_messages.scan_ready("q1", now, wanted)


def take(storage: Storage, now: int, count: int, visible_at: int) -> list[Message]:
    """What a receive of `count` at `now` claims: from what its scan offered."""
    offered = offer(storage, now)
    return offered.claim(offered.messages, count, now, visible_at)
