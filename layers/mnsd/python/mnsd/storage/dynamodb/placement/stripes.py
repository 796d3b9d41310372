"""How many stripes (partitions) a queue's messages spread over: grown with the load a container observes.

A queue starts with `Settings.queue_stripes` stripes. Growth follows first the send rate this container
observes, so that a queue grows before its partitions throttle. Each stripe has a budget of
`STRIPE_BUDGET` = 120 messages per second: a message costs its stripe's ready-index partition 4 writes of
1 KB or less over its life (put at send, delete + put when a claim moves `v`, delete at delete) and its
base partition 3, so a stripe at its budget uses about 480 of DynamoDB's 1,000 WCU/s per partition, room
for the uneven spread of randomly chosen stripes and for messages received again. When the messages sent
in the last second exceed `TOLERANCE x stripes x STRIPE_BUDGET` (the tolerance absorbs the unevenness of a
steady rate over single seconds: 100 messages/s in batches of 16 count up to 144 in some), or a burst of
`STRIPE_BUDGET` or more arrives within `BURST_SECONDS` (the rate is then extrapolated from the burst: a
stripe cannot wait a whole second to see one), the container asks at once for the next power of two of
`rate / STRIPE_BUDGET` stripes. A queue sending 100 messages/s keeps one stripe; 10,000/s asks for 128.
The rate is what this container sends: a queue whose producers spread over many containers (Lambda) is
seen in parts, and grows on the next signal.

Beside the rate, when the receives of this container lose too many
claims to other consumers (more than `LOST_PER_WON` failed conditional claims per claimed message over at
least `MIN_ATTEMPTS` claims within `WINDOW_SECONDS`, counting only receives that found a full page of
candidates: consumers racing for the last few messages of a thin queue are not helped by more partitions),
or when the database throttles a send or a claim, the
container asks for twice the stripes (at most `Settings.max_queue_stripes`, at most once per
`COOLDOWN_SECONDS` per queue). The queue's record takes it only if the count is still the one this container saw
(`queue_records.Placements`),
so containers that notice the same load at once double it once. The count never shrinks, but sends spread
only over the first `Placement.send_width` stripes: all of them for 10 minutes after the queue last needed them,
then half as many every 10 minutes, so a queue that is quiet again gathers its messages in few stripes and its
receives read those (and sweep the others every few seconds, `mnsd.storage.dynamodb.standard.stripe_spans`). The rule above
is applied to that width: when the rate, lost claims or throttling ask for more than the width, the queue sends
over all its stripes again (`Placements.widen`), or grows.

The ready index (`placement.Spread`) is turned on the same way, for good: when a queue grows, when one
receive reads `INDEX_WASTE` leases it cannot take (in flight, delayed or expired), or when a container's
receives lose many claims (`StripeGrowth.contended`; they then read `CONTENDED_SPREAD` times wider pages). Until then a quiet
queue pays 3 writes per message over its life; with the index, 7. Once no container writes the queue without
the index (`Settings.index_settle_seconds`), each receive builds it `INDEX_STEP` leases further over what was
written before, until receives read only the index (`placer.Placer`).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from mnsd.ground.clock import Clock

MIN_ATTEMPTS = 32
LOST_PER_WON = 0.25
WINDOW_SECONDS = 10.0
COOLDOWN_SECONDS = 1.0
STRIPE_BUDGET = 120  # messages per second per stripe (see the module's docstring)
TOLERANCE = 1.25
BURST_SECONDS = 0.1
# A receive that read this many leases it could not take turns its queue's ready index on.
INDEX_WASTE = 100
# Leases a receive reads (and indexes) of a queue's index still being built.
INDEX_STEP = 50
# While this container's receives of a queue lose many claims, they read pages this many times wider (a page of 256
# small index items is about 3 read units) and claim at random in them.
CONTENDED_SPREAD = 4


@dataclass
class Load:
    won: int = 0  # claims that took a message
    lost: int = 0  # conditional claims another consumer won first
    throttled: int = 0  # writes the database refused for capacity


class Pressure:
    """What the storage engine observed of each queue's load since the last `take` (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._load: dict[str, Load] = {}

    def claims(self, queue_id: str, won: int, lost: int) -> None:
        with self._lock:
            load = self._load.setdefault(queue_id, Load())
            load.won += won
            load.lost += lost

    def throttled(self, queue_id: str) -> None:
        with self._lock:
            self._load.setdefault(queue_id, Load()).throttled += 1

    def take(self, queue_id: str) -> Load:
        with self._lock:
            return self._load.pop(queue_id, Load())


@dataclass
class _Window:
    started: float
    won: int = 0
    lost: int = 0
    scarce: int = 0  # claims made from pages that had fewer candidates than looked for


class _Count:
    """Messages counted over a sliding span: the current span's count plus the previous one's, weighted by how
    much of it the sliding span still covers."""

    def __init__(self, span: float, now: float) -> None:
        self.span = span
        self.started = now
        self.current = 0
        self.previous = 0

    def add(self, now: float, count: int) -> float:
        """Count `count` messages at `now`; the messages of the last `span` seconds (estimated)."""
        elapsed = now - self.started
        if elapsed >= self.span:
            spans = math.floor(elapsed / self.span)
            self.previous = self.current if spans == 1 else 0
            self.current = 0
            self.started += spans * self.span
            elapsed -= spans * self.span
        self.current += count
        return self.current + self.previous * min(1.0, max(0.0, 1 - elapsed / self.span))


def stripes_for(rate: float, budget: int = STRIPE_BUDGET) -> int:
    """The stripes `rate` messages per second need: the next power of two of `rate / budget` (at least 1)."""
    needed = max(1, math.ceil(rate / budget))
    return 1 << (needed - 1).bit_length()


class StripeGrowth:
    """The growth rule, per container: when to ask for more stripes (see the module's docstring)."""

    def __init__(self, pressure: Pressure, clock: Clock, max_stripes: int) -> None:
        self.pressure = pressure
        self.clock = clock
        self.max_stripes = max_stripes
        self._lock = threading.Lock()
        self._windows: dict[str, _Window] = {}
        self._grown_at: dict[str, float] = {}
        self._sent: dict[str, tuple[_Count, _Count]] = {}  # per queue: the last second, the last burst

    def send_rate(self, queue_id: str, sent: int) -> float:
        """Count `sent` messages sent now; the queue's send rate (messages per second) as this container sees it."""
        now = self.clock.now()
        with self._lock:
            counts = self._sent.get(queue_id)
            if counts is None:
                counts = self._sent[queue_id] = (_Count(1.0, now), _Count(BURST_SECONDS, now))
            second, burst = counts[0].add(now, sent), counts[1].add(now, sent)
        return max(second, burst / BURST_SECONDS) if burst >= STRIPE_BUDGET else second

    def contended(self, queue_id: str) -> bool:
        """Whether this container's receives of the queue lose many claims now (they then read a wider page)."""
        with self._lock:
            window = self._windows.get(queue_id)
            return window is not None and window.lost > LOST_PER_WON * max(1, window.won)

    def wanted(self, queue_id: str, stripes: int, scarce: bool = False, sent: int = 0) -> int | None:
        """The stripe count to ask for now, or None to keep `stripes` (`scarce`: the claims since the last
        call were for fewer messages than the receive looked for, so they do not count; `sent`: messages
        this container is sending to the queue now)."""
        load = self.pressure.take(queue_id)
        rate = self.send_rate(queue_id, sent) if sent else 0.0
        now = self.clock.now()
        with self._lock:
            by_rate = min(stripes_for(rate), self.max_stripes)
            if rate > TOLERANCE * stripes * STRIPE_BUDGET and by_rate > stripes:
                self._grown_at[queue_id] = now
                self._windows[queue_id] = _Window(now)
                return by_rate
            window = self._windows.get(queue_id)
            if window is None or now - window.started > WINDOW_SECONDS:
                window = self._windows[queue_id] = _Window(now)
            window.won += load.won
            window.lost += load.lost
            if scarce:
                window.scarce += load.won + load.lost
            if stripes >= self.max_stripes:
                return None
            judged = window.won + window.lost - window.scarce  # claims over full pages
            contended = judged >= MIN_ATTEMPTS and window.lost > LOST_PER_WON * max(1, window.won)
            if not (contended or load.throttled):
                return None
            if now - self._grown_at.get(queue_id, float("-inf")) < COOLDOWN_SECONDS:
                return None
            self._grown_at[queue_id] = now
            self._windows[queue_id] = _Window(now)
            return min(stripes * 2, self.max_stripes)
