"""How a scan of a striped queue finds ready messages: the stripes read in turn from a random one while it has too few,
what it read sorted by priority, then position (priority is best effort: within what it read). How it reads a stripe
depends on the queue's `placement.Spread`:

- a quiet queue's stripe (its writes do not keep the ready index): the leases in queue order from the
  table, in flight and delayed ones included, as many as it takes to find enough (on a stripe deeper than a
  page, mostly from a random point of its ready leases, as from the index: `_plain_ready`). The scan reports how many
  it read in vain (`StripeScan.wasted`): too many, and its claim turns the index on (`placer.Placer.received`).
- an indexing queue's stripe: the ready index (`pk = stripe AND w <= now`, a small page; on a stripe deeper
  than a page, mostly from a random point down, so concurrent consumers read different pages:
  `stripe_spans.StripeSpans.window`). A receive reads no delayed lease, nor one in flight whose claim moved its `w`
  (`w > now`); an expired lease it meets (retention over, TTL not yet done) it deletes, so each is read about once.
  A lease claimed with its `w` left in place (`layout.held_version`) stays in `w <= now` while it is held: the
  receive tells it from its entry (`layout.index_due`) and reads past it. Where a read met `_CROWD` such entries,
  the receive's claims there move `w` (`StripeScan.crowded`); the entries it met held long (the same claim seconds
  apart, `StripeSpans.held_long`), or past `_LIFT` in one read, it moves (`ReadyIndex.lift`); a held head a
  container read it reads past from its end till one of it may come back (`StripeSpans.held_below`). So the held
  entries a receive reads past stay few whatever is in flight; their earliest time is the next visible time a long
  poll waits for (`StripeScan.next_visible_at`).
  Until the index is built over the leases written before it was kept (`ReadyIndex.build`), the stripes that hold
  them are read from the table; so is every stripe while the index cannot be read yet (`IndexUnavailable`).

A pack (`packs`: a batch's messages in one lease item) is read whole (from the index, its keys and place only: the
packs of a page are then read with BatchGetItem) and offers its receivable entries; one read with none (its place
earlier than needed) is moved on (`PackWrites.settle`).

A scan claims what it read (`StripeScan.claim`, the claim a receive's `ReadyScan` binds): the references it is given,
grouped by the item that stores them (`packs.by_pack`), each single lease claimed alone, a pack's entries in one write
of the pack as the scan read it (one it did not read, read then). So no pack read travels out of the scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from botocore.exceptions import ClientError

from mnsd.model.messages import Message, MessageState
from mnsd.model.ports import candidates
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.layout import (
    LEASE,
    Item,
    candidate_of,
    index_due,
    is_kept,
    message_of,
    partition_of,
    state_of,
    stripe_of,
    stripe_partition,
)
from mnsd.storage.dynamodb.items.leases import IndexEntry, LeaseItem, place_of, read
from mnsd.storage.dynamodb.items.message_table import MessageTable, throttled
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import by_pack, entries, is_pack
from mnsd.storage.dynamodb.placement.placement import Spread
from mnsd.storage.dynamodb.placement.placer import Placer
from mnsd.storage.dynamodb.standard.ready_index import IndexUnavailable, ReadyIndex, due_by
from mnsd.storage.dynamodb.standard.stripe_spans import StripeSpans

# Pages of expired leases a receive clears from one stripe before moving on.
_EXPIRED_PAGES = 4
# A stripe whose read met this many held entries (claimed with `w` left in place) is crowded: the receive's claims
# there move `w` (as a claim did before), so the entries held in place in a stripe stay about this many (and as many
# as consumers racing claim before they meet them).
_CROWD = 24
# A receive reads on past held entries while it has too few, in pages each twice as long as the one before, to this
# many entries; it moves those it met held long (`StripeSpans.held_long`), and, should it read past `_LIFT` in one
# read, all of them (`ReadyIndex.lift`): the next receives read past them no more.
_LONGEST_PAGE = 1000
_LIFT = 500
# Stripes whose next visible time an empty receive reads (a long poll's wake-up), chosen at random.
_NEXT_VISIBLE_STRIPES = 4


class LeaseClaim(Protocol):
    """A single message's claim (`striped.StripedMessageStore.claim_lease`): the claimed message; None if another
    consumer changed its lease first; False if throttled. `crowded`: its stripe's read met a crowd of held entries."""

    def __call__(self, message: Message, now_ms: int, visible_at: int, crowded: bool) -> Message | None | bool: ...


@dataclass
class _Held:
    """The held entries (claimed with `w` left in place, `layout.held_version`) a scan's reads of the index met."""

    crowded: set[str] = field(default_factory=set)  # partitions where a read met `_CROWD` or more
    due: int | None = None  # the earliest time one of them is receivable again

    def met(self, items: list[Item]) -> None:
        """A read met held entries `items`."""
        dues = [due for due in map(index_due, items) if due is not None]
        self.due = min([*dues, *([self.due] if self.due is not None else [])], default=None)


class StripeReads:
    """What a container reads striped queues with, and its hints, kept across scans (`StripeSpans`); each scan its
    own `StripeScan`."""

    def __init__(
        self, table: MessageTable, index: ReadyIndex, packs: PackWrites, placer: Placer, claim_lease: LeaseClaim
    ) -> None:
        self.table = table
        self.index = index
        self.packs = packs
        self.placer = placer
        self.claim_lease = claim_lease
        self.spans = StripeSpans()  # this container's hints, kept across scans

    def scan(self, queue_id: str, now_ms: int, wanted: int, spread: Spread, enough: int) -> StripeScan:
        """Up to `wanted` Active messages from the stripes `spread` reads, taken in turn (`StripeSpans.order`) until
        `enough` are found; when none, when the next one becomes receivable (from a few indexed stripes)."""
        scan = StripeScan(self, queue_id, enough)
        scan.read(now_ms, wanted, spread)
        return scan


class StripeScan:
    """One scan of a striped queue: what it found (Active messages by priority then position, when the next one
    becomes receivable when it found none, how many leases it read and could not take), and its claim of them
    (`claim`), with the packs it read."""

    def __init__(self, reads: StripeReads, queue_id: str, enough: int) -> None:
        self.table, self.index, self.packs, self.spans = reads.table, reads.index, reads.packs, reads.spans
        self.placer, self.claim_lease = reads.placer, reads.claim_lease
        self.queue_id = queue_id
        self.enough = enough
        self.messages: list[Message] = []
        self.next_visible_at: int | None = None
        self.wasted = 0
        self.crowded: frozenset[str] = frozenset()  # partitions whose read met `_CROWD` held entries or more
        self.read_packs: dict[tuple[str, str], Item] = {}  # the packs read, by (pk, sk)
        self._placed = False  # the placement work the receive leaves, done (`_place`)

    def read(self, now_ms: int, wanted: int, spread: Spread) -> None:
        """Read the stripes in turn (`StripeReads.scan`), what it found kept on the scan."""
        ready: list[Message] = []
        wasted = 0
        next_visible: int | None = None
        held = _Held()
        queue_id, enough = self.queue_id, self.enough
        order, sweep = self.spans.order(queue_id, spread, now_ms)
        for stripe in order:
            partition = stripe_partition(queue_id, stripe)
            want, enough_here = wanted - len(ready), (enough or wanted) - len(ready)
            try:
                if not spread.reads_index(stripe):
                    raise IndexUnavailable()
                ready += self._ready_in(partition, now_ms, want, enough_here, held)
            except IndexUnavailable:
                found, later, waste = self._plain_ready(partition, now_ms, want, enough_here)
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
            times += [t for t in (next_visible, held.due) if t is not None]
            next_visible = min(times, default=None)
        if sweep:
            self.spans.swept(queue_id, now_ms, any(stripe_of(m.message_id) >= spread.width for m in ready))
        ready.sort(key=lambda m: (m.priority, m.position))
        self.messages, self.next_visible_at, self.wasted = ready, next_visible, wasted
        self.crowded = frozenset(held.crowded)

    # --- its claim --------------------------------------------------------------------------------

    def claim(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """Claim candidates in their order until `count` are owned (`ReadyScan.claim`). A lost claim means another
        consumer works the same page of that stripe: the rest of that stripe's candidates are left to it (the
        receive returns what it has, or reads again), so consumers that meet on one page lose about one claim, not
        one each. A pack's candidates it has room for are claimed together, in one write of the pack as this scan
        read it (one it did not, read now); so that packs do not crowd out the single messages among the first
        `count` candidates (what the caller would have), those are claimed first. A single message of a stripe
        whose read met a crowd of held entries (`crowded`) is claimed moving `w`. Then the placement work the
        receive leaves (`_place`)."""
        claimed: list[Message] = []
        lost: dict[str, int] = {}
        left: set[str] = set()  # stripes (partitions) where a claim was lost
        for members, key in self._claim_order(candidates, count, now_ms):
            if len(claimed) >= count:
                break
            first = members[0]
            partition = partition_of(first.ref)
            if partition in left:
                continue
            outcome: Message | list[Message] | None | bool
            try:
                if key is None:
                    outcome = self.claim_lease(first, now_ms, visible_at, partition in self.crowded)
                else:
                    pack = self.read_packs.get(key) or self.packs.read(first.ref)  # (one it did not read: read now)
                    taken = members[: count - len(claimed)]
                    outcome = (
                        None
                        if pack is None
                        else self.packs.claim(pack, taken, now_ms, visible_at, self._indexing(first.queue_id))
                    )
            except ClientError as exc:
                self._throttled(exc, first.queue_id)  # (a single lease's claim tells its own: False)
                outcome = None
            if outcome is False:
                continue
            if isinstance(outcome, Message):
                claimed.append(outcome)
            elif isinstance(outcome, list) and outcome:
                claimed += outcome
            else:
                lost[first.queue_id] = lost.get(first.queue_id, 0) + 1
                left.add(partition)
        self._tally(candidates, claimed, lost)
        self._place()
        return claimed

    def _claim_order(
        self, candidates: list[Message], count: int, now_ms: int
    ) -> list[tuple[list[Message], tuple[str, str] | None]]:
        """The Active candidates by the item that stores them (`packs.by_pack`: a pack's together, at its first's
        place; `None` for a single lease), the single ones among the first `count` first."""
        active = [c for c in candidates if c.state_at(now_ms) is MessageState.ACTIVE]
        stored = [([active[n] for n in s.places], s.pack) for s in by_pack([m.ref for m in active])]
        window = {id(c) for c in active[:count]}
        first = [s for s in stored if s[1] is None and id(s[0][0]) in window]
        return [*first, *(s for s in stored if not (s[1] is None and id(s[0][0]) in window))]

    def _indexing(self, queue_id: str) -> bool:
        return self.placer.of(queue_id).spread.indexing

    def _throttled(self, exc: ClientError, queue_id: str) -> None:
        """A pack's claim refused for throttling: told the queue's pressure (any other error raised)."""
        if not throttled(exc):
            raise exc
        self.placer.growth.pressure.throttled(queue_id)

    def _tally(self, candidates: list[Message], claimed: list[Message], lost: dict[str, int]) -> None:
        for queue_id in {m.queue_id for m in candidates}:
            won = sum(1 for m in claimed if m.queue_id == queue_id)
            self.placer.growth.pressure.claims(queue_id, won, lost.get(queue_id, 0))

    def _place(self) -> None:
        """The placement work a receive leaves (`Placer.received`: growth, the ready index turned on or built a
        step), once, after its first claim."""
        if self._placed:
            return
        self._placed = True
        seen = len(self.messages)
        self.placer.received(self.queue_id, seen, seen < candidates(self.enough), self.wasted, self.index.build)

    # --- from the table ---------------------------------------------------------------------------

    def _plain_ready(
        self, partition: str, now_ms: int, wanted: int, enough: int
    ) -> tuple[list[Message], int | None, int]:
        """Up to `wanted` Active leases of a stripe read from the table in queue order, every lease on the way
        included (an expired one it deletes): from its head, or on a stripe deeper than a page mostly from a random
        point of the ready leases seen there (`StripeSpans.window`, as from the index); when the next one it read
        becomes receivable; how many it read and could not take."""
        priority = self.spans.plain_priority(partition)
        below = self.spans.window(partition, now_ms) if priority >= 0 else None
        if below is not None:
            first = f"{LEASE}{priority:02d}{min(below, now_ms):013d}"
            ready, later, wasted, more = self._read_plain(partition, now_ms, wanted, first)
            if more or len(ready) >= enough:
                self.spans.saw_plain(partition, ready, None)
                return ready, later, wasted
        ready, later, wasted, more = self._read_plain(partition, now_ms, wanted, "")
        self.spans.saw_plain(partition, ready, more)
        return ready, later, wasted

    def _read_plain(
        self, partition: str, now_ms: int, wanted: int, first: str
    ) -> tuple[list[Message], int | None, int, bool]:
        ready: list[Message] = []
        next_visible: int | None = None
        wasted = 0
        more = False
        pages = dead_letters.lease_pages(self.table.client, self.table.name, [partition], None, max(1, wanted), first)
        for items, unread in pages:
            more = unread
            for item in self._unpacked(items, now_ms):
                state = state_of(item, now_ms)
                if state is MessageState.ACTIVE:
                    ready.append(message_of(item))
                    continue
                wasted += 1
                if state is MessageState.EXPIRED and not is_kept(item):
                    self.table.delete_expired(item, now_ms)  # (an expired pack: itself, not its entries)
                elif state is not MessageState.EXPIRED:
                    visible_at: int = read(item, LeaseItem.v)
                    next_visible = visible_at if next_visible is None else min(next_visible, visible_at)
            if len(ready) >= wanted:
                break
        return ready[:wanted], next_visible, wasted, more

    # --- from the ready index -------------------------------------------------------------------

    def _ready_in(self, partition: str, now_ms: int, wanted: int, enough: int, held: _Held) -> list[Message]:
        """Up to `wanted` Active leases of one stripe: at its head, or (`StripeSpans.window`) older than a random
        point of the span of `v` this container saw there; expired ones met on the way are deleted, held ones
        read past (`_Held`)."""
        below = self.spans.window(partition, now_ms)
        if below is not None:
            ready, _, more = self._read_ready(partition, now_ms, (wanted, enough), below, held)
            if more or len(ready) >= enough:  # (else it met the head with too few: the head has more)
                self.spans.saw(partition, ready, None, None)
                return ready
        ready, head, more = self._read_ready(partition, now_ms, (wanted, enough), None, held)
        self.spans.saw(partition, ready, head, more)
        return ready

    def _read_ready(
        self,
        partition: str,
        now_ms: int,
        wants: tuple[int, int],
        below: int | None,
        held: _Held,
    ) -> tuple[list[Message], int | None, bool]:
        """Active leases from the head (`below` None) or downwards from `w <= below`; the oldest `w` read (from
        the head: the stripe's head) and whether more were left unread. The held entries read are told `held`
        (and moved when they are `_LIFT` or more). It reads on past a page with expired leases while it has fewer
        than `wanted` (`wants`, `_EXPIRED_PAGES` at most), past one with held leases while it has fewer than
        `enough`."""
        wanted, enough = wants
        ready: list[Message] = []
        start = None
        unread = False
        oldest: int | None = None
        bound = now_ms if below is None else min(below, now_ms)
        taken: list[Item] = []  # held entries read
        past = self.spans.held_below(partition, now_ms) if below is None else None
        head = _HeldHeadRead(past)
        # (below the end of a held head, the stripe's head is held till its `until`)
        condition = due_by(bound, None if past is None else past[0])
        pages = lifted = 0
        while True:
            limit = min(wanted << min(pages, 10), _LONGEST_PAGE)
            items, start = self.index.page(partition, condition, limit, start, forward=below is None)
            head.read(items, now_ms)
            pages += 1
            whole, unread = self.table.whole(items, wanted - len(ready))  # (unread: the packs read may do)
            if whole:
                oldest = min([*(read(item, IndexEntry.w) for item in whole), *([oldest] if oldest is not None else [])])
            before = len(taken)
            expired = sum(self._take(item, now_ms, ready, taken) for item in whole)
            held_here = len(taken) - before
            if len(taken) - lifted >= _LIFT:
                self.index.lift(taken[lifted:])
                lifted = len(taken)
            more_wanted = (expired and len(ready) < wanted and pages < _EXPIRED_PAGES) or (
                held_here and len(ready) < enough
            )
            if unread or not more_wanted or start is None:
                break
        if below is None:
            self.spans.held_head(partition, head.end, head.until, now_ms)
            self.index.lift(self.spans.held_long(partition, taken[lifted:], now_ms))
        if len(taken) >= _CROWD:
            held.crowded.add(partition)
        held.met(taken)
        return ready, oldest, unread or start is not None

    def _take(self, item: Item, now_ms: int, ready: list[Message], held: list[Item]) -> bool:
        """An index item read: its receivable lease (a pack's, read whole) added to `ready`, or a held entry (claimed
        with `w` left in place, receivable again at its `index_due`) to `held`; an expired lease deleted (True)."""
        if is_pack(item) and not _expired(item, now_ms):
            found = [
                message_of(e) for e in self._unpacked([item], now_ms) if state_of(e, now_ms) is MessageState.ACTIVE
            ]
            ready += found
            if not found:
                self.packs.settle(item, now_ms, True)
            return False
        state = state_of(item, now_ms)
        if state is MessageState.ACTIVE:
            ready.append(candidate_of(item))
        elif state is MessageState.EXPIRED:
            self.table.delete_expired(item, now_ms)
            return True
        else:
            held.append(item)
        return False

    def _unpacked(self, items: list[Item], now_ms: int) -> list[Item]:
        """Lease items with each unexpired pack's entries in its place (`packs.entries`; an expired pack stays itself:
        it is expired as a whole), the packs kept for the claim (`read_packs`)."""
        leases: list[Item] = []
        for item in items:
            if is_pack(item) and not _expired(item, now_ms):
                self.read_packs[place_of(item)] = item
                leases += entries(item)
            else:
                leases.append(item)
        return leases


class _HeldHeadRead:
    """A read from a stripe's head (or from the end of its held head, `StripeSpans.held_below`): where the held leases
    it read first, before any other, end (the first other's `w`, else the last's), and when the first of them (or of
    those below where it started) is receivable again."""

    def __init__(self, past: tuple[int, int] | None) -> None:
        self.end: int | None = None if past is None else past[0]
        self.until: int | None = None if past is None else past[1]
        self._open = False  # a lease it could take (or a pack) read: the held head ended

    def read(self, items: list[Item], now_ms: int) -> None:
        for item in items:
            if self._open:
                return
            w: int = read(item, IndexEntry.w)
            state = None if is_pack(item) else state_of(item, now_ms)
            if state is MessageState.INACTIVE:
                due = index_due(item) or now_ms
                self.until, self.end = due if self.until is None else min(self.until, due), w
            elif state is MessageState.EXPIRED:
                self.end = w
            else:
                self._open = True
                self.end = w if self.until is not None else None


def _expired(item: Item, now_ms: int) -> bool:
    expires: int = read(item, LeaseItem.x)
    return expires <= now_ms // 1000
