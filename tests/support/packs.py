"""A batch send and what a receive claims of it, on any engine, and the message table's items (the packs' contract and layout)."""

from __future__ import annotations

from mnsd.ground.settings import Settings
from mnsd.model.messages import Content, Message, Property, body_md5
from mnsd.model.queues import QueueCounts
from mnsd.storage import Storage
from tests.support.stored import NOW, RETENTION

VISIBLE = NOW + 60_000


def batch(storage: Storage, n: int = 16, queue_id: str = "q1", delay_ms: int = 0, at: int = NOW) -> list[Message]:
    """A batch send of `n` messages (ids from the store, as a send's), each with its own body and properties."""
    ids = storage.messages.new_ids(queue_id, n, at)
    sent = []
    for number, message_id in enumerate(ids):
        body = f"body-{number}-" + "x" * number
        content = Content(body_md5(body), body, 8, user_properties=(Property("n", str(number), "NUMBER"),))
        sent.append(Message.enqueued(queue_id, message_id, at, at + delay_ms, at // 1000 + RETENTION, content))
    assert storage.messages.put(sent) == set()
    return sent


def receive(storage: Storage, now: int, count: int = 16, visible_at: int = VISIBLE, queue_id: str = "q1"):
    scan = storage.messages.scan_ready(queue_id, now, count)
    claimed = scan.claim(scan.messages, count, now, visible_at)
    storage.messages.load_bodies(claimed)
    return claimed


def counts(storage: Storage, now: int, queue_id: str = "q1") -> QueueCounts:
    return storage.messages.counts(queue_id, now)


def items(client) -> list[dict]:
    return client.scan(TableName=Settings().message_table)["Items"]
