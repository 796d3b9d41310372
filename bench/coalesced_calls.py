"""Single calls coalesced as the wait tier's holder coalesces them (`wait_tier.coalesce`), for the bench's threads
over the simulated clock (`bench.pattern_prices`).

The holder's rule: single sends, single receives and single deletes of one queue that arrive within the window
(`wait_tier.coalesce.WINDOW_MS`) of the first of their group go to the origin as one batch call; a group goes at once
when it holds `MAX_REQUESTS`; a group of one is passed on alone. Here the window is simulated time on the bench's
clock (which each DynamoDB call moves by `bench.pattern_prices.CALL_SECONDS`), so:

- a call joins the open group of its queue and operation when the clock has not passed the group's end (the
  first call's time plus the window), else that group goes and the call opens the next;
- a group goes when the clock passes its end (another thread's DynamoDB calls moved it), when it is full, or when
  no client thread can do anything but wait (every one parked in a group, waiting for an answer or for work): the
  clock then moves on to the earliest group's end, as time passes with nothing else happening, and every group
  ended by then goes;
- the first call of a group (its leader) makes the batch call: the batch's operation served as
  `mnsd.request.coalesced` serves it (`serve`), then each parked call gets its own outcome.

What the holder's real path adds and this leaves out: the HTTP hop from client to holder and holder to origin, each
request's own pass through the pipeline in the batch call (signature, request limit, permission: no DynamoDB call
when the queue's record and the request counters are cached), the batch document's encoding and the answers' fan-out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from wait_tier.coalesce import MAX_REQUESTS, WINDOW_MS

Serve = Callable[[list[Any]], list[Any]]  # a group's items -> each one's outcome (or the exception it raises)


@dataclass(eq=False)
class Group:
    """The calls of one queue and operation waiting for their batch call."""

    key: tuple[str, str]
    ends: float  # simulated time past which the group takes no more calls
    items: list[Any] = field(default_factory=list)
    closed: bool = False
    done: bool = False
    outcomes: list[Any] = field(default_factory=list)
    error: BaseException | None = None


class Coalescer:
    """Concurrent single calls of `clients` threads, grouped by (operation, queue) within `window_ms` of simulated
    time on `clock` (an object with a float `t`). Every client thread must say when it waits for work (`idle`) and
    when it is done (`leave`), so that a group is not held for a thread that will never come."""

    def __init__(self, clock: Any, clients: int, window_ms: float = WINDOW_MS, most: int = MAX_REQUESTS) -> None:
        self.clock, self.window, self.most = clock, window_ms / 1000, most
        self.active = clients  # client threads that may still make a call (not parked, not idle)
        self.groups: dict[tuple[str, str], Group] = {}
        self.condition = threading.Condition()
        self.batch_sizes: dict[str, list[int]] = {}  # operation -> each call's size (1: passed on alone)

    def call(self, operation: str, queue: str, item: Any, serve: Serve) -> Any:
        """`item`'s outcome, served in a batch with the calls of its queue and operation that came within the window
        (`serve(items)`, made by the group's first call, in its thread)."""
        with self.condition:
            group, leader = self.group_for((operation, queue))
            index = len(group.items)
            group.items.append(item)
            self.active -= 1
            if len(group.items) >= self.most:
                self._close(group)
            self.condition.notify_all()
            while not group.closed:
                self._pass_time(group)
            if not leader:
                while not group.done:
                    self.condition.wait()
                self.active += 1
                if group.error is not None:
                    raise group.error
                return group.outcomes[index]
        try:
            group.outcomes = serve(group.items)
            assert len(group.outcomes) == len(group.items), "each call its own outcome"
        except BaseException as error:
            group.error = error
        with self.condition:
            group.done = True
            self.batch_sizes.setdefault(operation, []).append(len(group.items))
            self.condition.notify_all()
        if group.error is not None:
            raise group.error
        return group.outcomes[0]

    def group_for(self, key: tuple[str, str]) -> tuple[Group, bool]:
        """The group a call of `key` (operation, queue) joins now, and whether it opens it (its leader): the open one
        unless the clock passed its end (it goes then, and the call opens the next). Under the condition."""
        group = self.groups.get(key)
        if group is not None and self.clock.t > group.ends:
            self._close(group)
            group = None
        if group is None:
            self.groups[key] = Group(key, self.clock.t + self.window)
            return self.groups[key], True
        return group, False

    def _pass_time(self, group: Group) -> None:
        """Wait (holding the condition) until `group` closes: its end passed on the clock, or every client thread
        waits (the earliest group then goes, the clock moved to its end)."""
        if self.clock.t > group.ends:
            self._close(group)
            return
        if self.active <= 0 and self.groups:
            self.clock.t = max(self.clock.t, min(g.ends for g in self.groups.values()))
            for ended in [g for g in self.groups.values() if g.ends <= self.clock.t]:
                self._close(ended)
            return
        self.condition.wait(timeout=0.0005)

    def _close(self, group: Group) -> None:
        """The group takes no more calls; its leader makes the batch call (it is active again)."""
        if group.closed:
            return
        group.closed = True
        if self.groups.get(group.key) is group:
            del self.groups[group.key]
        self.active += 1
        self.condition.notify_all()

    @contextmanager
    def idle(self) -> Iterator[None]:
        """A client thread waiting for work (another's answer to come, a message to arrive): it makes no call."""
        with self.condition:
            self.active -= 1
            self.condition.notify_all()
        try:
            yield
        finally:
            with self.condition:
                self.active += 1

    def leave(self) -> None:
        """A client thread done: it makes no call any more."""
        with self.condition:
            self.active -= 1
            self.condition.notify_all()
