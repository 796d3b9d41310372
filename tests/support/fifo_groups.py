"""FIFO messages built by hand for the rules of a queue's groups (`mnsd.model.fifo`), no engine involved."""

from __future__ import annotations

from mnsd.model.messages import Message

NOW = 1_700_000_000_000


def message(n: int, group: str = "a", visible_at: int = NOW, dequeue_count: int = 0, expires_s: int = 0) -> Message:
    return Message(
        queue_id="q1",
        message_id=f"M{n}",
        priority=8,
        position=NOW + n,
        visible_at=visible_at,
        version=0,
        dequeue_count=dequeue_count,
        enqueue_time=NOW,
        first_dequeue_time=NOW,
        expires_at=expires_s or NOW // 1000 + 3600,
        body_md5="",
        message_group_id=group,
        fifo=True,
    )
