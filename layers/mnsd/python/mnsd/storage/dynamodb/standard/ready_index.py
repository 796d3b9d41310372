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

from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.layout import INDEX_KEY, READY_INDEX, Item, index_due, stripe_partition
from mnsd.storage.dynamodb.items.message_table import MessageTable
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
        self, partition: str, condition: str, values: Item, limit: int, start: Item | None = None, forward: bool = True
    ) -> tuple[list[Item], Item | None]:
        """One page of the ready index (items in `w` order) and where the next one starts."""
        if time.monotonic() < self._down_until:
            raise IndexUnavailable()
        kwargs: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
        try:
            response = self.table.client.query(
                TableName=self.table.name,
                IndexName=READY_INDEX,
                KeyConditionExpression=f"pk = :p AND {condition}",
                ExpressionAttributeValues={":p": {"S": partition}, **values},
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
            items, _ = self.page(partition, "w > :now", {":now": {"N": str(now_ms)}}, 1)
        except IndexUnavailable:
            return None
        return int(items[0][INDEX_KEY]["N"]) if items else None

    def lift(self, entries: list[Item]) -> None:
        """Move held entries (claimed with `w` left in place) to the time their claims hold them till: `w = v`, as a
        claim that moves `w` leaves it; each on condition that its lease is still the one read (its version: then `v`
        is that time)."""
        for entry in entries:
            self._set(entry, "SET w = :due", "r = :ver", {":due": {"N": str(index_due(entry))}, ":ver": entry["r"]})

    def _set(self, item: Item, update: str, condition: str, values: Item | None = None) -> None:
        """One conditional UpdateItem of a lease (its `w`); a no-op if the condition no longer holds."""
        kwargs = {"ExpressionAttributeValues": values} if values else {}
        conditional(
            self.table.client.update_item,
            TableName=self.table.name,
            Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression=update,
            ConditionExpression=condition,
            **kwargs,
        )

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
            start = {"pk": {"S": partition}, "sk": {"S": after}} if after else None
            items, more = self.table.lease_page(partition, budget, start, projection="pk, sk, v, w, r")
            for item in items:
                if "v" in item and not _indexed(item):
                    self._set(item, "SET w = v", "attribute_exists(v)")
            budget -= max(1, len(items))
            stripe, after = (stripe, more["sk"]["S"]) if more else (stripe + 1, "")
        if stripe < spread.stripes:
            return f"{stripe}|{after}"
        try:
            self.page(queue_id, "w <= :now", {":now": {"N": str(now_ms)}}, 1)
        except IndexUnavailable:
            return f"{stripe}|"
        return None


def _indexed(lease: Item) -> bool:
    """Whether a lease's entry in the index tells its `v` (`layout.index_due`), with `w` no later."""
    w = lease.get(INDEX_KEY)
    return w is not None and index_due(lease) == int(lease["v"]["N"]) and int(w["N"]) <= int(lease["v"]["N"])
