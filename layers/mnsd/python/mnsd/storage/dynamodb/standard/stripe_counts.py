"""A queue's counts on the message table, bounded whatever its size: each stripe's leases (or a FIFO queue's group
partition's) sampled, exactly up to two pages per range and estimated beyond from the density of what was read.

A stripe that keeps the ready index is counted from the index (small items), its ready range (`w <= now`) and its
later one apart; any other partition from the table, whole leases in queue order (`plain_sample`). A pack (`packs`)
counts as its entries (read whole from the table: its index item holds its place only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mnsd.model.messages import MessageState
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.dynamodb.items.layout import Item, enqueued_at, state_of, stripe_partition
from mnsd.storage.dynamodb.items.leases import IndexEntry, LeaseItem, place_of, read
from mnsd.storage.dynamodb.items.message_table import MessageTable
from mnsd.storage.dynamodb.items.packs import leases_of
from mnsd.storage.dynamodb.placement.placement import Spread
from mnsd.storage.dynamodb.standard.ready_index import IndexUnavailable, ReadyIndex, due_after, due_by

# Index items a count reads per state range, shared by the stripes (each reads at least the minimum).
COUNT_ITEMS = 1000
MIN_COUNT_ITEMS = 64
# Leases a count reads from the table per partition the index does not cover (whole leases, not index items).
PLAIN_COUNT_ITEMS = 250


@dataclass(frozen=True)
class Sample:
    """What a count read of a range of leases: their states (estimated beyond what it read), and the oldest enqueue
    time of the Active and Inactive ones it read."""

    states: dict[MessageState, float]
    oldest: int | None


def plain_sample(table: MessageTable, partition: str, now_ms: int, limit: int | None = None) -> Sample:
    """The states of the leases of a partition read from the table: exact up to `2 x limit` leases (default
    `PLAIN_COUNT_ITEMS`); else estimated from its first and last `limit` in queue order (`_tally`): how many between
    by the density of their send times (the first in queue order were mostly sent first, the last last, whatever
    their delays and priorities), in the proportions of the states read."""
    limit = PLAIN_COUNT_ITEMS if limit is None else limit
    head, more = table.lease_page(partition, limit)
    tail = [] if more is None else table.lease_page(partition, limit, forward=False)[0]
    head, tail = leases_of(head), leases_of(tail)
    return Sample(_tally(head, tail, now_ms, lambda item: read(item, LeaseItem.e)), _oldest(head + tail, now_ms))


def backlog_of(samples: list[Sample]) -> Backlog:
    """The counts the samples add up to, and the oldest enqueue time they read."""
    found = dict.fromkeys(MessageState, 0.0)
    for sample in samples:
        for state, n in sample.states.items():
            found[state] += n
    active, inactive, delayed = (
        round(found[s]) for s in (MessageState.ACTIVE, MessageState.INACTIVE, MessageState.DELAYED)
    )
    return Backlog(QueueCounts(active, inactive, delayed), oldest_of(samples))


def oldest_of(samples: list[Sample]) -> int | None:
    return min((s.oldest for s in samples if s.oldest is not None), default=None)


class StripeCounts:
    def __init__(self, table: MessageTable, index: ReadyIndex) -> None:
        self.table = table
        self.index = index

    def backlog(self, queue_id: str, now_ms: int, spread: Spread) -> Backlog:
        """Active / Inactive / Delayed messages: exact up to `2 x COUNT_ITEMS` leases per state range (Active
        ones; the others) and stripe count, estimated beyond; bounded whatever the queue's size: at most
        `4 x max(COUNT_ITEMS, stripes x MIN_COUNT_ITEMS)` small index items read in `4 x stripes` Queries, and
        for each stripe the index does not cover `2 x PLAIN_COUNT_ITEMS` leases in 2 Queries. And the oldest
        enqueue time among the Active and Inactive leases they read: exact where they are, else of the leases read
        (a range's first page in `w` order holds its longest receivable)."""
        samples: list[Sample] = []
        limit = max(MIN_COUNT_ITEMS, COUNT_ITEMS // spread.stripes)
        for stripe in range(spread.stripes):
            partition = stripe_partition(queue_id, stripe)
            try:
                if not spread.reads_index(stripe):
                    raise IndexUnavailable()
                samples += [self._count_range(partition, after, now_ms, limit) for after in (False, True)]
            except IndexUnavailable:
                samples.append(plain_sample(self.table, partition, now_ms, PLAIN_COUNT_ITEMS))
        return backlog_of(samples)

    def _count_range(self, partition: str, after: bool, now_ms: int, limit: int) -> Sample:
        """The states of the leases of one indexed stripe before (`w <= now`) or after `now`: exact when the
        range holds at most `2 x limit` leases; else estimated from its first and last `limit` (`_tally`)."""
        condition = (due_after if after else due_by)(now_ms)
        head, more = self.index.page(partition, condition, limit)
        tail = [] if more is None else self.index.page(partition, condition, limit, forward=False)[0]
        head, tail = leases_of(self.table.whole(head)[0]), leases_of(self.table.whole(tail)[0])
        return Sample(_tally(head, tail, now_ms, lambda item: read(item, IndexEntry.w)), _oldest(head + tail, now_ms))


def _oldest(items: list[Item], now_ms: int) -> int | None:
    """The oldest enqueue time of the Active and Inactive leases among `items` (`layout.enqueued_at`)."""
    times = [
        enqueued_at(item) for item in items if state_of(item, now_ms) in (MessageState.ACTIVE, MessageState.INACTIVE)
    ]
    return min((t for t in times if t is not None), default=None)


def _tally(head: list[Item], tail: list[Item], now_ms: int, key: Callable[[Item], int]) -> dict[MessageState, float]:
    """The states of the leases of a range read as its first page (`head`) and, when more followed, its last
    (`tail`, in reverse): exact when the pages meet; else the leases between are estimated from the density of
    `key` in both pages (`_between`), in the proportions of the states read."""
    found = dict.fromkeys(MessageState, 0.0)
    seen = {place_of(item)[1] for item in head}
    tail = [item for item in tail if place_of(item)[1] not in seen]
    for item in head + tail:
        found[state_of(item, now_ms)] += 1
    if not tail:
        return found
    unread = _between(sorted(key(i) for i in head), sorted(key(i) for i in tail))
    read = len(head) + len(tail)
    return {state: n * (1 + unread / read) for state, n in found.items()}


def _between(head: list[int], tail: list[int]) -> float:
    """The leases not read between a range's first page (`v` of its leases, ascending) and its last, estimated
    from the density of both pages. Leases may share a `v` (a batch sent in one millisecond), and a page may end
    inside such a group: each page's density counts only the leases strictly inside its span, and the closed
    span between the pages holds one group more than its length times the density (the average group size)."""
    low, high = head[-1], tail[0]
    if high <= low:  # the two pages meet: nothing between
        return 0.0
    inside = sum(1 for v in head if v < low) + sum(1 for v in tail if v > high)
    span = (low - head[0]) + (tail[-1] - high)
    if span <= 0:  # each page holds one time only: no density to go by
        return 0.0
    density = inside / span
    group = (len(head) + len(tail)) / (len(set(head)) + len(set(tail)))
    read_at_ends = sum(1 for v in head if v == low) + sum(1 for v in tail if v == high)
    return max(0.0, density * (high - low) + group - read_at_ends)
