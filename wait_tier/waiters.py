"""Which held receives to wake, and when: the waker's memory of one tier instance (no I/O here).

The origin answers a receive with nothing to claim by a hold on its queue's channel (`mnsd.grip`). The waker gives
each hold a channel of its own (`<queue channel>.w<n>`), so a wake for `count` messages asks the origin again for
`count` waiters only, oldest first, not for every waiter of a busy queue. The names are reused, lowest free first:
Pushpin asks the origin again once when it subscribes a channel it had not (so that nothing published while it
subscribed is missed), and keeps a channel subscribed a minute after its last hold; fresh names for every hold
would double the origin calls of an idle consumer. What could lose a wake is covered here:
- a woken waiter that does not come back to the origin within `CONFIRM_SECONDS` (its client gone, the hint lost,
  or published before Pushpin subscribed the hold) is replaced by the next waiter;
- a hold whose origin call started before a wake of its queue that found too few waiters is asked again at once
  (`woken_since`): the origin may have looked before the message was there;
- a time when a message becomes receivable (end of a delay, of a visibility timeout) wakes one waiter then; one
  that claims and saw more (`more`) wakes the next.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

CONFIRM_SECONDS = 0.4
# Pushpin subscribes a hold some ms after the waker passed it on (tens on a busy machine): a hint to a younger
# one waits until then (and one that came too early anyway is hinted again after `CONFIRM_SECONDS`).
SETTLE_MS = 50
SEPARATOR = ".w"
# A name is not given to another hold until this long after its wait ended (Pushpin's timeout is whole seconds).
REUSE_AFTER_MS = 1500


@dataclass
class Waiter:
    channel: str  # the queue's channel
    name: str  # its own channel, `<channel>.w<n>`
    deadline_ms: int  # when its client stops waiting
    key: str = ""  # the client request's identity (`waker.request_key`): Pushpin asks again with the same request
    held_at: int = 0  # when the waker passed the hold on (ms)
    hinted: int = 0  # hints published to it


def queue_channel(name: str) -> str:
    """The queue channel of a waiter's channel."""
    return name.rpartition(SEPARATOR)[0] or name


@dataclass
class Waiters:
    now_ms: Callable[[], int]
    _held: dict[str, deque[Waiter]] = field(default_factory=dict)
    _woken: dict[str, tuple[Waiter, int]] = field(default_factory=dict)  # name -> (waiter, woken at ms)
    _last_wake: dict[str, int] = field(default_factory=dict)
    _due: dict[str, int] = field(default_factory=dict)
    _names: dict[str, dict[str, int]] = field(default_factory=dict)  # channel -> {name in use: until ms}
    _keys: dict[str, Waiter] = field(default_factory=dict)
    _asking: dict[str, int] = field(default_factory=dict)  # channel -> woken waiters whose origin call runs

    def hold(self, channel: str, deadline_ms: int, key: str = "") -> Waiter:
        now = self.now_ms()
        names = {n: until for n, until in self._names.get(channel, {}).items() if until > now}
        index = next(i for i in range(1, len(names) + 2) if f"{channel}{SEPARATOR}{i}" not in names)
        waiter = Waiter(channel, f"{channel}{SEPARATOR}{index}", deadline_ms, key, now)
        if key:
            self._keys[key] = waiter
        names[waiter.name] = deadline_ms + REUSE_AFTER_MS
        self._names[channel] = names
        self._held.setdefault(channel, deque()).append(waiter)
        return waiter

    def answered(self, key: str) -> Waiter | None:
        """The origin is asked again for the request `key` (its wake arrived, or Pushpin checks a new subscription):
        the waiter it was, if it was held (`asked` when that origin call is over)."""
        waiter = self._keys.pop(key, None)
        if waiter is None:
            return None
        self._woken.pop(waiter.name, None)
        self._names.get(waiter.channel, {}).pop(waiter.name, None)
        held = self._held.get(waiter.channel)
        if held and waiter in held:
            held.remove(waiter)
        self._asking[waiter.channel] = self._asking.get(waiter.channel, 0) + 1
        return waiter

    def asked(self, waiter: Waiter) -> None:
        left = self._asking.get(waiter.channel, 1) - 1
        if left > 0:
            self._asking[waiter.channel] = left
        else:
            self._asking.pop(waiter.channel, None)

    def more(self, channel: str, count: int) -> list[Waiter]:
        """A receive that claimed saw `count` more messages receivable: the waiters to wake for them beyond those
        already woken (hinted, or asking the origin now), which will claim them."""
        pending = sum(1 for w, _ in self._woken.values() if w.channel == channel) + self._asking.get(channel, 0)
        return self.wake(channel, count - pending) if count > pending else []

    def wake(self, channel: str, count: int) -> list[Waiter]:
        """Up to `count` waiters of the queue to ask the origin again (removed: a waiter is woken once)."""
        now = self.now_ms()
        held = self._held.get(channel)
        woken: list[Waiter] = []
        while held and len(woken) < count:
            waiter = held.popleft()
            if waiter.deadline_ms > now:
                woken.append(waiter)
                self._woken[waiter.name] = (waiter, now)
        if held is not None and not held:
            del self._held[channel]
        if len(woken) < count:
            self._last_wake[channel] = now  # a wake that found too few waiters: one looking now must look again
        return woken

    def woken_since(self, channel: str, since_ms: int) -> bool:
        """Whether a wake of the queue since `since_ms` found fewer waiters than messages (a receive that looked
        at the queue before it and now would hold may have missed them)."""
        return self._last_wake.get(channel, -1) >= since_ms

    def due(self, channel: str, at_ms: int) -> None:
        """A message of the queue becomes receivable at `at_ms`."""
        self._due[channel] = min(at_ms, self._due.get(channel, at_ms))

    def next_wakes(self) -> list[Waiter]:
        """The waiters to wake now for times come and for wakes that were not answered in time."""
        now = self.now_ms()
        channels = [c for c, at in self._due.items() if at <= now]
        for channel in channels:
            del self._due[channel]
        late = [w for w, at in self._woken.values() if now - at > CONFIRM_SECONDS * 1000]
        again = [w for w in late if w.hinted == 1 and w.deadline_ms > now]  # hinted too early, maybe: once more
        for waiter in late:
            del self._woken[waiter.name]
        for waiter in again:
            self._woken[waiter.name] = (waiter, now)
        channels += [w.channel for w in late if w not in again and w.deadline_ms > now]
        return again + [waiter for channel in channels for waiter in self.wake(channel, 1)]

    def ready(self, woken: list[Waiter]) -> tuple[list[Waiter], list[Waiter]]:
        """The woken waiters to hint now, and those held too recently (hinted on a later tick)."""
        settled = self.now_ms() - SETTLE_MS
        now = [w for w in woken if w.held_at <= settled]
        for waiter in now:
            waiter.hinted += 1
        return now, [w for w in woken if w.held_at > settled]

    def held(self, channel: str) -> int:
        return len(self._held.get(channel, ()))

    def forget_before(self, now_ms: int) -> None:
        """Drop what no longer matters: waits ended, wakes of queues long quiet."""
        for channel in list(self._held):
            live = deque(w for w in self._held[channel] if w.deadline_ms > now_ms)
            if live:
                self._held[channel] = live
            else:
                del self._held[channel]
        for channel in list(self._names):
            names = {n: until for n, until in self._names[channel].items() if until > now_ms}
            if names:
                self._names[channel] = names
            else:
                del self._names[channel]
        self._keys = {k: w for k, w in self._keys.items() if w.deadline_ms + REUSE_AFTER_MS > now_ms}
        horizon = now_ms - 60_000
        self._last_wake = {c: at for c, at in self._last_wake.items() if at > horizon}
