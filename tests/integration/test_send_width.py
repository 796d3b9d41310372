"""A queue that grew and is quiet again gathers its messages in few stripes, where receives find them without
reading every stripe; stripes beyond are swept now and then; a busy queue sends over all its stripes again."""

from __future__ import annotations

import collections
import re

import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import QueueAttributeChanges
from mnsd.storage.dynamodb.items.layout import stripe_of
from mnsd.storage.dynamodb.placement.placement import WIDTH_HALVING_MS, WIDTH_LAG_MS
from tests.integration.placements import grow, placement
from tests.integration.receiving import receive_all
from tests.support.wrappers import Wrapping

ACCOUNT = "1000000000000001"
STRIPES = 8


class PartitionLog(Wrapping):
    """A client that records the partition of each Query."""

    def __init__(self, client) -> None:
        super().__init__(client)
        self.partitions: list[str] = []

    def query(self, **kwargs):
        names, values = kwargs.get("ExpressionAttributeNames", {}), kwargs["ExpressionAttributeValues"]
        for name, placeholder in re.findall(r"([#\w]+)\s*=\s*(:\w+)", kwargs["KeyConditionExpression"]):
            if names.get(name, name) == "pk":  # (the key condition's equality on the partition key)
                self.partitions.append(values[placeholder]["S"])
        return self.inner.query(**kwargs)


def send(service, count, delay=None):
    sent = []
    for start in range(0, count, 16):
        batch = [MessageInput(f"m{start + i}", delay, 8) for i in range(min(16, count - start))]
        sent += service.send(ACCOUNT, "q", batch)
    assert all(r.error is None for r in sent)
    return sent


def ms(clock) -> int:
    return int(clock.now() * 1000)


@pytest.fixture
def grown(make, clock):
    # One lease per message, each batch spread over the send width (a packed batch is one item on one stripe).
    service = make(max_queue_stripes=STRIPES, packed_batches=False)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="30"))
    grow(service, STRIPES)
    return service


def test_the_send_width_halves_every_ten_minutes_and_receives_lag_behind(grown, clock):
    queue, seen = grown.get_queue(ACCOUNT, "q"), placement(grown)
    now = ms(clock)
    assert [seen.send_width(now + k * WIDTH_HALVING_MS) for k in range(5)] == [8, 4, 2, 1, 1]
    assert seen.read_spread(now + WIDTH_HALVING_MS).width == STRIPES  # (a minute behind the senders)
    assert seen.read_spread(now + WIDTH_HALVING_MS + WIDTH_LAG_MS).width == 4
    widened = grown.messages.placer.placements.widen(queue.queue_id, seen, now + 3 * WIDTH_HALVING_MS)
    assert widened.send_width(now + 3 * WIDTH_HALVING_MS) == 8


def test_a_quiet_queue_gathers_its_messages_and_receives_read_few_stripes(grown, clock):
    early = send(grown, 128)
    assert {stripe_of(r.message.message_id) for r in early} == set(range(STRIPES))
    first = grown.receive(ACCOUNT, "q", 16, 0)  # (its container's first receive sweeps every stripe)
    assert len(first) == 16
    delayed = send(grown, 16, delay=3 * WIDTH_HALVING_MS // 1000 + 30)  # due once the queue is narrow
    got = receive_all(grown)
    assert len(got) == 112
    grown.batch_delete(ACCOUNT, "q", [g.receipt_handle for g in got[:16]])
    clock.advance(3 * WIDTH_HALVING_MS / 1000 + 60)  # three halvings: one stripe; receives a minute later
    late = send(grown, 32)
    assert {stripe_of(r.message.message_id) for r in late} == {0}
    log = PartitionLog(grown.messages.client)
    grown.messages.client = log
    # A sweep (due: the last one is long past) reads the stripes beyond the width first: the delayed messages
    # sent over all 8 stripes are there, and the 96 received earlier came back in all of them too.
    swept = grown.receive(ACCOUNT, "q", 16, 0)
    assert len(swept) == 16 and any(stripe_of(g.message.message_id) > 0 for g in swept)
    assert len(set(log.partitions)) > 1
    # While sweeps find messages beyond the width, receives read every stripe: all are taken, none twice.
    taken = [*swept, *receive_all(grown)]
    expected = {r.message.message_id for r in late + delayed} | {g.message.message_id for g in first + got[16:]}
    assert sorted(g.message.message_id for g in taken) == sorted(expected)
    for start in range(0, len(taken), 16):
        grown.batch_delete(ACCOUNT, "q", [g.receipt_handle for g in taken[start : start + 16]])
    # Once a sweep found nothing beyond the width, receives read stripe 0 alone between sweeps.
    clock.advance(61)  # (past the wide spell)
    with pytest.raises(errors.MessageNotExist):
        grown.receive(ACCOUNT, "q", 16, 0)  # a sweep: all 8, nothing found
    send(grown, 1)
    log.partitions.clear()
    assert len(grown.receive(ACCOUNT, "q", 16, 0)) == 1
    queue = grown.get_queue(ACCOUNT, "q")
    assert set(log.partitions) == {queue.queue_id}


def test_a_container_sending_faster_than_the_width_allows_widens_the_queue(grown, clock):
    clock.advance(3 * WIDTH_HALVING_MS / 1000)
    assert placement(grown).send_width(ms(clock)) == 1
    sent = send(
        grown, 256
    )  # a burst: 256 at once, beyond what one stripe takes (`mnsd.storage.dynamodb.placement.stripes`)
    seen = placement(grown)
    assert seen.widened_at == ms(clock) and seen.send_width(ms(clock)) == STRIPES
    spread = collections.Counter(stripe_of(r.message.message_id) for r in sent)
    assert set(spread) == set(range(STRIPES)) and spread[0] > 256 // STRIPES  # (the first batches went to 0)
