"""MNS response elements encoded as the SDKs read them, and a stored message to encode."""

from __future__ import annotations

from mnsd.model.messages import Message
from mnsd.wire.codec import Node, encode

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'


NS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


def xml(node: Node) -> str:
    return encode(node).decode("utf-8")


def stored(**changes) -> Message:
    fields = dict(
        queue_id="qid",
        message_id="M1",
        priority=8,
        position=1000,
        visible_at=31000,
        version=1,
        dequeue_count=1,
        enqueue_time=1000,
        first_dequeue_time=2000,
        expires_at=99,
        body_md5="MD5",
        body="a<b",
    )
    return Message(**{**fields, **changes})
