"""How many messages one BatchSendMessage may carry: at most 16, and at most 64 KB of message bodies in all (MNS
refuses more with `InvalidArgument: The total size of messages should not be larger than 65536 bytes`). Messages
are cut into runs in their order, so a FIFO group's messages keep theirs across the cut when the runs are sent one
after another; a message over the size alone is sent alone (the queue's MaximumMessageSize is the service's to
check)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from mnsclient.messages import Message, body_bytes

T = TypeVar("T")
MOST_MESSAGES = 16
MOST_BODY_BYTES = 65536


def cut(messages: Sequence[T], size: Callable[[T], int]) -> list[list[T]]:
    """`messages` in their order, in runs of at most `MOST_MESSAGES` whose `size`s add up to at most
    `MOST_BODY_BYTES`; one larger than that alone is a run of its own."""
    runs: list[list[T]] = []
    run: list[T] = []
    total = 0
    for message in messages:
        bytes_ = size(message)
        if run and (len(run) == MOST_MESSAGES or total + bytes_ > MOST_BODY_BYTES):
            runs.append(run)
            run, total = [], 0
        run.append(message)
        total += bytes_
    if run:
        runs.append(run)
    return runs


def send_batches(messages: list[Message]) -> list[list[Message]]:
    """`messages` in their order, cut into the BatchSendMessage requests the service takes."""
    return cut(messages, lambda m: body_bytes(m.body))
