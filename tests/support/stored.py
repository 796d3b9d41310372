"""Messages as the storage contract builds them (standard queues), and what a scan shows ready."""

from __future__ import annotations

from mnsd.model.messages import Content, Message, body_md5
from mnsd.storage import Storage
from mnsd.storage.ids import new_message_id

NOW = 1_700_000_000_000  # ms


RETENTION = 3600  # s


def message(n: int, queue_id: str = "q1", priority: int = 8, delay_ms: int = 0, body: str | None = None) -> Message:
    text = body if body is not None else f"body-{n}"
    content = Content(body_md5(text), text, priority)
    return Message.enqueued(queue_id, f"M{n:05d}", NOW + n, NOW + n + delay_ms, (NOW + n) // 1000 + RETENTION, content)


def ready_ids(storage: Storage, now: int, wanted: int = 100, queue_id: str = "q1") -> list[str]:
    return [m.message_id for m in storage.messages.peek_ready(queue_id, now, wanted)]


def sent(enqueued: int, delay_ms: int = 0, queue_id: str = "q1", retention: int = RETENTION) -> Message:
    """A message as a send makes it at `enqueued` (its id made then, as `MessageStore.new_ids` makes ids)."""
    expires_at = enqueued // 1000 + retention
    content = Content(body_md5("x"), "x", 8)
    return Message.enqueued(queue_id, new_message_id(enqueued), enqueued, enqueued + delay_ms, expires_at, content)
