"""The holder's memory of one queue: the receives it holds on the queue's channel and the rules that choose which
to wake (no I/O here: `wait_tier.holder` acts on what these methods return).

A wake says how many messages became receivable. Receives asking the origin about the queue right now may take
them: what a wake leaves to those (`free` askers: a client's request, or one asked again at once) is *owed* to
them, and wakes no held receive; a free asker that claims pays it off, one that finds nothing and started before
the wake asks again at once (`stale`), and what is still owed when the last of them is back wakes held receives
(`settle`). The rest of a wake goes to held receives, oldest first, as many as take the messages (a batch receive
takes up to its numOfMessages). A claim that saw more receivable messages than it took (`more`) wakes held
receives only for what the receives at the origin now do not cover. A time when a message becomes receivable (a
delay's end, a visibility timeout's: `due`) wakes one held receive then (`fire`). A held receive past its last
ask (`Waiter.last_ask_ms`: its claim would start too late for its answer to reach the client in time) is woken no
more; the wake goes to the next.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Waiter:
    """One receive the holder holds."""

    takes: int  # messages it takes at most
    until_ms: int  # when its client stops waiting
    last_ask_ms: int | None = None  # after this it is not woken (the origin's last claim): None, until `until_ms`
    signal: Any = None  # what the holder sets to wake it

    def askable(self, now_ms: int) -> bool:
        return now_ms <= (self.until_ms if self.last_ask_ms is None else self.last_ask_ms)


@dataclass
class Channel:
    name: str
    held: deque[Waiter] = field(default_factory=deque)
    free_asking: int = 0  # messages the free receives at the origin now may take
    woken_asking: int = 0  # ... and the woken ones (each woken for messages of its own)
    owed: int = 0  # messages left to the free receives at the origin
    last_wake: int = 0  # the holder's count of wakes (of any channel) at this channel's last wake
    last_owing: int = 0  # ... at its last wake that left something owed
    dues: list[int] = field(default_factory=list)  # times (ms) a message becomes receivable, sorted

    # -- the receives at the origin -------------------------------------------------------------------------------
    def begin(self, takes: int, free: bool) -> None:
        """A receive asks the origin (`free`: not woken for messages of its own)."""
        if free:
            self.free_asking += takes
        else:
            self.woken_asking += takes

    def end(self, takes: int, free: bool, claimed: int) -> None:
        """A receive is back from the origin having claimed `claimed` messages (a free one pays what is owed)."""
        if free:
            self.free_asking -= takes
            self.owed = max(0, self.owed - claimed)
        else:
            self.woken_asking -= takes

    def stale(self, begun: int, counted: bool, takes: int = 1) -> bool:
        """Whether a free receive that found nothing looked before a wake that may have been for it (it began when
        the holder had counted `begun` wakes): ask again. One `counted` among the askers (its channel was known)
        asks again only for what is still owed, and takes its share of it (`takes`: two receives do not ask again
        for one message); one that was not counted (a route's first receive) asks again after any wake."""
        if not counted:
            return begun < self.last_wake
        if self.owed == 0 or begun >= self.last_owing:
            return False
        self.owed -= min(self.owed, takes)
        return True

    def settle(self, now_ms: int) -> list[Waiter]:
        """What is owed when no free receive is at the origin any more wakes held receives."""
        if self.free_asking > 0 or self.owed == 0:
            return []
        owed, self.owed = self.owed, 0
        return self._take(owed, now_ms)

    # -- held receives ---------------------------------------------------------------------------------------------
    def hold(self, waiter: Waiter) -> None:
        self.held.append(waiter)

    def leave(self, waiter: Waiter) -> None:
        """A held receive's wait ended, or its client went away."""
        try:
            self.held.remove(waiter)
        except ValueError:
            pass  # (woken already)

    def idle(self) -> bool:
        """Nothing held, asking or due: the holder may forget the channel."""
        return not self.held and not self.free_asking and not self.woken_asking and not self.dues

    # -- wakes -------------------------------------------------------------------------------------------------------
    def wake(self, count: int, seq: int, now_ms: int) -> list[Waiter]:
        """`count` messages became receivable (the holder's `seq`-th wake): owed to the free receives at the origin,
        the rest to held ones."""
        owed = min(count, max(0, self.free_asking - self.owed))
        self.last_wake = seq
        if owed:
            self.owed += owed
            self.last_owing = seq
        return self._take(count - owed, now_ms)

    def more(self, count: int, now_ms: int) -> list[Waiter]:
        """A claim saw `count` receivable messages it left: held receives for what those at the origin do not take."""
        return self._take(count - self.free_asking - self.woken_asking, now_ms)

    def due(self, at_ms: int) -> bool:
        """A message becomes receivable at `at_ms`; whether that time is new (the holder sets a timer for it)."""
        index = bisect.bisect_left(self.dues, at_ms)
        if index < len(self.dues) and self.dues[index] == at_ms:
            return False
        self.dues.insert(index, at_ms)
        return True

    def fire(self, now_ms: int) -> list[Waiter]:
        """One held receive for each due time passed."""
        passed = bisect.bisect_right(self.dues, now_ms)
        del self.dues[:passed]
        return self._take(passed, now_ms, each=True)

    def _take(self, messages: int, now_ms: int, each: bool = False) -> list[Waiter]:
        """Held receives, oldest first, as many as take `messages` (`each`: one a message, whatever it takes), past
        any that may no longer ask the origin (they stay held until their wait ends)."""
        woken: list[Waiter] = []
        late: list[Waiter] = []
        while messages > 0 and self.held:
            waiter = self.held.popleft()
            if not waiter.askable(now_ms):
                late.append(waiter)
                continue
            woken.append(waiter)
            messages -= 1 if each else waiter.takes
        self.held.extendleft(reversed(late))
        return woken
