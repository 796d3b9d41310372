"""How the message store places a queue's messages and follows its load: the stripe of each new message, growth
and widening (`mnsd.storage.dynamodb.placement.stripes`), and the ready index turned on and built (`placement.Spread`).

The message store calls it at the points where the load shows: before a send picks its messages' stripes (the
send rate, counted with them), after its writes (throttling), and after each receive's claims (lost claims,
leases read in vain, and a step of building the index).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from mnsd.ground.clock import Clock, ms
from mnsd.model.messages import Message
from mnsd.storage.dynamodb.items.packs import MAX_PACK, pack_ids
from mnsd.storage.dynamodb.placement.placement import Placement, Spread
from mnsd.storage.dynamodb.placement.queue_records import Placements
from mnsd.storage.dynamodb.placement.stripes import INDEX_STEP, INDEX_WASTE, StripeGrowth
from mnsd.storage.ids import new_message_id

# One step of building a queue's ready index: (queue id, spread, cursor, now_ms, budget) -> where to go on from.
IndexBuilder = Callable[[str, Spread, str, int, int], "str | None"]


class Placer:
    def __init__(self, placements: Placements, growth: StripeGrowth, clock: Clock, settle_seconds: float) -> None:
        self.placements = placements
        self.growth = growth
        self.clock = clock
        self.settle_seconds = settle_seconds

    def of(self, queue_id: str) -> Placement:
        return self.placements.of(queue_id)

    def indexed(self, message: Message) -> bool:
        """Whether a new message's lease is written with the ready index's key: a standard queue's that keeps the
        index (a FIFO queue's groups are read from the table)."""
        return not message.fifo and self.placements.of(message.queue_id).spread.indexing

    def new_ids(self, queue_id: str, count: int, now_ms: int, packed: bool = False) -> list[str]:
        """Ids of `count` new messages of the queue, each naming a stripe among the first `send_width` at random:
        they count in the queue's send rate first (whoever sends them: a dead letter or a receiver's copy writes the
        queue's stripes as a send does), which may widen or grow it (so they spread at the rate including them).
        `packed`: a batch's, up to `packs.MAX_PACK` at a time in a stripe, packed together (`packs.pack_ids`)."""
        placement = self._grow(queue_id, self.placements.of(queue_id), sent=count)
        width = placement.send_width(now_ms)
        if not packed or count < 2:
            return [new_message_id(now_ms, secrets.randbelow(width) + 1) for _ in range(count)]
        ids: list[str] = []
        for start in range(0, count, MAX_PACK):
            size = min(MAX_PACK, count - start)
            stripe = secrets.randbelow(width)
            ids += pack_ids(size, stripe, now_ms) if size > 1 else [new_message_id(now_ms, stripe + 1)]
        return ids

    def written(self, queue_id: str) -> None:
        """After messages of the queue were written: grow if the load seen asks for it (throttled writes)."""
        self._grow(queue_id, self.placements.of(queue_id))

    def received(self, queue_id: str, seen: int, scarce: bool, wasted: int, build: IndexBuilder) -> None:
        """After a receive's claims from a page of `seen` candidates (`scarce`: fewer than it looked for), having
        read `wasted` leases it could not take: grow if the claims ask for it, and turn the ready index on or
        build it a step further (`index`)."""
        placement = self.placements.of(queue_id)
        if seen:
            placement = self._grow(queue_id, placement, scarce=scarce)
        self._index(queue_id, placement, wasted, build)

    def _grow(self, queue_id: str, placement: Placement, scarce: bool = False, sent: int = 0) -> Placement:
        """The queue sending over more stripes if the load this container saw asks for them: over all it has
        again, or with more (a queue that grows keeps its ready index from then on)."""
        now_ms = ms(self.clock.now())
        wanted = self.growth.wanted(queue_id, placement.send_width(now_ms), scarce, sent)
        if wanted is None:
            return placement
        if wanted > placement.stripes:
            return self.placements.grow(queue_id, placement, wanted, now_ms)
        return self.placements.widen(queue_id, placement, now_ms)

    def _index(self, queue_id: str, placement: Placement, wasted: int, build: IndexBuilder) -> None:
        """Turn the queue's ready index on if a receive read `wasted` leases it could not take, too many
        (`INDEX_WASTE`), or this container's receives lose many claims (the index lets them read different pages);
        or build it a step further (`INDEX_STEP` leases) once every container writes it (`settle_seconds` after
        it was turned on)."""
        now_ms = ms(self.clock.now())
        if not placement.index_since:
            if wasted >= INDEX_WASTE or self.growth.contended(queue_id):
                self.placements.start_index(queue_id, placement, now_ms)
            return
        if not placement.plain_stripes or now_ms < placement.index_since + self.settle_seconds * 1000:
            return
        cursor = build(queue_id, placement.spread, placement.index_cursor, now_ms, INDEX_STEP)
        self.placements.advance_index(queue_id, placement, cursor)
