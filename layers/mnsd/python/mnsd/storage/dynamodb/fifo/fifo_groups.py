"""FIFO messages (a FIFO queue's) on the DynamoDB message table: each group's order kept by one small item.

A group's leases are the leases of any message (`layout.message_items`), in a partition of their own,
`{queue_id}#G{group}` (`layout.partition_of`): sorted by their key, so in position order, and read from the head
with a strongly consistent Query (order costs no read across partitions). A group's state is its *group item*,
`G{group}` in one of the queue's directory partitions `{queue_id}#D{d}`: how many there are grows with the queue's
load, and where each group's item lives is recorded in its *home item* (`#H` in the group's partition), written when
the group item is created and read by any writer that does not know it (`mnsd.storage.dynamodb.fifo.directory`):

    n  the last position given (`sequence`; a group made anew numbers from its time of creation on, in ms, so
       above every message of a former one, which has expired, been deleted or been sent over 1,000 a second)
    q  messages stored: a send adds (at `sequence`), a delete, a dead-letter move and a delete kept for rewind
       subtract, a rewind adds back. An emptied group item (`fifo.forgettable`: `q` 0, nothing kept or held) is
       deleted, then its home, by the scan that meets it, so the directory holds the groups that have messages (and
       those TTL has not ended yet); `q` counts a send's messages from its `sequence`, so none is on its way then.
    t_{position}  its hold (`fifo.Hold`; the position in base 62, `directory.hold_attribute`): the next visible time
       (less the position) of each message of its run in flight not deleted
       yet. The group is *held* while any is later than now. A claim writes its run's in place of the former ones,
       a visibility change its message's (shorter or longer: a message given back releases the group at its new
       time), a delete or an expiry removes its message's. (`o`, `h`: how many and until when, on a group item whose
       run was claimed before holds were kept per message: it holds the group until `h`.)
    k  messages deleted and kept for rewind (a delete kept adds, a rewind and turning rewind off subtract): a group
       item with kept messages is not deleted, so a rewind finds them.
    c  bumped by every change of the hold and by a rewind, which also pauses the group while it works (`p`, until
       when): a claim is conditioned on the `c` its scan read (which found the hold lapsed), so a run built before
       the group was claimed, re-timed or rewound is refused.
    x  its TTL: the longest retention after its last send.
    i  its home item's token (absent on group items from before homes, which live where they always did).

Every write that changes what a group holds is one TransactWriteItems with its group item: a claim (`c` as read,
no rewind pausing it, each lease of the run as observed and Active; the group item then holds the run), a delete
(its hold entry removed, `q` less), a visibility change of a message of the hold (its entry re-timed, whether it
goes past the others or not: the group is released when its last lease lapses; a delayed message's, outside the
hold, is written alone), a dead-letter move, a delete kept for rewind. The
head condition (no message before the run's first) is the scan's: the run starts at the first lease the scan
read that is not deleted, kept or expired (a consistent read, after the group item); the claim refuses a run
that does not start there. Every write of a group item is conditioned on its existing, so a write at a home that is
no longer the group's (moved, or forgotten and made anew elsewhere) fails: the writer reads the home and tries again
(a send until it made or found the group; a delete or visibility change once: a group with a message in flight is
neither forgotten nor moved; a claim is refused and the next receive reads again).

This module is the store (`FifoGroups`: `mnsd.storage.FifoMessageStore`): its sends, claims, deletes, visibility
changes and moves, and counts from a sample of the groups' leases (`stripe_counts.plain_sample`); a scan's reads and
upkeep are `group_reads`', the group-item transactions `group_writes`', a rewind `group_rewind`'s, where each group
item lives `directory`'s. The ids of new messages come from the queue's `Placer`, as a standard queue's.

With `packed` (`Settings.packed_batches`), a batch send's run of each group is stored as one pack (`group_packs`: one
body item and one lease item, entry n at the run's first position + n): the pack is one write of each transaction
above, whatever number of its entries it changes, so a batch of 16 in one group costs about 1.4 write units a message
instead of 5.3 (`bench/results/pack_units.md`). Single sends, and the leases of tables written before, are read and
written as ever.

Capacity (`bench/results/capacity.md`, "A FIFO queue's directory grows with its load"): a message costs its group
item about 5 write units (the counter at send, the claim and the delete as transactions, billed double), one more
when its group is made anew and forgotten around it (made in a transaction with its home, which costs its group's
partition 2 more, and 1 to delete). The directory's width grows with the send rate (`GroupDirectory.width`: a
partition per stripe of the queue's placement, at least 8), so the queue's group-item writes spread with its load:
10,000 single-message lifecycles a second over 1,000 groups keep every directory partition under half of DynamoDB's
1,000 WCU/s. What does not spread is a group: its leases and its
home share its partition (about 5 write units a message there: the lease put, its claim and its delete, these two
billed double), and its group item one directory partition, so one group takes at most about 1,000 / 5 = 200
messages a second sent one at a time (batches of 16 packed, 1 KB bodies: about 18 units for the 16 in its
partition and 5 on its group item, so some 16 x 1,000 / 18 = 880 a second); and by FIFO's own rule it passes one run
(up to 16 messages) per receive-to-delete round trip of its consumer, so 16 / round trip messages a second.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.model import fifo
from mnsd.model.messages import Message, MessageRef, MessageState
from mnsd.model.ports import ReadyScan, candidates
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.storage.dynamodb.fifo import group_packs, group_reads, group_rewind
from mnsd.storage.dynamodb.fifo.directory import MIN_DIRECTORY_WIDTH, GroupDirectory
from mnsd.storage.dynamodb.fifo.group_reads import Head, Heads, unpaused
from mnsd.storage.dynamodb.fifo.group_writes import GroupWrites
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.groups import GroupItem, held, hold
from mnsd.storage.dynamodb.items.layout import Item
from mnsd.storage.dynamodb.items.message_table import MessageTable
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import failed_messages, items_of
from mnsd.storage.dynamodb.placement.placer import Placer
from mnsd.storage.dynamodb.standard.stripe_counts import Sample, oldest_of, plain_sample

__all__ = ["MIN_DIRECTORY_WIDTH", "FifoGroups"]

_RUN_DELETE_LIMIT = 50  # leases one delete transaction takes at most (DynamoDB: 100 items a transaction)


def _claimed(head: Head, run: list[Message], now_ms: int) -> tuple[Sequence[Action], Condition]:
    """The group item's part of a claim (update, condition): the run's hold (`fifo.Hold.claimed`, its messages as
    the claim leaves them) in place of the one before, `c` bumped; if the group is as the scan read it (`c`: its hold
    lapsed), no rewind pauses it and no former run holds it."""
    claimed = fifo.Hold.claimed(run)
    actions = [hold(position).set(held(position, visible_at)) for position, visible_at in claimed.leases.items()]
    actions += [GroupItem.c.set(GroupItem.c + 1), GroupItem.o.remove(), GroupItem.h.remove()]
    actions += [hold(p).remove() for p in head.hold.leases if p not in claimed.leases]
    return actions, (GroupItem.c == head.changes) & unpaused(now_ms)


class FifoGroups:
    """`mnsd.storage.FifoMessageStore`: FIFO queues' messages, each group in its own partition (the module says how)."""

    def __init__(self, client: Any, table: str, placer: Placer, packed: bool = False) -> None:
        self.items = MessageTable(client, table)
        self.placer = placer
        self.packed = packed
        self.directory = GroupDirectory(client, table, placer)
        self.writes = GroupWrites(client, table, placer, self.directory)
        self.packs = PackWrites(client, table)

    @property
    def client(self) -> Any:
        return self.items.client

    @client.setter
    def client(self, client: Any) -> None:  # (a test or benchmark counting calls swaps it for every part)
        self.items.client = self.directory.client = self.writes.client = self.packs.client = client

    @property
    def table(self) -> str:
        return self.items.name

    # --- writes -------------------------------------------------------------------------------

    def new_ids(self, queue_id: str, count: int, now_ms: int, groups: Sequence[str] = ()) -> list[str]:
        """Ids from the queue's `Placer`; with `packed`, a batch send's each group's messages named as a pack's
        (`group_packs.packed_ids`)."""
        ids = self.placer.new_ids(queue_id, count, now_ms)
        return group_packs.packed_ids(ids, groups, now_ms) if self.packed else ids

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        """Counted on the group's item, made with its home if it has none (`GroupWrites.sequence`)."""
        return self.writes.sequence(queue_id, group, count, now_ms)

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (with BatchWriteItem; their group items counted them at `sequence`): a pack's together
        (`packs.items_of`), body items first (`MessageTable.put`)."""
        indexed = dict.fromkeys((m.queue_id for m in messages), False)  # (a group is read from the table: no index)
        failed = self.items.put(items_of(messages, indexed), self.placer.growth.pressure.throttled)
        return failed_messages(messages, failed)

    def _claim_runs(
        self, candidates: list[Message], count: int, now_ms: int, visible_at: int, heads: Heads
    ) -> list[Message]:
        """The candidates' runs claimed as `fifo.claim_runs` says, each in one transaction (`_claim_run`); `heads`:
        what the scan that offered them saw."""
        return fifo.claim_runs(candidates, count, now_ms, lambda run: self._claim_run(run, now_ms, visible_at, heads))

    def _claim_run(self, run: list[Message], now_ms: int, visible_at: int, heads: Heads) -> list[Message]:
        """A claimable run (`fifo.claimable`) taken if it starts at its group's head and the group is free (its
        group item at the home the scan read it from, as the scan read it)."""
        first = run[0]
        head = group_reads.head_of(self.writes, first.queue_id, first.message_group_id, now_ms, heads)
        if head is None or head.position != first.position:
            return []  # a message before it remains (or the group is gone, or held)
        after = [m.received(now_ms, visible_at) for m in run]
        hold = self.writes.group_update(first.ref, head.home, *_claimed(head, after, now_ms))
        leases = group_packs.claim_writes(self.table, run, after, now_ms)
        return after if self.writes.transact(first.queue_id, [hold, *leases], patient=False) is None else []

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return self._delete_runs(leases, now_ms, kept=False)

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return self._delete_runs(leases, now_ms, kept=True)

    def _delete_runs(self, leases: list[tuple[MessageRef, int]], now_ms: int, kept: bool) -> list[bool]:
        """The held leases deleted (or `kept` for rewind) group by group: each group's in one transaction with its
        group item's part (`GroupWrites.release`: a batch delete of a run costs its group item one write, not one a
        message); a group's transaction refused (a handle no longer holds its lease), each of its leases alone."""
        done = [False] * len(leases)
        groups: dict[tuple[str, str], list[int]] = {}
        for n, (ref, _) in enumerate(leases):
            groups.setdefault((ref.queue_id, ref.group), []).append(n)
        for members in groups.values():
            for start in range(0, len(members), _RUN_DELETE_LIMIT):
                run = [leases[n] for n in members[start : start + _RUN_DELETE_LIMIT]]
                distinct = len({ref for ref, _ in run}) == len(run)  # (a transaction writes an item once)
                if len(run) > 1 and distinct and self._delete(run, now_ms, kept):
                    outcomes = [True] * len(run)
                else:
                    outcomes = [self._delete([lease], now_ms, kept) for lease in run]
                for n, outcome in zip(members[start : start + _RUN_DELETE_LIMIT], outcomes, strict=True):
                    done[n] = outcome
        return done

    def _delete(self, leases: list[tuple[MessageRef, int]], now_ms: int, kept: bool) -> bool:
        """Held leases of one group deleted (or `kept` for rewind) with their group item's part
        (`GroupWrites.release`), in one transaction: all of them or none (a pack's entries in one write of it)."""
        writes = group_packs.delete_writes(self.table, leases, now_ms, kept)
        refs = [ref for ref, _ in leases]
        # (`at_home` finds the group item second)
        return self.writes.at_home(refs[0], lambda d: [writes[0], self.writes.release(refs, d, kept), *writes[1:]])

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a lease, and its time in its group's hold with it, shorter or longer (`fifo.Hold.retimed`; one
        transaction, `c` bumped); a lease outside the hold (a delayed message's) alone. A run claimed before holds were
        kept per message adds its lease to the hold (its former hold stays until then). A pack's entry alone."""
        lease = group_packs.retime_request(self.table, ref, version, now_ms, visible_at)
        its = hold(ref.position)

        def retime_hold(d: int) -> list[Item]:
            actions = [its.set(held(ref.position, visible_at)), GroupItem.c.set((GroupItem.c | 0) + 1)]
            return [{"Update": lease}, self.writes.group_update(ref, d, actions, its.exists() | (GroupItem.o > 0))]

        if self.writes.at_home(ref, retime_hold):
            return True
        return conditional(self.client.update_item, **lease) is not None

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        """One transaction: the source lease and one message fewer in its group (the source is Active: its group is
        free, so it may have moved: its home is read), and the target (a standard queue's too)."""
        home = self.directory.locate(source.queue_id, source.message_group_id)
        d = home.d if home is not None else 0  # (no group item: its condition refuses the move)
        fewer = self.writes.group_update(source.ref, d, [GroupItem.q.set((GroupItem.q | 0) - 1)])
        indexed = self.placer.indexed(target)
        removal = self.packs.removal(source, now_ms, dead_letters.moved_mark(source, target))
        return dead_letters.move(self.client, self.table, source, now_ms, target, indexed, [fewer], removal)

    # --- reads --------------------------------------------------------------------------------

    def scan_ready(self, queue_id: str, now_ms: int, count: int) -> ReadyScan:
        """The runs of free groups (`group_reads.free_runs`) until `count` messages (of `candidates(count)`), claimed
        with the heads the scan saw."""
        found = group_reads.free_runs(self.writes, queue_id, now_ms, candidates(count), count)
        claim = functools.partial(self._claim_runs, heads=found.heads)
        return ReadyScan(found.messages, found.next_visible_at, claimer=claim)

    def peek_ready(self, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        return group_reads.free_runs(self.writes, queue_id, now_ms, wanted, wanted).messages

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        return group_reads.held_groups(self.writes, queue_id, now_ms, limit)

    def load_bodies(self, messages: list[Message]) -> None:
        self.items.load_bodies(messages)

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        return self.backlog(queue_id, now_ms).counts

    def backlog(self, queue_id: str, now_ms: int) -> Backlog:
        """The counts (`group_reads.counts`: the first groups' leases read, the others from their group items), and
        the oldest enqueue time among the Active and Inactive leases read."""
        samples: list[Sample] = []

        def plain(partition: str, now: int) -> dict[MessageState, float]:
            samples.append(plain_sample(self.items, partition, now))
            return samples[-1].states

        counts = group_reads.counts(self.writes, queue_id, now_ms, plain)
        return Backlog(counts, oldest_of(samples))

    # --- rewind ---------------------------------------------------------------------------------

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        return group_rewind.rewind(self.writes, self.packs, queue_id, since_ms, now_ms)

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
        return group_rewind.drop_kept(self.writes, self.packs, queue_id)
