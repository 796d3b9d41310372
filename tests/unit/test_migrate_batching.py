"""How the migration tool cuts what it sends into BatchSendMessage requests: at most 16 messages and 64 KB of bodies
each, as the service counts them, in the order received; a message too large to share a request sent alone."""

from __future__ import annotations

import base64
import random

from migrate.batching import MOST_BODY_BYTES, MOST_MESSAGES, cut
from migrate.xmlapi import Message, body_bytes, send_batches
from mnsd.model.inputs import MAX_BATCH, MAX_BATCH_BYTES, MessageRequest, message_batch


def sizes_cut(sizes: list[int]) -> list[list[int]]:
    return cut(sizes, lambda size: size)


def test_the_limits_are_the_services():
    assert (MOST_MESSAGES, MOST_BODY_BYTES) == (MAX_BATCH, MAX_BATCH_BYTES) == (16, 65536)


def test_small_messages_are_cut_by_count():
    assert [len(run) for run in sizes_cut([100] * 40)] == [16, 16, 8]


def test_large_messages_are_cut_by_their_bodies_total_and_64_kb_exactly_fits():
    assert sizes_cut([32768, 32768, 1]) == [[32768, 32768], [1]]
    assert sizes_cut([32768, 32769]) == [[32768], [32769]]
    assert sizes_cut([30000] * 5) == [[30000, 30000], [30000, 30000], [30000]]


def test_a_message_too_large_to_share_is_sent_alone_between_its_neighbours():
    assert sizes_cut([10, 65536, 10, 10]) == [[10], [65536], [10, 10]]
    assert sizes_cut([70000]) == [[70000]]  # over the limit: the service says so, for this message alone
    assert sizes_cut([]) == []


def test_a_body_counts_its_utf8_bytes_as_written_in_the_request_never_fewer_than_the_service_counts():
    assert body_bytes("a" * 100) == 100
    assert body_bytes("订单") == 6
    encoded = base64.b64encode(bytes(range(256))).decode()
    assert body_bytes(encoded) == len(encoded)
    assert body_bytes("a<b&c>d") == len("a&lt;b&amp;c&gt;d")  # the service reads back 7 bytes


def received(n: int, body: str) -> Message:
    return Message(f"id-{n}", f"handle-{n}", body, priority=1 + n % 16, group=f"g{n % 3}")


def test_every_request_cut_from_received_messages_passes_the_services_own_check_and_none_is_cut_needlessly():
    rng = random.Random(7)
    kinds = [
        lambda k: base64.b64encode(rng.randbytes(3 * k // 4)).decode(),
        lambda k: "订单<&>" * max(1, k // 12),
        lambda k: "x" * k,
    ]
    messages = [
        received(n, rng.choice(kinds)(rng.choice([8, 900, 4100, 8192, 30000, 61440, 65536]))) for n in range(300)
    ]
    runs = send_batches(messages)
    assert [m for run in runs for m in run] == messages  # every message, once, in the order received
    for run in runs:
        message_batch([MessageRequest(body=m.body, priority=str(m.priority)) for m in run])  # raises if refused
    for run, following in zip(runs, runs[1:], strict=False):
        total = sum(body_bytes(m.body) for m in run)
        assert len(run) == MOST_MESSAGES or total + body_bytes(following[0].body) > MOST_BODY_BYTES
