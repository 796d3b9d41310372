"""A queue's messages enqueued in a time range, on DynamoDB: what a new receiver copies (`MessageStore.enqueued_since`).

The leases of the queue's stripes are read in turn, each partition in sort key order from the table (not the ready
index: in-flight, delayed and kept leases count too), with a FilterExpression on the enqueue time `e` and the expiry
`x`: DynamoDB bills every lease read, kept or not, so one call reads at most `MAX_QUERIES` pages. Reads are strongly
consistent: a message sent a moment before is read too. The cursor is
`{stripe}|{sort key}` of the last lease read. Bodies stored out of line are left for the store to load. A pack
(`packs`) gives its entries, all in one page: a page ends before a pack that would take it past `limit` (unless it is
the page's first, so a page never stalls).
"""

from __future__ import annotations

from typing import Any

from mnsd.model.messages import Message
from mnsd.storage.dynamodb.items.layout import LEASE, Item, message_of, stripe_partition
from mnsd.storage.dynamodb.items.leases import LeaseItem, keyed, place_of, read
from mnsd.storage.dynamodb.items.packs import leases_of
from mnsd.storage.dynamodb.items.wire import Expression

MAX_QUERIES = 16  # pages of leases one call reads at most (each up to the page's limit, or 1 MB)


def _message(item: Item) -> Message:
    """The message of a lease item, kept ones included (they have no `v`: their enqueue time stands in)."""
    v, e = LeaseItem.v.attr_name, LeaseItem.e.attr_name
    return message_of(item if v in item else {**item, v: item[e]})


def enqueued_since(
    client: Any,
    table: str,
    queue_id: str,
    stripes: int,
    window: tuple[int, int, int],
    after: str | None,
    limit: int,
) -> tuple[list[Message], str | None]:
    """Up to `limit` messages of the queue's stripes 0 .. stripes - 1 enqueued in [since, until) and unexpired
    (`window`: since and until in ms, now in ms) from the cursor `after` on; and the cursor to go on from (None: the
    last stripe was read to its end)."""
    since_ms, until_ms, now_ms = window
    number, _, last = (after or "0|").partition("|")
    stripe = int(number)
    found: list[Message] = []
    for _ in range(MAX_QUERIES):
        if stripe >= stripes or len(found) >= limit:
            break
        partition = stripe_partition(queue_id, stripe)
        lease, query = LeaseItem, Expression()
        response = client.query(
            TableName=table,
            KeyConditionExpression=query.condition((lease.pk == partition) & lease.sk.startswith(LEASE)),
            FilterExpression=query.condition((lease.e >= since_ms) & (lease.e < until_ms) & (lease.x > now_ms // 1000)),
            **query.arguments(),
            Limit=limit - len(found),
            ConsistentRead=True,  # (a message sent just before its receiver was created is copied by no one else)
            **({"ExclusiveStartKey": keyed(partition, last)} if last else {}),
        )
        more = response.get("LastEvaluatedKey")
        for item in response["Items"]:
            leases = leases_of([item])
            if found and len(found) + len(leases) > limit:  # (a pack that does not fit: the next page's)
                return found, f"{stripe}|{last}"
            found += [_message(lease) for lease in leases]
            last = place_of(item)[1]
        stripe, last = (stripe, read(more, LeaseItem.sk)) if more else (stripe + 1, "")
    return found, (f"{stripe}|{last}" if stripe < stripes else None)
