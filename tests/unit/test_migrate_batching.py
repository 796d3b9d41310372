"""How the migration tool cuts what it sends into BatchSendMessage requests: at most 16 messages and 64 KB of bodies
each, as the service counts them, in the order received; a message too large to share a request sent alone."""

from __future__ import annotations

import base64
import random
import threading

from migrate.batching import MOST_BODY_BYTES, MOST_MESSAGES, cut, send_batches
from migrate.journal import QueueJournal
from migrate.moving import Options, QueueMove, QueueStats
from mnsclient.errors import ServiceError
from mnsclient.messages import Message, body_bytes
from mnsd.ground.errors import InvalidArgument
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


class Source:
    """A source queue: receives hand back every message not deleted (up to the count asked); `loses_deletes`: a
    delete is answered but not done (the tool stopped, or the handle expired, before it took)."""

    def __init__(self, messages: list[Message], loses_deletes: bool = False) -> None:
        self.waiting = list(messages)
        self.loses_deletes = loses_deletes

    def counts(self, queue: str) -> tuple[int, int, int]:
        return len(self.waiting), 0, 0

    def receive(self, queue: str, count: int, wait_seconds: int) -> list[Message]:
        return self.waiting[:count]

    def delete(self, queue: str, handles: list[str]) -> list[str]:
        if not self.loses_deletes:
            self.waiting = [m for m in self.waiting if m.receipt_handle not in handles]
        return []


class Target:
    """A target queue refusing a batch as the service does (`message_batch`), and refusing every send after
    `room` messages as a queue deleted meanwhile would."""

    def __init__(self, room: int = 1_000) -> None:
        self.requests: list[list[Message]] = []
        self.room = room

    def send(self, queue: str, messages: list[Message]) -> list[ServiceError | None]:
        try:
            message_batch([MessageRequest(body=m.body, priority=str(m.priority)) for m in messages])
        except InvalidArgument as error:
            raise ServiceError(400, "InvalidArgument", str(error)) from None
        if sum(len(r) for r in self.requests) + len(messages) > self.room:
            raise ServiceError(404, "QueueNotExist", "The queue name you provided is not exist.")
        self.requests.append(messages)
        return [None] * len(messages)

    @property
    def stored(self) -> list[Message]:
        return [m for request in self.requests for m in request]


def drain(source: Source, target: Target, journal: QueueJournal) -> QueueStats:
    move = QueueMove("q", source, target, journal, Options(retry_seconds=0, settle_seconds=0), threading.Event())  # type: ignore[arg-type]
    return move.run()


def large(count: int) -> list[Message]:
    rng = random.Random(count)
    return [
        received(n, base64.b64encode(rng.randbytes(3 * rng.randint(8192, 61440) // 4)).decode()) for n in range(count)
    ]


def test_a_received_batch_of_large_messages_moves_whole_each_request_within_the_limits(tmp_path):
    messages = large(16)
    source, target, journal = Source(messages), Target(), QueueJournal(tmp_path / "q.copied")
    stats = drain(source, target, journal)
    assert (stats.error, stats.moved, stats.left_on_source) == ("", 16, 0)
    assert target.stored == messages and len(target.requests) > 1  # in the order received, over several requests
    assert all(m.message_id in journal for m in messages) and source.waiting == []


def test_copies_acknowledged_before_a_later_request_failed_are_journaled_and_never_sent_again(tmp_path):
    messages = large(16)
    journal = QueueJournal(tmp_path / "q.copied")
    first = Target(room=len(send_batches(messages)[0]))  # takes the first request, then its queue is gone
    stats = drain(Source(messages, loses_deletes=True), first, journal)
    assert stats.error.startswith("queue q: the target answered QueueNotExist")
    assert stats.moved == len(first.stored) > 0
    again = Target()
    stats = drain(Source(messages), again, QueueJournal(tmp_path / "q.copied"))  # the next run, the same journal
    assert (stats.error, stats.moved, stats.received_again) == ("", 16 - len(first.stored), len(first.stored))
    assert first.stored + again.stored == messages  # each message on the target once


def test_each_request_acknowledged_is_deleted_from_the_source_before_the_next_is_sent(tmp_path):
    messages = large(16)
    source, target = Source(messages), Target(room=len(send_batches(messages)[0]))
    stats = drain(source, target, QueueJournal(tmp_path / "q.copied"))
    assert stats.error.startswith("queue q: the target answered QueueNotExist")
    assert source.waiting == messages[len(target.stored) :]  # the copies the target has are gone from the source
