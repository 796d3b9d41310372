"""What a container remembers of the stripes its receives read, to choose where the next receive reads:

- per stripe, the span of ready `v` it saw there (`_Span`): on a stripe deeper than a page, a receive reads from a
  random point of that span (`window`), so concurrent consumers read different pages instead of all racing for the
  same head;
- per queue that sends over fewer stripes than it has (`Spread.width`), when it last read the others too (a sweep,
  `_Sweep`): `order` gives the stripes a receive reads, in turn;
- per stripe, the held leases its reads of the head met and when first: one met again seconds later under the same
  claim is held long (`held_long`), and the receive moves it out of the way;
- per stripe whose head a receive read as held leases only (claimed with `w` left in place, `layout.held_version`),
  where they end and when the first of them is receivable again (`_HeldHead`): till then, a receive reads the
  stripe's head from there (`held_below`). Every lease written since has a `w` no earlier than its writer's clock,
  so none is below (clocks within `_SKEW_MS`); one that was is held till then at least.

Both are hints, bounded in size (`_SPANS` entries, then forgotten at once): a container that forgets reads from the
heads and sweeps, as a new one does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mnsd.model.messages import Message
from mnsd.storage.dynamodb.items.layout import Item
from mnsd.storage.dynamodb.items.leases import IndexEntry, place_of, read
from mnsd.storage.dynamodb.placement.placement import Spread

# Receives read a stripe at its head in this share of reads, from its newest ready lease down in as many, and
# from a random point between in the rest, once it holds more than a page (`StripeSpans.window`).
_HEAD_SHARE = 0.125
_SPANS = 10_000  # stripes whose span of ready `v` a container remembers (and queues whose sweeps)
# A receive of a queue that sends over fewer stripes than it has (`Spread.width`) reads the others too at most
# this often per container (a sweep), and while a sweep found messages there, for this long after.
_SWEEP_MS = 5_000
_WIDE_MS = 60_000
# A stripe's held head is read past from its end at most this long (`held_below`), and its end is taken no later than
# this before the time it was read (the containers' clocks may differ by as much).
_HELD_HEAD_MS = 5_000
_SKEW_MS = 50
# A held lease a container's reads of a stripe's head met under one claim this long apart is held long (`held_long`).
_HELD_LONG_MS = 5_000
_HELD_SEEN = 1_000  # held leases a container remembers per stripe


@dataclass
class _Sweep:
    """When a container last read a queue's stripes beyond its send width, and until when it reads them all."""

    last: int
    wide_until: int = 0


@dataclass
class _Span:
    """What a container saw of the ready leases of one stripe: `v` of the oldest and of the newest, and whether
    the last read from its head left more unread (a stripe deeper than a page); read from the table, the
    priority they all had (-1: several)."""

    low: int
    high: int
    deep: bool
    priority: int = -1


@dataclass(frozen=True)
class _HeldHead:
    """A stripe's head read as held leases only: below `end` (its `w`), none is receivable before `until`."""

    end: int
    until: int


class StripeSpans:
    def __init__(self) -> None:
        self._spans: dict[str, _Span] = {}
        self._sweeps: dict[str, _Sweep] = {}
        self._held: dict[str, _HeldHead] = {}
        self._seen: dict[str, dict[tuple[str, int], int]] = {}  # partition -> (sk, r) held -> when first read

    def held_long(self, partition: str, held: list[Item], now_ms: int) -> list[Item]:
        """Of the held leases a read of a stripe's head met, those met under the same claim (`r`) at least
        `_HELD_LONG_MS` before: the ones held long, not deleted soon after their receive (remembered: those met now)."""
        if len(self._seen) >= _SPANS and partition not in self._seen:
            self._seen.clear()
        seen = self._seen.setdefault(partition, {})
        keys = [(place_of(item)[1], read(item, IndexEntry.r)) for item in held]
        for key in keys:
            seen.setdefault(key, now_ms)
        for key in list(seen)[: max(0, len(seen) - _HELD_SEEN)]:  # (the first met go first)
            del seen[key]
        return [item for item, key in zip(held, keys, strict=True) if now_ms - seen.get(key, now_ms) >= _HELD_LONG_MS]

    # --- past a stripe's held head ----------------------------------------------------------------

    def held_below(self, partition: str, now_ms: int) -> tuple[int, int] | None:
        """(end, until) of the held head last read in a stripe, while none of it can be receivable (else None)."""
        head = self._held.get(partition)
        if head is None or now_ms >= head.until:
            self._held.pop(partition, None)
            return None
        return head.end, head.until

    def held_head(self, partition: str, end: int | None, until: int | None, now_ms: int) -> None:
        """A read of a stripe's head found held leases up to `end` (its `w`; None: none, or not only held ones
        from where it started), the first receivable again at `until`."""
        if end is None or until is None:
            self._held.pop(partition, None)
            return
        if len(self._held) >= _SPANS and partition not in self._held:
            self._held.clear()
        self._held[partition] = _HeldHead(min(end, now_ms - _SKEW_MS), min(until, now_ms + _HELD_HEAD_MS))

    # --- where in a stripe ----------------------------------------------------------------------

    def window(self, partition: str, now_ms: int) -> int | None:
        """Where this receive reads a stripe from: None for its head; else a point of the span of ready `v` seen
        there, the newest (`now`) in `_HEAD_SHARE` of the reads. Consumers of a stripe deeper than a page then
        read different pages instead of all racing for the same head, and the head is still read often."""
        span = self._spans.get(partition)
        if span is None or not span.deep:
            return None
        draw = random.random()
        if draw < _HEAD_SHARE:
            return None
        if draw < 2 * _HEAD_SHARE:
            return now_ms
        return random.randint(span.low, max(span.low, span.high))

    def plain_priority(self, partition: str) -> int:
        """The one priority of the ready leases last read from the table in a stripe (-1: several, or unknown)."""
        span = self._spans.get(partition)
        return -1 if span is None else span.priority

    def saw(self, partition: str, ready: list[Message], head: int | None, deep: bool | None) -> None:
        """Remember the span of ready `v` read in a stripe (`head`: its oldest, when the read reached it; `deep`:
        whether a read from the head left more unread, None if the read did not start there)."""
        if not ready:
            self._spans.pop(partition, None)
            return
        newest = max(m.visible_at for m in ready)
        span = self._spans.get(partition)
        if span is None:
            if len(self._spans) >= _SPANS:
                self._spans.clear()
            span = self._spans[partition] = _Span(newest if head is None else head, newest, bool(deep))
        if head is not None:  # (a hint only: a read from a point below the head falls back to the head)
            span.low = head
        if deep is not None:
            span.deep = deep
        span.high = max(span.high, newest)

    def saw_plain(self, partition: str, ready: list[Message], deep: bool | None) -> None:
        """`saw` for a read from the table: the span kept only while what it read has one priority."""
        head = min((m.visible_at for m in ready), default=None) if deep is not None else None
        self.saw(partition, ready, head, deep)
        span = self._spans.get(partition)
        if span is not None:
            priorities = {m.priority for m in ready}
            span.priority = priorities.pop() if len(priorities) == 1 else -1

    # --- which stripes --------------------------------------------------------------------------

    def order(self, queue_id: str, spread: Spread, now_ms: int) -> tuple[list[int], bool]:
        """The stripes a receive reads, in turn, and whether it sweeps those beyond the send width: every stripe
        from a random one; or, when the queue sends over fewer (`Spread.width`), those from a random one of them,
        after the others in a sweep (due every `_SWEEP_MS`, and at each receive while sweeps find messages there:
        the others first, so a sweep that finds none there has read them all)."""

        def turn(low: int, high: int) -> list[int]:
            first = random.randrange(high - low)
            return [low + (first + i) % (high - low) for i in range(high - low)]

        width = spread.width or spread.stripes
        if width >= spread.stripes:
            return turn(0, spread.stripes), False
        sweep = self._sweeps.get(queue_id)
        if sweep is None or now_ms < sweep.wide_until or now_ms - sweep.last >= _SWEEP_MS:
            return turn(width, spread.stripes) + turn(0, width), True
        return turn(0, width), False

    def swept(self, queue_id: str, now_ms: int, found_beyond: bool) -> None:
        """A sweep of the queue's stripes beyond its send width done now; `found_beyond`: it found messages there."""
        if len(self._sweeps) >= _SPANS and queue_id not in self._sweeps:
            self._sweeps.clear()
        self._sweeps[queue_id] = _Sweep(now_ms, now_ms + _WIDE_MS if found_beyond else 0)
