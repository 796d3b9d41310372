"""The ready index of the message table (`layout.READY_INDEX`: `pk`, then `w`, a lease's visibility while its queue's
writes keep the index, or earlier while a claim holds it: `layout.index_due`): its pages, the held entries moved out
of a receive's way (`lift`), and its build over the leases written before a queue kept it.

While DynamoDB cannot answer a read of the index (it is still backfilling it on an existing table, or it is not
there), the stores read the table instead: `IndexUnavailable` says so, and the index is not asked again for
`_INDEX_RETRY_SECONDS` (one `ReadyIndex` per container serves its reads, counts and builds alike).
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.layout import READY_INDEX, Item, index_due, request, stripe_partition
from mnsd.storage.dynamodb.items.leases import IndexEntry, LeaseItem, key_of, keyed, read
from mnsd.storage.dynamodb.items.leases import ReadyIndex as Entries
from mnsd.storage.dynamodb.items.message_table import MessageTable
from mnsd.storage.dynamodb.items.wire import Expression
from mnsd.storage.dynamodb.placement.placement import Spread

# After a read of the ready index failed because it cannot be read yet, the table is read instead this long.
_INDEX_RETRY_SECONDS = 30.0


class IndexUnavailable(Exception):
    """The ready index cannot be read: DynamoDB is still building it on an existing table (or it is not there)."""


def _index_unavailable(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    codes = ("ValidationException", "ResourceNotFoundException")  # (still backfilling; absent)
    return error.get("Code") in codes and "index" in str(error.get("Message", "")).lower()


class ReadyIndex:
    def __init__(self, table: MessageTable) -> None:
        self.table = table
        self._down_until = 0.0  # (time.monotonic) the index could not be read: the table is, till then

    def page(
        self, partition: str, condition: Condition, limit: int, start: Item | None = None, forward: bool = True
    ) -> tuple[list[Item], Item | None]:
        """One page of the ready index (items in `w` order, `condition` on `w`: `due_by`, `due_after`) and where the next
        one starts."""
        if time.monotonic() < self._down_until:
            raise IndexUnavailable()
        kwargs: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
        keys = Expression()
        try:
            response = self.table.client.query(
                TableName=self.table.name,
                IndexName=READY_INDEX,
                KeyConditionExpression=keys.condition((Entries.pk == partition) & condition),
                **keys.arguments(),
                Limit=limit,
                ScanIndexForward=forward,
                **kwargs,
            )
        except ClientError as exc:
            if not _index_unavailable(exc):
                raise
            self._down_until = time.monotonic() + _INDEX_RETRY_SECONDS
            raise IndexUnavailable() from exc
        return list(response["Items"]), response.get("LastEvaluatedKey")

    def next_visible(self, partition: str, now_ms: int) -> int | None:
        """When the first lease of a stripe whose `w` is later than now becomes receivable (None: none, or no index);
        the leases held with `w` left in place are those a receive read past (`stripe_reads`)."""
        try:
            items, _ = self.page(partition, due_after(now_ms), 1)
        except IndexUnavailable:
            return None
        return read(items[0], IndexEntry.w) if items else None

    def lift(self, entries: list[Item]) -> None:
        """Move held entries (claimed with `w` left in place) to the time their claims hold them till: `w = v`, as a
        claim that moves `w` leaves it; each on condition that its lease is still the one read (its version: then `v`
        is that time)."""
        for entry in entries:
            due = index_due(entry)
            assert due is not None  # (a held entry's: its claim's time)
            self._set(entry, LeaseItem.w.set(due), LeaseItem.r == read(entry, IndexEntry.r))

    def _set(self, item: Item, update: Action, condition: Condition) -> None:
        """One conditional UpdateItem of a lease (its `w`); a no-op if the condition no longer holds."""
        conditional(self.table.client.update_item, **request(self.table.name, key_of(item), condition, update))

    def build(self, queue_id: str, spread: Spread, cursor: str, now_ms: int, budget: int) -> str | None:
        """Give `w = v` to the leases that lack it (or whose entry a container still writing without the index left
        telling another time than `v`: `layout.index_due`), stripe by stripe in queue order: up to `budget` leases
        read from `cursor` (`{stripe}|{sort key}`) on, one conditional UpdateItem each that needs it. Done (None) once
        every stripe is and the index answers (`placer.IndexBuilder`).
        """
        number, _, after = cursor.partition("|")
        stripe = int(number or 0)
        while stripe < spread.stripes and budget > 0:
            partition = stripe_partition(queue_id, stripe)
            start = keyed(partition, after) if after else None
            items, more = self.table.lease_page(partition, budget, start, projection=_BUILD_PROJECTION)
            for item in items:
                if LeaseItem.v.attr_name in item and not _indexed(item):
                    self._set(item, LeaseItem.w.set(LeaseItem.v), LeaseItem.v.exists())
            budget -= max(1, len(items))
            stripe, after = (stripe, read(more, LeaseItem.sk)) if more else (stripe + 1, "")
        if stripe < spread.stripes:
            return f"{stripe}|{after}"
        try:
            self.page(queue_id, due_by(now_ms), 1)
        except IndexUnavailable:
            return f"{stripe}|"
        return None


def _indexed(lease: Item) -> bool:
    """Whether a lease's entry in the index tells its `v` (`layout.index_due`), with `w` no later."""
    w, v = read(lease, LeaseItem.w), read(lease, LeaseItem.v)
    return w is not None and index_due(lease) == v and w <= v


def due_by(now_ms: int, since: int | None = None) -> Condition:
    """The index's entries due by `now_ms` (`w <= now`; from `since` on, if given)."""
    return Entries.w <= now_ms if since is None else Entries.w.between(since, now_ms)


def due_after(now_ms: int) -> Condition:
    """The index's entries due after `now_ms`."""
    return Entries.w > now_ms


_BUILD_PROJECTION = (LeaseItem.pk, LeaseItem.sk, LeaseItem.v, LeaseItem.w, LeaseItem.r)
