"""Dead-letter moves and rewind on the DynamoDB message table (the item shapes: `layout`).

- A move (dead-lettering on receive, redrive) is one TransactWriteItems: the conditional Delete of the
  source lease (its version as observed, still Active, unexpired: the claim's condition) and the Put
  of the target's lease. A logging queue's lease is instead marked moved in the transaction (an Update:
  `t` says to where, `x` expired so that no reader returns or counts it), then deleted: its stream tells the
  operation log of the move (`changes.message_change`), where a Delete would look like a consumer's. Either both happen or neither: a message is never in both queues, nor lost
  between them. A target body too large to sit in its lease is put first, outside the transaction
  (a transaction bills twice): until its lease exists nothing reads it, and if the transaction is
  refused it is left to TTL. The source's out-of-line body item is left to TTL like a delete's.
- A delete with rewind on is one conditional UpdateItem (the delete's condition) that re-marks the
  lease kept in place (`layout.keeping`: `k` set, `v` removed): one write, the sort key unchanged.
- A rewind reads the queue's leases and, for those enqueued at or after the rewind time, restores the
  kept ones and makes the in-flight ones visible (one conditional UpdateItem each, new version).
- Turning rewind off deletes the kept leases (one conditional DeleteItem each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from botocore.exceptions import ClientError
from pynamodb.attributes import Attribute
from pynamodb.expressions.condition import Condition

from mnsd.ground import actor
from mnsd.model.messages import Message, MessageRef
from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.layout import (
    LEASE,
    Item,
    is_kept,
    keep_request,
    lease_item_key,
    message_items,
    request,
    restored,
    revisited,
    version_is,
    version_of,
)
from mnsd.storage.dynamodb.items.leases import LeaseItem, key_of, read
from mnsd.storage.dynamodb.items.packs import is_pack
from mnsd.storage.dynamodb.items.wire import Expression, set_value
from mnsd.storage.moves import move_event

Projection = Sequence[Attribute[Any]]  # the attributes a read returns
_LEASE = LeaseItem
REWIND_PROJECTION: Projection = (_LEASE.pk, _LEASE.sk, _LEASE.v, _LEASE.r, _LEASE.d, _LEASE.e, _LEASE.x, _LEASE.k)
KEPT_PROJECTION: Projection = (_LEASE.pk, _LEASE.sk, _LEASE.k)
_PAGE = 1000


def lease_page(
    client: Any,
    table: str,
    partition: str,
    limit: int,
    start: Item | None = None,
    forward: bool = True,
    projection: Projection | None = None,
    first: str = "",
) -> tuple[list[Item], Item | None]:
    """One page of a partition's lease items (kept ones included) from the table (not an index) in queue order
    (from sort key `first` on if given), and where the next one starts."""
    leases = _LEASE.sk.between(first, LEASE + "~") if first else _LEASE.sk.startswith(LEASE)
    read = Expression()
    response = client.query(
        TableName=table,
        KeyConditionExpression=read.condition((_LEASE.pk == partition) & leases),
        Limit=limit,
        ScanIndexForward=forward,
        **({"ProjectionExpression": read.projection(*projection)} if projection else {}),
        **read.arguments(),
        **({"ExclusiveStartKey": start} if start else {}),
    )
    return list(response["Items"]), response.get("LastEvaluatedKey")


def lease_pages(
    client: Any,
    table: str,
    partitions: list[str],
    projection: Projection | None = None,
    first_page: int = _PAGE,
    first: str = "",
) -> Iterator[tuple[list[Item], bool]]:
    """Every lease item (kept ones included) of the given partitions in queue order (`lease_page`), in pages that
    start at `first_page` items and grow to 1000 when the first ones do not suffice; with each page, whether more
    of its partition follow."""
    for partition in partitions:
        start = None
        page = first_page
        while True:
            items, start = lease_page(client, table, partition, page, start, projection=projection, first=first)
            yield items, start is not None
            if not start:
                break
            page = min(page * 2, _PAGE)


def _cancelled(exc: ClientError) -> bool:
    """Whether a transaction was refused as a whole (a condition did not hold, or a conflicting write)."""
    return bool(exc.response.get("Error", {}).get("Code") == "TransactionCanceledException")


def move(
    client: Any,
    table: str,
    source: Message,
    now_ms: int,
    target: Message,
    indexed: bool,
    also: list[Item] | None = None,
    removal: Item | None = None,
) -> bool:
    """Move `source` to `target` (see the module's docstring); `also`: more writes of the same transaction;
    `removal`: the write that removes the source when it is not its lease's Delete (a packed message's)."""
    if target.body is None:
        raise ValueError("a moved message needs its body loaded")
    active = version_is(source.version) & (_LEASE.v <= now_ms) & (_LEASE.x > now_ms // 1000)
    key = lease_item_key(source.ref)
    mark = moved_mark(source, target)
    # a logging queue's: the lease marked moved (and expired) in the transaction, deleted after it
    marked = [set_value(_LEASE.x, now_ms // 1000 - 1), _LEASE.t.set(mark)] if mark else []
    condition = request(table, key, active, *marked)
    first = removal or ({"Update": condition} if mark else {"Delete": condition})
    *bodies, lease = message_items(target, indexed)
    for body in bodies:  # outside the transaction (half the units): without its lease it is never read
        client.put_item(TableName=table, Item=body)
    try:
        put = {"Put": {"TableName": table, "Item": lease}}
        client.transact_write_items(TransactItems=[first, put, *(also or [])])
    except ClientError as exc:
        if _cancelled(exc):
            return False
        raise
    if mark and removal is None:  # (left to TTL if this fails: expired, no reader returns or counts it)
        conditional(client.delete_item, **request(table, key, _LEASE.t.exists()))
    return True


def moved_mark(source: Message, target: Message) -> str:
    """What a logging queue's lease moved away says of the move in the stream (`MOVED_ATTRIBUTE`, read by
    `changes.message_change`): its event and its target; "" for a queue that does not log."""
    if not (source.logging or actor.is_recording()):
        return ""
    return f"{move_event(target).value} {target.queue_id} {target.message_id}"


def delete_keeping(client: Any, table: str, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
    kept = []
    for ref, version in leases:
        response = conditional(client.update_item, **keep_request(table, ref, version, now_ms))
        kept.append(response is not None)
    return kept


def rewind(
    client: Any,
    table: str,
    partitions: list[str],
    since_ms: int,
    now_ms: int,
    indexing: bool,
    pack: Callable[[Item], int] | None = None,
) -> int:
    """Rewind the leases of a queue's partitions (see the module's docstring); how many were rewound (a pack's
    entries by `pack`, given the pack as read, `packs`)."""
    rewound = 0
    for items, _ in lease_pages(client, table, partitions, REWIND_PROJECTION):
        for item in items:
            if is_pack(item):
                rewound += pack(item) if pack else 0
            else:
                rewound += rewind_lease(client, table, item, since_ms, now_ms, indexing) in REWOUND
    return rewound


REWOUND = ("restored", "revisited")


def rewind_lease(client: Any, table: str, item: Item, since_ms: int, now_ms: int, indexing: bool) -> str:
    """Rewind one lease (read with `REWIND_PROJECTION`): "restored" (it was kept), "revisited" (it was in flight),
    or else what it is left: "in flight" (enqueued before `since_ms`), "done" (receivable, delayed, expired, or
    changed since it was read)."""
    if read(item, _LEASE.x, 0) <= now_ms // 1000:
        return "done"
    if read(item, _LEASE.e, 0) < since_ms:
        return "in flight" if in_flight(item, now_ms) else "done"
    stored, version = read(item, _LEASE.r), version_of(item) + 1
    condition: Condition
    if is_kept(item):
        update, condition, outcome = restored(now_ms, version, indexing), _LEASE.k.exists(), "restored"
    elif in_flight(item, now_ms):
        update, condition, outcome = revisited(now_ms, version, indexing), _LEASE.v > now_ms, "revisited"
    else:
        return "done"
    rewound = request(table, key_of(item), condition & (_LEASE.r == stored), *update)
    return outcome if conditional(client.update_item, **rewound) is not None else "done"


def in_flight(item: Item, now_ms: int) -> bool:
    """Whether a lease is in flight at `now_ms`: received and hidden (not kept)."""
    return not is_kept(item) and read(item, _LEASE.v, 0) > now_ms and read(item, _LEASE.d, 0) > 0


def drop_kept(client: Any, table: str, partitions: list[str], pack: Callable[[Item], int] | None = None) -> int:
    """Delete the kept leases of a queue's partitions; how many (a pack's kept entries by `pack`)."""
    dropped = 0
    for items, _ in lease_pages(client, table, partitions, KEPT_PROJECTION):
        for item in items:
            if is_pack(item):
                dropped += pack(item) if pack else 0
            elif is_kept(item):
                dropped += (
                    conditional(client.delete_item, **request(table, key_of(item), _LEASE.k.exists())) is not None
                )
    return dropped
