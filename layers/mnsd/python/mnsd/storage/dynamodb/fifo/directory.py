"""A FIFO queue's directory on the DynamoDB message table: where each group's item lives, and how wide it is.

A group's item (`mnsd.storage.dynamodb.fifo.fifo_groups` says what it holds) lives in one of the queue's directory partitions
`{queue_id}#D{d}`, d < `width`. The width follows the queue's load as a standard queue's stripes do: it is
`max(MIN_DIRECTORY_WIDTH, DIRECTORY_PER_STRIPE x stripes)` (a power of two) of the queue's placement
(`placement.Placement.stripes`, grown by `placer.Placer` from the send rate and throttling), so the group-item
writes of a busy queue (about 5 write units per message) spread over more partitions as it grows; a quiet queue
keeps the 8 it always had, and its empty poll reads no more.

Containers do not agree on the width at every moment (each caches the placement), so a group's directory
number is chosen once, when its item is created (`crc32(group) % width` then), and recorded in its *home item*,
`#H` in the group's own partition `{queue_id}#G{group}` (before its leases `L...`): `d`, and `i`, a token that
every creation and move changes. Every writer finds the group item through it, whatever width it believes:
- a creation is one transaction: the home put (absent, or still the token of a home whose group item is gone)
  and the group item put at `d` (absent). Of two racing creators one wins; the other finds its home and goes on.
  So a group has at most one group item, which carries its home's token `i`.
- a container remembers homes it used or read (`known`, bounded); every write of a group item is conditioned on
  its existing, so one at a home that is no longer its fails, and the writer reads the home again (`locate`).
- a group item from before homes (no `i`, no home item) lives at `crc32(group) % MIN_DIRECTORY_WIDTH`, its former
  place: `locate` reads that place too when the group has no home.
- forgetting a group deletes its group item, then its home if its token is still the item's (`forget_items`): two
  single writes, not a transaction (a directory partition pays one unit, as before homes). Between the two the
  home points at no item, as when TTL ended a group item: a creator that finds such a home replaces it by its
  token, and the forget's delete of it then fails its condition.
- a *move* (`move_items`): a group created when the queue was narrower lies outside `home_for(group, width)`; a
  scan that meets it free moves it there in one transaction (the old item deleted as read, the new put, the home
  re-pointed as last seen). Widths being powers of two and only growing, a container that still believes a
  narrower width reads only the partitions where `crc32 % width` agrees with its own, and never moves it back.
"""

from __future__ import annotations

import random
import secrets
import string
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from pynamodb.expressions.condition import Condition

from mnsd.model import fifo
from mnsd.storage.dynamodb.items.groups import (
    GROUP,
    GROUP_STATE,
    HOME,
    GroupItem,
    HomeItem,
    delete_request,
    directory_partition,
    group_key,
    group_of,
    hold_attribute,
    hold_of,
    home_item,
    home_key,
    home_of,
    moved_item,
    put_request,
    query_request,
    sort_key,
)
from mnsd.storage.dynamodb.items.layout import Item, group_partition
from mnsd.storage.dynamodb.placement.placement import Placement

__all__ = ["GROUP", "HOME", "directory_partition", "group_key", "hold_attribute", "home_key"]

MIN_DIRECTORY_WIDTH = 8  # the fewest directory partitions of a FIFO queue (and those of group items older than homes)
DIRECTORY_PER_STRIPE = 1  # directory partitions per stripe of the queue's placement (see `GroupDirectory.width`)
_DIRECTORY_PAGE = 100  # group items a receive reads per Query
_START_CHARACTERS = string.printable[:94]  # where a shuffled read may start (`G` + one)
_REMEMBERED = 100_000  # homes a container remembers (then it starts afresh)
_WHOLE, _FROM, _UP_TO = "whole", "from", "up to"  # the parts a directory partition is read in (`_ranges`)


class Placements(Protocol):
    """Where the queue's placement is read (`placer.Placer`)."""

    def of(self, queue_id: str) -> Placement: ...


def home_for(group: str, width: int) -> int:
    """The directory partition a group is created in (or moved to) at `width`."""
    return zlib.crc32(group.encode()) % width


def _token() -> str:
    return secrets.token_hex(6)


@dataclass(frozen=True)
class Home:
    """Where a group's item is: directory partition `d`, and the token of its home item ("" for a group item from
    before homes, which has none)."""

    d: int
    token: str


@dataclass(frozen=True)
class GroupState:
    """A group item as read: its group, its directory partition, its state, and the item itself (a move copies it)."""

    queue_id: str
    name: str
    home: int
    stored: int  # q
    hold: fifo.Hold  # t_{position}...
    changes: int  # c
    paused_until: int  # p
    kept: int  # k
    token: str  # i ("": from before homes)
    item: Item = field(compare=False, repr=False)
    former_until: int = 0  # h, while o > 0: the hold of a run claimed before holds were kept per message
    former: int = 0  # o: how many that run held

    @classmethod
    def of(cls, item: Item) -> GroupState:
        read = group_of(item)
        queue_id, d = read.pk.rsplit("#D", 1)
        q, o, h, c, p, k = (int(value or 0) for value in (read.q, read.o, read.h, read.c, read.p, read.k))
        hold = fifo.Hold(hold_of(item))
        return cls(queue_id, read.sk[1:], int(d), q, hold, c, p, k, read.i or "", item, h if o > 0 else 0, o)

    def held(self, now_ms: int) -> bool:
        return self.hold.held(now_ms) or self.former_until > now_ms or self.paused_until > now_ms

    def wakes_at(self) -> int:
        """When a held group is free again, if nothing changes."""
        return max([*self.hold.leases.values(), self.former_until, self.paused_until])

    def in_flight(self, now_ms: int) -> int:
        """How many of its messages are hidden now (a run from before per-message holds: as it counted them)."""
        former = self.former if self.former_until > now_ms else 0
        return self.hold.hidden(now_ms) + former

    def forgettable(self, now_ms: int) -> bool:
        """Emptied (`fifo.forgettable`), and no rewind or former run holds it."""
        return fifo.forgettable(self.stored, self.kept, self.hold, now_ms) and not self.held(now_ms)

    @property
    def partition(self) -> str:
        return group_partition(self.queue_id, self.name)


class GroupDirectory:
    """A FIFO queue's directory: its width, its groups' homes (read, remembered, written) and its group items read."""

    def __init__(self, client: Any, table: str, placements: Placements) -> None:
        self.client = client
        self.table = table
        self.placements = placements
        self._homes: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._deep: set[str] = set()  # directory partitions that held more than a page when last read

    # --- width ----------------------------------------------------------------------------------

    def width(self, queue_id: str) -> int:
        """How many directory partitions the queue has: `DIRECTORY_PER_STRIPE` per stripe of its placement, at least
        `MIN_DIRECTORY_WIDTH`, a power of two. The placement grows a stripe per `stripes.STRIPE_BUDGET` (120) messages a
        second; at about 5 write units of group items per message (6 when groups are made and forgotten around each
        one), that is 600-720 WCU/s per directory partition at the budget, spread unevenly by the groups' hashes;
        the growth rule asks for the next power of two above the rate, so a queue runs at 50-100% of its budget and
        10,000 messages/s over 1,000 groups take at most about 460 WCU/s in one (`bench/results/capacity.md`)."""
        wanted = max(MIN_DIRECTORY_WIDTH, DIRECTORY_PER_STRIPE * self.placements.of(queue_id).stripes)
        return 1 << (wanted - 1).bit_length()

    def partitions(self, queue_id: str) -> list[str]:
        return [directory_partition(queue_id, d) for d in range(self.width(queue_id))]

    # --- homes ----------------------------------------------------------------------------------

    def known(self, queue_id: str, group: str) -> int | None:
        """The home this container last used for the group (a hint: writes there are conditioned on the item)."""
        return self._homes.get((queue_id, group))

    def remember(self, queue_id: str, group: str, d: int) -> None:
        with self._lock:
            if len(self._homes) >= _REMEMBERED:
                self._homes.clear()
            self._homes[(queue_id, group)] = d

    def unlearn(self, queue_id: str, group: str) -> None:
        with self._lock:
            self._homes.pop((queue_id, group), None)

    def locate(self, queue_id: str, group: str) -> Home | None:
        """The group's home as stored now (consistent reads): its home item's; with none, the place of a group item
        from before homes if one is there; else None (no group item)."""
        legacy = group_key(queue_id, group, home_for(group, MIN_DIRECTORY_WIDTH))
        keys = [home_key(queue_id, group), legacy]
        response = self.client.batch_get_item(RequestItems={self.table: {"Keys": keys, "ConsistentRead": True}})
        found = {sort_key(item): item for item in response.get("Responses", {}).get(self.table, [])}
        home = found.get(HOME)
        if home is not None:
            read = home_of(home)
            located = Home(int(read.d), read.i)
        elif GROUP + group in found:
            located = Home(GroupState.of(found[GROUP + group]).home, "")
        else:
            self.unlearn(queue_id, group)
            return None
        self.remember(queue_id, group, located.d)
        return located

    def create_items(self, queue_id: str, group: str, seen: Home | None, state: GroupItem) -> tuple[int, list[Item]]:
        """Where a new group item goes and the transaction creating it with its home: `state` its attributes; the
        home put if there is none, or (`seen`) if it is still the one whose group item was found gone."""
        d = home_for(group, self.width(queue_id))
        token = _token()
        home_condition: Condition = HomeItem.pk.does_not_exist()
        if seen is not None and seen.token:
            home_condition = HomeItem.i == seen.token
        state.pk, state.sk, state.i = directory_partition(queue_id, d), GROUP + group, token
        item = state.serialize(null_check=False)
        return d, [
            {"Put": put_request(self.table, home_item(queue_id, group, d, token), home_condition)},
            {"Put": put_request(self.table, item, GroupItem.pk.does_not_exist())},
        ]

    def forget_items(self, group: GroupState, condition: Condition) -> list[Item]:
        """The deletes forgetting a group, in turn: its group item (if `condition` holds), then its home if it is still
        the item's (a group item from before homes has none)."""
        delete = {"Delete": delete_request(self.table, group_key(group.queue_id, group.name, group.home), condition)}
        if not group.token:
            return [delete]
        home = delete_request(self.table, home_key(group.queue_id, group.name), HomeItem.i == group.token)
        return [delete, {"Delete": home}]

    def misplaced(self, group: GroupState) -> int | None:
        """Where a group should move to at its queue's width now; None if it is there."""
        d = home_for(group.name, self.width(group.queue_id))
        return None if d == group.home else d

    def move_items(self, group: GroupState, d: int) -> tuple[GroupState, list[Item]]:
        """The group as moved to directory partition `d`, and the transaction moving it: its item deleted if every
        attribute is still as read, put at `d`, and its home re-pointed if still as read (made, for a group item from
        before homes)."""
        token = _token()
        read = group_of(group.item)
        conditions = [
            attribute == getattr(read, attribute.attr_name)
            if attribute.attr_name in group.item
            else attribute.does_not_exist()
            for attribute in GROUP_STATE
        ]
        as_read: Condition = conditions[0]
        for condition in conditions[1:]:
            as_read &= condition
        delete = delete_request(self.table, group_key(group.queue_id, group.name, group.home), as_read)
        moved = moved_item(group.item, directory_partition(group.queue_id, d), GROUP + group.name, token)
        put = put_request(self.table, moved, GroupItem.pk.does_not_exist())
        home_condition = HomeItem.i == group.token if group.token else HomeItem.pk.does_not_exist()
        home = put_request(self.table, home_item(group.queue_id, group.name, d, token), home_condition)
        return GroupState.of(moved), [{"Delete": delete}, {"Put": put}, {"Put": home}]

    # --- reads ----------------------------------------------------------------------------------

    def groups(self, queue_id: str, shuffled: bool, pages: int | None = None) -> Iterator[GroupState]:
        """The queue's group items: in order; or (`shuffled`) from a random directory partition on, and in one that
        held more than a page when last read, from a random group on and then from its first group up to there.
        At most `pages` Queries (None: all)."""
        directories = self.partitions(queue_id)
        if shuffled:
            first = random.randrange(len(directories))
            directories = directories[first:] + directories[:first]
        budget = [pages]
        for partition in directories:
            for part, condition, start in self._ranges(partition, shuffled):
                for item in self._pages(partition, part, condition, budget):
                    if not (part == _UP_TO and sort_key(item) == start):  # (read already)
                        yield GroupState.of(item)

    def _ranges(self, partition: str, shuffled: bool) -> list[tuple[str, Condition, str]]:
        """How to read a directory partition (each part: which, its sort key condition, where it starts): whole, or
        from a random group on, then up to it."""
        if not (shuffled and partition in self._deep):
            return [(_WHOLE, GroupItem.sk.startswith(GROUP), GROUP)]
        start = GROUP + random.choice(_START_CHARACTERS)
        return [(_FROM, GroupItem.sk >= start, start), (_UP_TO, GroupItem.sk.between(GROUP, start), start)]

    def _pages(self, partition: str, part: str, condition: Condition, budget: list[int | None]) -> Iterator[Item]:
        """The group items of one range of a directory partition, while `budget[0]` Queries remain (None: any)."""
        after: Item | None = None
        first = True
        while budget[0] is None or budget[0] > 0:
            kwargs: dict[str, Any] = {"ExclusiveStartKey": after} if after else {}
            keys = (GroupItem.pk == partition) & condition
            response = self.client.query(**query_request(self.table, keys, Limit=_DIRECTORY_PAGE, **kwargs))
            items, after = list(response["Items"]), response.get("LastEvaluatedKey")
            if budget[0] is not None:
                budget[0] -= 1
            if after is not None:
                self._deep.add(partition)
            elif first and part == _WHOLE:
                self._deep.discard(partition)
            first = False
            yield from items
            if after is None:
                return

    def read(self, queue_id: str, group: str, d: int) -> GroupState | None:
        """A group item read at `d` (consistently: a claim relies on it)."""
        key = group_key(queue_id, group, d)
        item = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True)
        return GroupState.of(item["Item"]) if "Item" in item else None
