"""Where a queue's messages lie in the message table: the DynamoDB engine's own state of each queue incarnation.

- `stripes`: how many partitions its messages spread over (stripes 0 .. stripes - 1, `layout.stripe_partition`):
  sends pick one of the first `send_width` at random (the stripe is part of the message id, `layout.stripe_of`),
  receives read those and now and then all. It only ever grows, so no receiver misses a stripe that holds
  messages (`mnsd.storage.dynamodb.placement.stripes`: when it grows).
- `index_since`: since when (epoch ms; 0: not) its writes keep the ready index (`Spread.indexing`);
  `plain_stripes`: how many of its first stripes may still hold leases the index lacks (while `index_since` is 0,
  every stripe is read from the table); `index_cursor`: how far building the index over them has come.
- `widened_at`: when (epoch ms) it last needed all its stripes: it grew, or a container sent faster than its width
  allows or was throttled (0: always, as a queue made wide from the start).

The state is kept in the queue's record of the meta table (`mnsd.control.catalog`), beside what the catalog
writes there, under its own fields (`Placement.record`), and read, cached and updated by the engine alone
(`mnsd.storage.dynamodb.placement.queue_records`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mnsd.storage.dynamodb.items.layout import MAX_STRIPES
from mnsd.storage.dynamodb.items.placement import PLACEMENT_FIELDS

WIDTH_HALVING_MS = 600_000  # a queue no longer busy sends over half as many stripes every 10 min (`send_width`)
WIDTH_LAG_MS = 60_000  # receives read the send width of this long ago (longer than a cached record plus a request)


@dataclass(frozen=True)
class Spread:
    """How a queue incarnation's messages lie in the table's partitions, and how receives find them.

    - `stripes`: its partitions, 0 .. stripes - 1.
    - `indexing`: writes keep the ready index, the table's index of leases by visible time that lets a receive
      read only what it can claim. Keeping it costs writes, so a quiet queue does not: it starts without, and
      a queue whose receives read many leases they cannot take or lose many claims, or that grows stripes,
      turns it on for good (`mnsd.storage.dynamodb.placement.stripes`).
    - `plain`: stripes 0 .. plain - 1 may hold leases the index lacks (written before `indexing`, until the
      index is built over them): receives and counts read those from the table, the others from the index.
    - `width`: the stripes 0 .. width - 1 sends spread over now (`Placement.send_width`; 0: all): a receive reads
      those, and the others only in a sweep now and then, or while sweeps find messages there.
    """

    stripes: int = 1
    indexing: bool = False
    plain: int = 1
    width: int = 0

    def reads_index(self, stripe: int) -> bool:
        return self.indexing and stripe >= self.plain


PLAIN = Spread()


# The fields of a queue's record that are the engine's (`Placement.record`): its model's (`items.placement`).
FIELDS = PLACEMENT_FIELDS


@dataclass(frozen=True)
class Placement:
    """A queue incarnation's stripes, send width and ready index (see the module's docstring)."""

    stripes: int = 1
    index_since: int = 0
    plain_stripes: int = 0
    index_cursor: str = ""
    widened_at: int = 0

    @classmethod
    def new(cls, stripes: int, now_ms: int) -> Placement:
        """A new queue's: `stripes` stripes; one made striped from the start keeps its ready index from the start."""
        stripes = max(1, min(stripes, MAX_STRIPES))
        return cls(stripes, now_ms if stripes > 1 else 0)

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> Placement:
        return cls(
            int(record.get("stripes", 1)),  # records written before queues had stripes: one
            int(record.get("index_since", 0)),
            int(record.get("plain_stripes", 0)),
            str(record.get("index_cursor", "")),
            int(record.get("widened_at", 0)),
        )

    def record(self) -> dict[str, Any]:
        """Its fields in the queue's record (the index's only while its writes keep it)."""
        return {"stripes": self.stripes, **({"widened_at": self.widened_at} if self.widened_at else {}), **self.index()}

    def index(self) -> dict[str, Any]:
        """The state of its ready index in the record: nothing while its writes do not keep it."""
        if not self.index_since:
            return {}
        return {"index_since": self.index_since, "plain_stripes": self.plain_stripes, "index_cursor": self.index_cursor}

    @property
    def spread(self) -> Spread:
        if not self.index_since:
            return Spread(self.stripes, False, self.stripes)
        return Spread(self.stripes, True, min(self.plain_stripes, self.stripes))

    def send_width(self, now_ms: int) -> int:
        """How many of its first stripes sends spread over at `now_ms`: all of them for `WIDTH_HALVING_MS` after it
        last needed them, then half as many every `WIDTH_HALVING_MS`, down to one. A queue that is no longer busy
        gathers its messages in few stripes again, where receives find them without reading every stripe; one
        that still is widens again at once (`mnsd.storage.dynamodb.placement.stripes`)."""
        if not self.widened_at or self.stripes == 1:
            return self.stripes
        halvings = max(0, now_ms - self.widened_at) // WIDTH_HALVING_MS
        return max(1, self.stripes >> min(halvings, 30))

    def read_spread(self, now_ms: int) -> Spread:
        """`spread` for a receive at `now_ms`: the stripes it reads besides its sweeps of all of them, the send width
        of `WIDTH_LAG_MS` ago (wider than any container with a cached record may still send over)."""
        return dataclasses.replace(self.spread, width=self.send_width(now_ms - WIDTH_LAG_MS))

    def grown(self, stripes: int, now_ms: int) -> Placement:
        """With `stripes` stripes from `now_ms`, sending over all: a queue that grows keeps the ready index from then
        on (its new stripes indexed from the start; the others read from the table until the index is built)."""
        grown = dataclasses.replace(self, stripes=stripes, widened_at=now_ms)
        if self.index_since:
            return grown
        return dataclasses.replace(grown, index_since=now_ms, plain_stripes=self.stripes, index_cursor="")

    def indexed_from(self, now_ms: int) -> Placement:
        """With its writes keeping the ready index from `now_ms` on, every stripe read from the table until built."""
        return dataclasses.replace(self, index_since=now_ms, plain_stripes=self.stripes, index_cursor="")

    def built_to(self, cursor: str | None) -> Placement:
        """With its ready index built up to `cursor` (None: all of it, no stripe read from the table any more)."""
        if cursor is None:
            return dataclasses.replace(self, index_cursor="", plain_stripes=0)
        return dataclasses.replace(self, index_cursor=cursor)
