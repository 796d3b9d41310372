"""A FIFO batch send and what a receive claims of it, on any engine (the FIFO packs' storage contract and layout)."""

from __future__ import annotations

from mnsd.model import fifo
from mnsd.model.messages import Content, Message, Property, body_md5
from mnsd.model.queues import QueueCounts
from mnsd.storage import Storage
from tests.support.fifo_stored import NOW, RETENTION, VISIBLE


def batch(storage: Storage, *groups: str, queue_id: str = "q1", at: int = NOW) -> list[Message]:
    """A batch send of one message per group given, in that order: ids from the store (given the groups, as a send
    gives them), places from each group's counter (`fifo.positions`), each with its own body and properties."""
    store = storage.fifo_messages
    ids = store.new_ids(queue_id, len(groups), at, list(groups))
    places = fifo.positions(list(groups), lambda group, count: store.sequence(queue_id, group, count, at))
    sent = []
    for n, (group, message_id, position) in enumerate(zip(groups, ids, places, strict=True)):
        body = f"{group}-{n}-" + "x" * n
        content = Content(body_md5(body), body, 8, (Property("n", str(n), "NUMBER"),), (), group, fifo=True)
        expires = at // 1000 + RETENTION
        sent.append(Message.enqueued(queue_id, message_id, at, at, expires, content, position))
    assert store.put(sent) == set()
    return sent


def take(storage: Storage, now: int, count: int = 16, visible_at: int = VISIBLE) -> list[Message]:
    scan = storage.fifo_messages.scan_ready("q1", now, count)
    claimed = scan.claim(scan.messages, count, now, visible_at)
    storage.fifo_messages.load_bodies(claimed)
    return claimed


def ids(messages: list[Message]) -> list[str]:
    return [m.message_id for m in messages]


def offered(storage: Storage, now: int) -> list[str]:
    return ids(storage.fifo_messages.peek_ready("q1", now, 100))


def counts(storage: Storage, now: int) -> QueueCounts:
    return storage.fifo_messages.counts("q1", now)


def delete(storage: Storage, messages: list[Message], now: int) -> list[bool]:
    return storage.fifo_messages.delete_many([(m.ref, m.version) for m in messages], now)
