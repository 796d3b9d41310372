"""How a scan of a striped queue finds ready messages: the stripes read in turn from a random one while it has too few,
what it read sorted by priority, then position (priority is best effort: within what it read). How it reads a stripe
depends on the queue's `placement.Spread`:

- a quiet queue's stripe (its writes do not keep the ready index): the leases in queue order from the
  table, in flight and delayed ones included, as many as it takes to find enough (on a stripe deeper than a
  page, mostly from a random point of its ready leases, as from the index: `_plain_ready`). The scan reports how many
  it read in vain (`StripeScan.wasted`): too many, and the store turns the index on (`placer.Placer.received`).
- an indexing queue's stripe: the ready index (`pk = stripe AND w <= now`, a small page; on a stripe deeper
  than a page, mostly from a random point down, so concurrent consumers read different pages:
  `stripe_spans.StripeSpans.window`). So a receive never reads a lease it cannot take (in flight or delayed:
  `w > now`); an expired lease it meets (retention over, TTL not yet done) it deletes, so each is read about once.
  Until the index is built over the leases written before it was kept (`ReadyIndex.build`), the stripes that hold
  them are read from the table; so is every stripe while the index cannot be read yet (`IndexUnavailable`).

A pack (`packs`: a batch's messages in one lease item) is read whole (from the index, its keys and place only: the
packs of a page are then read with BatchGetItem) and offers its receivable entries; one read with none (its place
earlier than needed) is moved on (`PackWrites.settle`). The packs a scan read are kept with it, for its claims.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.model.messages import Message, MessageState
from mnsd.storage.dynamodb import dead_letters
from mnsd.storage.dynamodb.layout import (
    INDEX_KEY,
    LEASE,
    TTL_ATTRIBUTE,
    Item,
    candidate_of,
    is_kept,
    message_of,
    state_of,
    stripe_of,
    stripe_partition,
)
from mnsd.storage.dynamodb.message_table import MessageTable
from mnsd.storage.dynamodb.pack_writes import PackWrites
from mnsd.storage.dynamodb.packs import entries, is_pack
from mnsd.storage.dynamodb.placement import Spread
from mnsd.storage.dynamodb.ready_index import IndexUnavailable, ReadyIndex
from mnsd.storage.dynamodb.stripe_spans import StripeSpans

# Pages of expired leases a receive clears from one stripe's head before moving on.
_EXPIRED_PAGES = 4
# Stripes whose next visible time an empty receive reads (a long poll's wake-up), chosen at random.
_NEXT_VISIBLE_STRIPES = 4


@dataclass(frozen=True)
class StripeScan:
    """What a scan found: Active messages by priority then position, when the next one becomes receivable (when it
    found none), and how many leases it read and could not take."""

    messages: list[Message]
    next_visible_at: int | None
    wasted: int
    packs: dict[tuple[str, str], Item]  # the packs read, by (pk, sk)


class StripeReads:
    def __init__(self, table: MessageTable, index: ReadyIndex, packs: PackWrites) -> None:
        self.table = table
        self.index = index
        self.packs = packs
        self.spans = StripeSpans()  # this container's hints, kept across scans

    def scan(self, queue_id: str, now_ms: int, wanted: int, spread: Spread, enough: int) -> StripeScan:
        """Up to `wanted` Active messages from the stripes `spread` reads, taken in turn (`StripeSpans.order`) until
        `enough` are found; when none, when the next one becomes receivable (from a few indexed stripes)."""
        ready: list[Message] = []
        wasted = 0
        next_visible: int | None = None
        packs: dict[tuple[str, str], Item] = {}
        order, sweep = self.spans.order(queue_id, spread, now_ms)
        for stripe in order:
            partition = stripe_partition(queue_id, stripe)
            want, enough_here = wanted - len(ready), (enough or wanted) - len(ready)
            try:
                if not spread.reads_index(stripe):
                    raise IndexUnavailable()
                ready += self._ready_in(partition, now_ms, want, enough_here, packs)
            except IndexUnavailable:
                found, later, waste = self._plain_ready(partition, now_ms, want, enough_here, packs)
                ready += found
                wasted += waste
                if later is not None:
                    next_visible = later if next_visible is None else min(later, next_visible)
            if len(ready) >= (enough or wanted):
                break
        if ready:
            next_visible = None
        else:  # (a wake-up in an indexed stripe not looked at is seen by the next poll)
            indexed = [stripe_partition(queue_id, s) for s in order if spread.reads_index(s)]
            times = [t for t in (self.index.next_visible(p, now_ms) for p in indexed[:_NEXT_VISIBLE_STRIPES]) if t]
            next_visible = min([*times, *([next_visible] if next_visible else [])], default=None)
        if sweep:
            self.spans.swept(queue_id, now_ms, any(stripe_of(m.message_id) >= spread.width for m in ready))
        ready.sort(key=lambda m: (m.priority, m.position))
        return StripeScan(ready, next_visible, wasted, packs)

    # --- from the table ---------------------------------------------------------------------------

    def _plain_ready(
        self, partition: str, now_ms: int, wanted: int, enough: int, packs: dict[tuple[str, str], Item]
    ) -> tuple[list[Message], int | None, int]:
        """Up to `wanted` Active leases of a stripe read from the table in queue order, every lease on the way
        included (an expired one it deletes): from its head, or on a stripe deeper than a page mostly from a random
        point of the ready leases seen there (`StripeSpans.window`, as from the index); when the next one it read
        becomes receivable; how many it read and could not take."""
        priority = self.spans.plain_priority(partition)
        below = self.spans.window(partition, now_ms) if priority >= 0 else None
        if below is not None:
            first = f"{LEASE}{priority:02d}{min(below, now_ms):013d}"
            ready, later, wasted, more = self._read_plain(partition, now_ms, wanted, first, packs)
            if more or len(ready) >= enough:
                self.spans.saw_plain(partition, ready, None)
                return ready, later, wasted
        ready, later, wasted, more = self._read_plain(partition, now_ms, wanted, "", packs)
        self.spans.saw_plain(partition, ready, more)
        return ready, later, wasted

    def _read_plain(
        self, partition: str, now_ms: int, wanted: int, first: str, packs: dict[tuple[str, str], Item]
    ) -> tuple[list[Message], int | None, int, bool]:
        ready: list[Message] = []
        next_visible: int | None = None
        wasted = 0
        more = False
        pages = dead_letters.lease_pages(self.table.client, self.table.name, [partition], None, max(1, wanted), first)
        for items, unread in pages:
            more = unread
            for item in _unpacked(items, packs, now_ms):
                state = state_of(item, now_ms)
                if state is MessageState.ACTIVE:
                    ready.append(message_of(item))
                    continue
                wasted += 1
                if state is MessageState.EXPIRED and not is_kept(item):
                    self.table.delete_expired(item, now_ms)  # (an expired pack: itself, not its entries)
                elif state is not MessageState.EXPIRED:
                    visible_at = int(item["v"]["N"])
                    next_visible = visible_at if next_visible is None else min(next_visible, visible_at)
            if len(ready) >= wanted:
                break
        return ready[:wanted], next_visible, wasted, more

    # --- from the ready index -------------------------------------------------------------------

    def _ready_in(
        self, partition: str, now_ms: int, wanted: int, enough: int, packs: dict[tuple[str, str], Item]
    ) -> list[Message]:
        """Up to `wanted` Active leases of one stripe: at its head, or (`StripeSpans.window`) older than a random
        point of the span of `v` this container saw there; expired ones met on the way are deleted."""
        below = self.spans.window(partition, now_ms)
        if below is not None:
            ready, _, more = self._read_ready(partition, now_ms, wanted, below, packs)
            if more or len(ready) >= enough:  # (else it met the head with too few: the head has more)
                self.spans.saw(partition, ready, None, None)
                return ready
        ready, head, more = self._read_ready(partition, now_ms, wanted, None, packs)
        self.spans.saw(partition, ready, head, more)
        return ready

    def _read_ready(
        self, partition: str, now_ms: int, wanted: int, below: int | None, packs: dict[tuple[str, str], Item]
    ) -> tuple[list[Message], int | None, bool]:
        """Active leases from the head (`below` None) or downwards from `v <= below`; the oldest `v` read (from
        the head: the stripe's head) and whether more were left unread."""
        ready: list[Message] = []
        start = None
        unread = False
        oldest: int | None = None
        bound = now_ms if below is None else min(below, now_ms)
        for _ in range(_EXPIRED_PAGES):
            items, start = self.index.page(
                partition, "w <= :now", {":now": {"N": str(bound)}}, wanted, start, forward=below is None
            )
            expired = 0
            whole, unread = self.table.whole(items, wanted - len(ready))  # (unread: the packs read may do)
            for item in whole:
                v = int(item[INDEX_KEY]["N"])
                oldest = v if oldest is None else min(oldest, v)
                if is_pack(item) and not _expired(item, now_ms):
                    leases = _unpacked([item], packs, now_ms)
                    found = [message_of(e) for e in leases if state_of(e, now_ms) is MessageState.ACTIVE]
                    ready += found
                    if not found:
                        self.packs.settle(item, now_ms, True)
                    continue
                if state_of(item, now_ms) is MessageState.ACTIVE:
                    ready.append(candidate_of(item))
                else:
                    self.table.delete_expired(item, now_ms)
                    expired += 1
            if unread or not expired or start is None or len(ready) >= wanted:
                break
        return ready, oldest, unread or start is not None


def _expired(item: Item, now_ms: int) -> bool:
    return int(item[TTL_ATTRIBUTE]["N"]) <= now_ms // 1000


def _unpacked(items: list[Item], packs: dict[tuple[str, str], Item], now_ms: int) -> list[Item]:
    """Lease items with each unexpired pack's entries in its place (`packs.entries`; an expired pack stays itself:
    it is expired as a whole), the packs kept in `packs`."""
    leases: list[Item] = []
    for item in items:
        if is_pack(item) and not _expired(item, now_ms):
            packs[(item["pk"]["S"], item["sk"]["S"])] = item
            leases += entries(item)
        else:
            leases.append(item)
    return leases
