"""Which held receives to wake, and when: the waker's memory of one tier instance (no I/O here).

The origin answers a receive with nothing to claim by a hold on its queue's channel (`mnsd.grip`). The waker gives
each hold a channel of its own (`<queue channel>.w<n>`), so a wake for `count` messages asks the origin again for
`count` waiters only, oldest first, not for every waiter of a busy queue. The names are reused, lowest free first:
Pushpin asks the origin again once when it subscribes a channel it had not (so that nothing published while it
subscribed is missed), and keeps a channel subscribed a minute after its last hold; fresh names for every hold
would double the origin calls of an idle consumer. Pushpin asks again with the very request it holds, and two
clients' requests alike (`answered`) are told apart by what can bring a held one back. What could lose a wake is
covered here:
- a woken waiter that does not come back to the origin within `CONFIRM_SECONDS` (its client gone, the hint lost,
  or published before Pushpin subscribed the hold) is replaced by the next waiter;
- a wake counts on the receives asking the origin about its queue now and owes them what it leaves to them; one of
  them that looked before the messages were there and would hold is asked again at once (`stale`);
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
# Pushpin keeps a channel subscribed a minute after its last hold ended (`subscription_linger`; a margin kept), and
# asks the origin again about 1 s after it subscribes a channel anew: within this of the hold.
SUBSCRIBED_MS = 55_000
CHECK_WITHIN_MS = 3000
# Messages a wake left to the origin calls running then are owed this long (those calls end well within it).
OWED_MS = 1000


@dataclass
class Waiter:
    channel: str  # the queue's channel
    name: str  # its own channel, `<channel>.w<n>`
    deadline_ms: int  # when its client stops waiting
    key: str = ""  # the client request's identity (`waker.request_key`): Pushpin asks again with the same request
    held_at: int = 0  # when the waker passed the hold on (ms)
    hinted: int = 0  # hints published to it
    check_until: int = 0  # Pushpin subscribes its channel anew: it asks the origin again for it before then (ms)
    takes: int = 1  # messages its receive takes at most (a batch receive's numOfMessages)


def queue_channel(name: str) -> str:
    """The queue channel of a waiter's channel."""
    return name.rpartition(SEPARATOR)[0] or name


@dataclass
class Waiters:
    now_ms: Callable[[], int]
    _held: dict[str, deque[Waiter]] = field(default_factory=dict)
    _woken: dict[str, tuple[Waiter, int]] = field(default_factory=dict)  # name -> (waiter, woken at ms)
    _due: dict[str, int] = field(default_factory=dict)
    _names: dict[str, dict[str, int]] = field(default_factory=dict)  # channel -> {name in use: until ms}
    _keys: dict[str, list[Waiter]] = field(default_factory=dict)  # alike requests (`request_key`) held
    _subscribed: dict[str, int] = field(default_factory=dict)  # name -> until when Pushpin keeps it subscribed
    _asking: dict[str, int] = field(default_factory=dict)  # channel -> messages the origin calls running may take
    _owed: dict[str, tuple[int, int]] = field(default_factory=dict)  # channel -> (messages, since ms): see `wake`

    def hold(self, channel: str, deadline_ms: int, key: str = "", takes: int = 1) -> Waiter:
        now = self.now_ms()
        names = {n: until for n, until in self._names.get(channel, {}).items() if until > now}
        index = next(i for i in range(1, len(names) + 2) if f"{channel}{SEPARATOR}{i}" not in names)
        waiter = Waiter(channel, f"{channel}{SEPARATOR}{index}", deadline_ms, key, now, takes=max(1, takes))
        if self._subscribed.get(waiter.name, 0) <= now:
            waiter.check_until = now + CHECK_WITHIN_MS
        self._subscribed[waiter.name] = deadline_ms + SUBSCRIBED_MS
        if key:
            self._keys.setdefault(key, []).append(waiter)
        names[waiter.name] = deadline_ms + REUSE_AFTER_MS
        self._names[channel] = names
        self._held.setdefault(channel, deque()).append(waiter)
        return waiter

    def answered(self, key: str) -> Waiter | None:
        """The origin is asked again for the request `key` (its wake arrived, or Pushpin checks a new subscription):
        the waiter it was, if it was held. Requests alike (the same queue,
        wait and signature: clients that sent them in the same second) are told apart by what can bring one back:
        a wake, or Pushpin's check of a channel it newly subscribed. Else it is a new request, not held yet."""
        alike = self._keys.get(key, [])
        now = self.now_ms()
        waiter = next((w for w in alike if self._woken.get(w.name, (None,))[0] is w), None)
        waiter = waiter or next((w for w in alike if w.check_until > now), None)
        if waiter is None:
            return None
        alike.remove(waiter)
        if not alike:
            del self._keys[key]
        waiter.check_until = 0
        self._subscribed[waiter.name] = now + SUBSCRIBED_MS
        self._woken.pop(waiter.name, None)
        self._names.get(waiter.channel, {}).pop(waiter.name, None)
        held = self._held.get(waiter.channel)
        if held and waiter in held:
            held.remove(waiter)
        return waiter

    def begin(self, channel: str, takes: int) -> None:
        """An origin call of a receive of the queue starts (a woken waiter's, or a new request's): it may take up to
        `takes` of the messages a wake is for (`end` when it is over)."""
        self._asking[channel] = self._asking.get(channel, 0) + takes

    def end(self, channel: str, takes: int) -> None:
        left = self._asking.get(channel, takes) - takes
        if left > 0:
            self._asking[channel] = left
        else:
            self._asking.pop(channel, None)

    def more(self, channel: str, count: int) -> list[Waiter]:
        """A receive that claimed saw `count` more messages receivable: the waiters to wake for them beyond those
        that will take them anyway: woken and not yet back, or asking the origin now. (They may be messages a wake
        already counted: they are not owed twice.)"""
        now = self.now_ms()
        pending = sum(w.takes for w, _ in self._woken.values() if w.channel == channel)
        pending += self._asking.get(channel, 0)  # (asking after they were there: they see them)
        woken, taken = self._pop(channel, count - pending, now)
        short = count - pending - taken
        if short > 0:
            owed = self._owing(channel, now)
            self._owed[channel] = (max(owed, short), now)
        return woken

    def wake(self, channel: str, count: int) -> list[Waiter]:
        """The waiters of the queue to ask the origin again for `count` messages made receivable now (removed: a
        waiter is woken once), oldest first, each counted for the messages it takes.

        The receives asking the origin about the queue now take the first ones: those that looked before the
        messages were there end in a hold and look again (`stale`), the others claim them; only what they leave
        wakes held waiters. What is left to them is owed, for a second: each of them that claims or looks again
        pays one off, and what is owed is not counted on twice."""
        now = self.now_ms()
        owed = self._owing(channel, now)
        woken, taken = self._pop(channel, count - max(0, self._asking.get(channel, 0) - owed), now)
        if count > taken:  # left to the receives asking now (or to none: then one that looks now looks again)
            self._owed[channel] = (owed + count - taken, now)
        return woken

    def _owing(self, channel: str, now: int) -> int:
        owed, since = self._owed.get(channel, (0, 0))
        return owed if now - since <= OWED_MS else 0

    def _pop(self, channel: str, count: int, now: int) -> tuple[list[Waiter], int]:
        """Held waiters, oldest first, for `count` messages: them and the messages they take."""
        held = self._held.get(channel)
        woken: list[Waiter] = []
        taken = 0
        while held and taken < count:
            waiter = held.popleft()
            if waiter.deadline_ms > now:
                woken.append(waiter)
                taken += waiter.takes
                self._woken[waiter.name] = (waiter, now)
        if held is not None and not held:
            del self._held[channel]
        return woken, taken

    def stale(self, channel: str, since_ms: int, takes: int) -> bool:
        """Whether a receive whose origin call started at `since_ms` and found nothing must look again: a wake of
        its queue since then left messages owed (it may have looked before they were there). Pays `takes` off."""
        owed, at = self._owed.get(channel, (0, 0))
        if owed <= 0 or at < since_ms:
            return False
        self._pay(channel, takes)
        return True

    def claimed(self, channel: str, count: int) -> None:
        """A receive that was not woken for them claimed `count` messages: what is owed is paid (it took owed
        messages, or older ones that a receive looking later would otherwise have taken)."""
        if self._owed.get(channel, (0, 0))[0] > 0:
            self._pay(channel, count)

    def _pay(self, channel: str, count: int) -> None:
        owed, at = self._owed[channel]
        if owed > count:
            self._owed[channel] = (owed - count, at)
        else:
            del self._owed[channel]

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
        keys = {k: [w for w in alike if w.deadline_ms + REUSE_AFTER_MS > now_ms] for k, alike in self._keys.items()}
        self._keys = {k: alike for k, alike in keys.items() if alike}
        self._subscribed = {n: until for n, until in self._subscribed.items() if until > now_ms}
        self._owed = {c: (owed, at) for c, (owed, at) in self._owed.items() if now_ms - at <= OWED_MS}
