"""Standard queues' messages on the DynamoDB message table: one small lease item per message, the body inline when it
fits in 1 KB (the layout is `mnsd.storage.dynamodb.items.layout`).

A queue's messages spread over its stripes (partitions): a send writes each message to the stripe its id names; a
receive reads stripes in turn (`stripe_reads`: how, and the container's hints that steer it, `stripe_spans`). Where
they go and how a stripe is read follow the queue's `placement.Spread`, which the store keeps itself
(`placer.Placer`: growth with the load it sees, the ready index turned on and built, `ready_index`). A receive's
scan is its claim (`stripe_reads.StripeScan.claim`, bound into the `ReadyScan` it returns): it claims what it read,
a single lease through this store's `_claim`, a pack's entries through `PackWrites.claim`, then does the placement
work the receive leaves.

A claim is a conditional UpdateItem of the lease (`version` as observed, visible and unexpired), so two consumers
can never own one message; the index is eventually consistent on AWS, and a stale candidate just fails its claim.
A consumer that loses a claim leaves the rest of that page of its stripe to the winner. Nothing ever rewrites a
body: DynamoDB bills UpdateItem by the whole item, so only the small lease changes and TTL (`x`, free) removes what
retention ends. Deleting a message deletes its lease; an out-of-line body is left to TTL, so a receiver's copy
may name its original's body item instead of writing its own (`shared_bodies`). Counts read a bounded sample per
stripe (`stripe_counts`).

With `packed` (`Settings.packed_batches`), a batch's messages are stored together, a pack (`packs`; its writes,
`pack_writes`): a receive claims a pack's entries it takes in one write, a batch delete removes them in one. Single
messages, and the packs of tables written before, are read and written as ever.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import ClientError

from mnsd.model.messages import Message, MessageRef
from mnsd.model.ports import ReadyScan, candidates
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.layout import (
    Item,
    acted,
    held_request,
    held_version,
    lease_item_key,
    message_of,
    request,
    stripe_partition,
    version_is,
    visible,
)
from mnsd.storage.dynamodb.items.leases import LeaseItem, key_of, place_of
from mnsd.storage.dynamodb.items.message_table import MessageTable, throttled
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import by_pack, failed_messages, items_of, pack_of
from mnsd.storage.dynamodb.items.shared_bodies import share
from mnsd.storage.dynamodb.placement.placer import Placer
from mnsd.storage.dynamodb.placement.stripes import CONTENDED_SPREAD
from mnsd.storage.dynamodb.standard import enqueued
from mnsd.storage.dynamodb.standard.ready_index import ReadyIndex
from mnsd.storage.dynamodb.standard.stripe_counts import StripeCounts
from mnsd.storage.dynamodb.standard.stripe_reads import StripeReads


class StripedMessageStore:
    """`mnsd.model.ports.MessageStore` for standard queues (and their receivers)."""

    def __init__(self, client: Any, table: str, placer: Placer, packed: bool = False) -> None:
        self.items = MessageTable(client, table)
        self.placer = placer
        self.packed = packed
        self.pressure = placer.growth.pressure
        self.index = ReadyIndex(self.items)
        self.packs = PackWrites(client, table)
        self.reads = StripeReads(self.items, self.index, self.packs, placer, self._claim)
        self.tallies = StripeCounts(self.items, self.index)

    @property
    def client(self) -> Any:
        return self.items.client

    @client.setter
    def client(self, client: Any) -> None:  # (a test or benchmark counting calls swaps it for every part)
        self.items.client = self.packs.client = client

    @property
    def table(self) -> str:
        return self.items.name

    def _indexing(self, queue_id: str) -> bool:
        return self.placer.of(queue_id).spread.indexing

    # --- writes -------------------------------------------------------------------------------

    def new_ids(self, queue_id: str, count: int, now_ms: int, groups: Sequence[str] = ()) -> list[str]:
        """Ids naming stripes of the queue's send width (`Placer.new_ids`): a batch's packed together if `packed`."""
        return self.placer.new_ids(queue_id, count, now_ms, self.packed)

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (`MessageTable.put`: body items first; a receiver's copy naming its original's body items,
        `shared_bodies`); the ids of those that could not be stored."""
        indexing = {m.queue_id: self._indexing(m.queue_id) for m in messages}
        items, referring = share(messages, items_of(messages, indexing))  # (receivers' copies: their bodies once)
        failed = self.items.put(items, self.pressure.throttled, referring)
        for queue_id in indexing:
            self.placer.written(queue_id)
        return failed_messages(messages, failed)

    def _claim(self, message: Message, now_ms: int, visible_at: int, crowded: bool = False) -> Message | None | bool:
        """The claimed message; None if another consumer changed the lease first; False if throttled. On a queue that
        keeps the ready index, the lease's `w` stays where it is and its `r` tells how long the claim holds it
        (`layout.held_version`: one index write, in place, not a delete and a put), unless its stripe's read met a
        crowd of held entries (`crowded`): then `w` moves with `v`, as every claim did before."""
        after = message.received(now_ms, visible_at)
        indexing = self._indexing(message.queue_id)
        in_place = indexing and not crowded
        version = held_version(after.version, after.visible_at) if in_place else after.version
        moved = [LeaseItem.v.set(after.visible_at)] if in_place else visible(after.visible_at, indexing)
        lease = LeaseItem
        update = [*moved, lease.r.set(version), lease.d.set(lease.d + 1), lease.f.set(lease.f | now_ms), *acted()]
        active = version_is(message.version) & (lease.v <= now_ms) & (lease.x > now_ms // 1000)
        claim = request(self.table, lease_item_key(message.ref), active, *update)
        try:
            response = conditional(self.client.update_item, **claim, ReturnValues="ALL_NEW")
        except ClientError as exc:
            if not throttled(exc):
                raise
            self.pressure.throttled(message.queue_id)
            return False
        return None if response is None else message_of(response["Attributes"])

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """Delete each message whose lease is still the one a receipt handle names (`Message.held_by`): a pack's
        together (`PackWrites.delete`)."""
        done = [False] * len(leases)
        for stored in by_pack([ref for ref, _ in leases]):
            numbers = stored.places
            if stored.pack is not None:
                outcomes = self.packs.delete([leases[n] for n in numbers], now_ms)
            else:
                deletes = (held_request(self.table, *leases[n], now_ms) for n in numbers)
                outcomes = [conditional(self.client.delete_item, **delete) is not None for delete in deletes]
            for n, outcome in zip(numbers, outcomes, strict=True):
                done[n] = outcome
        return done

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a message whose lease is still the one a receipt handle names (`Message.retimed`)."""
        if pack_of(ref) is not None:
            return self.packs.retime(ref, version, now_ms, visible_at, self._indexing(ref.queue_id))
        retimed = [*visible(visible_at, self._indexing(ref.queue_id)), LeaseItem.r.set(version + 1), *acted()]
        response = conditional(self.client.update_item, **held_request(self.table, ref, version, now_ms, *retimed))
        return response is not None

    # --- reads --------------------------------------------------------------------------------

    def scan_ready(self, queue_id: str, now_ms: int, count: int) -> ReadyScan:
        """A receive's `candidates(count)` Active, unexpired messages (from the index, their leases only: `load_bodies`
        reads the rest), by priority then position among those read (`StripeReads.scan`): the stripes of the send
        width a minute ago (`Placement.read_spread`) besides its sweeps, until it has `count`, a page
        `CONTENDED_SPREAD` times wider while this container's receives of the queue lose many claims; claimed through
        the scan itself (`StripeScan.claim`), which then does the placement work the receive leaves."""
        wanted = candidates(count)
        placement = self.placer.of(queue_id)
        page = wanted * CONTENDED_SPREAD if self.placer.growth.contended(queue_id) else wanted
        found = self.reads.scan(queue_id, now_ms, page, placement.read_spread(now_ms), count)
        return ReadyScan(found.messages, found.next_visible_at, claimer=found.claim)

    def peek_ready(self, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        """Up to `wanted` Active, unexpired messages from every stripe (their leases only)."""
        found = self.reads.scan(queue_id, now_ms, wanted, self.placer.of(queue_id).spread, wanted).messages
        return found[:wanted]  # (a page of the index holding packs offers their entries: more than its items)

    def load_bodies(self, messages: list[Message]) -> None:
        """Complete what `scan_ready` (leases as the index holds them) or `claim` (bodies out of line) left out."""
        self.items.load_bodies(messages)

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        """Active / Inactive / Delayed messages, from a bounded sample per stripe (`StripeCounts.backlog`)."""
        return self.backlog(queue_id, now_ms).counts

    def backlog(self, queue_id: str, now_ms: int) -> Backlog:
        return self.tallies.backlog(queue_id, now_ms, self.placer.of(queue_id).spread)

    # --- dead letters and rewind (`dead_letters`) -----------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        indexed = self.placer.indexed(target)
        removal = self.packs.removal(source, now_ms, dead_letters.moved_mark(source, target))
        return dead_letters.move(self.client, self.table, source, now_ms, target, indexed, removal=removal)

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        done = [False] * len(leases)
        for stored in by_pack([ref for ref, _ in leases]):
            numbers = stored.places
            chosen = [leases[n] for n in numbers]
            if stored.pack is not None:
                outcomes = [self.packs.keep(ref, version, now_ms) for ref, version in chosen]
            else:
                outcomes = dead_letters.delete_keeping(self.client, self.table, chosen, now_ms)
            for n, outcome in zip(numbers, outcomes, strict=True):
                done[n] = outcome
        return done

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        spread = self.placer.of(queue_id).spread
        partitions = _partitions(queue_id, spread.stripes)

        def pack(item: Item) -> int:
            whole = self._whole(item)
            return 0 if whole is None else self.packs.rewind(whole, since_ms, now_ms, spread.indexing)

        return dead_letters.rewind(self.client, self.table, partitions, since_ms, now_ms, spread.indexing, pack)

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
        partitions = _partitions(queue_id, self.placer.of(queue_id).stripes)

        def pack(item: Item) -> int:
            whole = self._whole(item)
            return 0 if whole is None else self.packs.drop_kept(whole)

        return dead_letters.drop_kept(self.client, self.table, partitions, pack)

    def _whole(self, item: Item) -> Item | None:
        """A pack read whole (a page of leases read it with a projection), None if it is gone."""
        return self.items.get_many([key_of(item)]).get(place_of(item))

    # --- receivers (`enqueued`) ---------------------------------------------------------------

    def enqueued_since(
        self, queue_id: str, since_ms: int, until_ms: int, now_ms: int, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        stripes = self.placer.of(queue_id).stripes
        found, cursor = enqueued.enqueued_since(
            self.client, self.table, queue_id, stripes, (since_ms, until_ms, now_ms), after, limit
        )
        self.load_bodies(found)
        return [m for m in found if m.body is not None], cursor  # (a body gone since: its message was deleted)


def _partitions(queue_id: str, stripes: int) -> list[str]:
    return [stripe_partition(queue_id, stripe) for stripe in range(stripes)]
