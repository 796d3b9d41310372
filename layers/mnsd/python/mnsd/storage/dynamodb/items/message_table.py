"""The message table as both message stores reach it: batch writes of new messages, batch reads of leases and bodies,
and the removal of a lease whose retention is over.

The parts of a store (its reads, counts, index) share one `MessageTable`, so a test or benchmark that swaps the
store's client (to count or record its calls) swaps it for all of them.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from botocore.exceptions import ClientError

from mnsd.model.messages import Message, body_md5
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.items.conditions import THROTTLES, conditional
from mnsd.storage.dynamodb.items.dead_letters import Projection
from mnsd.storage.dynamodb.items.layout import (
    BODY,
    Item,
    body_of,
    is_apart,
    lease_item_key,
    lease_key,
    md5_of,
    message_id_of,
    message_of,
    partition_of,
    properties_of,
    queue_id_of,
    request,
)
from mnsd.storage.dynamodb.items.leases import BodyItem, LeaseItem, PackItem, key_of, keyed, place_of, read
from mnsd.storage.dynamodb.items.packs import MAX_PACK, entry_of, is_pack, stored_id, unpack_content
from mnsd.storage.dynamodb.items.shared_bodies import body_item, member_item

_BATCH_WRITE_LIMIT = 25
_BATCH_GET_LIMIT = 100
_WRITE_ATTEMPTS = 6

Throttled = Callable[[str], None]  # told the queue id whose write DynamoDB throttled


def throttled(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") in THROTTLES


class MessageTable:
    """The table's client and name, and the item-level calls the stores share."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name

    def put(self, items: list[Item], on_throttled: Throttled, referring: Mapping[str, str] | None = None) -> set[str]:
        """Write a put's items: its body items first, then the leases whose body items were all written (their own,
        or those they name: `referring`, by batch or message id the one whose body items it names, from
        `shared_bodies.share`), so no lease is ever stored without its body (BatchWriteItem writes each item or not:
        one call more for a put with body items). The ids (a pack's for its messages) of what was not stored, a lease
        left unwritten included."""
        bodies = [item for item in items if _is_body(item)]
        if not bodies:
            return self._write(items, on_throttled)
        failed = {stored_id(id_) for id_ in self._write(bodies, on_throttled)}
        failed |= {id_ for id_, owner in (referring or {}).items() if owner in failed}
        leases = [item for item in items if not _is_body(item)]
        return failed | self._write([i for i in leases if stored_id(message_id_of(i)) not in failed], on_throttled)

    def _write(self, items: list[Item], on_throttled: Throttled) -> set[str]:
        """Write items with BatchWriteItem (25 a call), unprocessed ones again a few times with backoff (each
        throttled queue told to `on_throttled`); the ids of the messages whose items could not be written."""
        requests = [{"PutRequest": {"Item": item}} for item in items]
        failed: set[str] = set()
        for start in range(0, len(requests), _BATCH_WRITE_LIMIT):
            pending = requests[start : start + _BATCH_WRITE_LIMIT]
            for attempt in range(_WRITE_ATTEMPTS):
                try:
                    response = self.client.batch_write_item(RequestItems={self.name: pending})
                except ClientError as exc:
                    if not throttled(exc):
                        raise
                    response = {"UnprocessedItems": {self.name: pending}}
                pending = response.get("UnprocessedItems", {}).get(self.name, [])
                if not pending:
                    break
                for queue_id in {queue_id_of(place_of(r["PutRequest"]["Item"])[0]) for r in pending}:
                    on_throttled(queue_id)
                time.sleep(0.02 * 2**attempt * random.random())
            failed |= {message_id_of(r["PutRequest"]["Item"]) for r in pending}  # (a pack's: its pack's id)
        return failed

    def get_many(self, keys: list[Item]) -> dict[tuple[str, str], Item]:
        """Items by (pk, sk), read with BatchGetItem (100 keys a call)."""
        found: dict[tuple[str, str], Item] = {}
        for start in range(0, len(keys), _BATCH_GET_LIMIT):
            pending = keys[start : start + _BATCH_GET_LIMIT]
            while pending:
                response = self.client.batch_get_item(RequestItems={self.name: {"Keys": pending}})
                for item in response.get("Responses", {}).get(self.name, []):
                    found[place_of(item)] = item
                pending = response.get("UnprocessedKeys", {}).get(self.name, {}).get("Keys", [])
        return found

    def whole(self, items: list[Item], enough: int | None = None) -> tuple[list[Item], bool]:
        """Index items with each pack's (`packs`: the index holds its keys and place only) read whole in its place
        (BatchGetItem; a pack gone since is left out); with `enough`, only as many of the packs as may hold that many
        leases (`MAX_PACK` each), chosen at random (consumers that read one page of the index then take from
        different packs); and whether a pack was left unread."""
        partial = [n for n, item in enumerate(items) if _partial(item)]
        if enough is not None and len(partial) * MAX_PACK > enough:
            partial = sorted(random.sample(partial, -(-enough // MAX_PACK)))
        read = self.get_many([key_of(items[n]) for n in partial])
        chosen = set(partial)
        found = [
            read.get(place_of(item)) if n in chosen else item
            for n, item in enumerate(items)
            if n in chosen or not _partial(item)
        ]
        return [item for item in found if item is not None], len(chosen) < sum(map(_partial, items))

    def load_bodies(self, messages: list[Message]) -> None:
        """Complete what a scan (leases as the index holds them) or a claim (bodies out of line) left out: the body
        items read are the messages' own, or those a receiver's copy shares (`shared_bodies`)."""
        self._load_packed([m for m in messages if m.body is None and is_apart(m.body_md5) and entry_of(m.message_id)])
        partial = [m for m in messages if m.body_md5 == ""]
        leases = self.get_many([lease_item_key(m.ref) for m in partial])
        for message in partial:
            item = leases.get((partition_of(message.ref), lease_key(message.ref)))
            if item is not None:  # deleted since it was read: left as it was seen
                message.__dict__.update(message_of(item).__dict__)
        missing = [m for m in messages if m.body is None and m.body_md5 != ""]
        bodies = self.get_many([keyed(*member_item(m)) for m in missing])
        for message in missing:
            item = bodies.get(member_item(message))
            if item is not None:
                message.body = body_of(item)
                message.body_md5 = md5_of(item, message.body) if is_apart(message.body_md5) else message.body_md5
                if entry_of(message.message_id):  # (a packed message of a batch too large for one body item)
                    message.user_properties = properties_of(item, BodyItem.u)
                    message.system_properties = properties_of(item, BodyItem.s)
                    message.message_group_id = read(item, BodyItem.g, "")

    def _load_packed(self, messages: list[Message]) -> None:
        """The bodies and properties of packed messages, from their batches' body items (`packs`); those of a batch
        stored with a body item each are left to `load_bodies`."""
        found = self.get_many([keyed(*key) for key in dict.fromkeys(body_item(m) for m in messages)])
        for m in messages:
            entry = entry_of(m.message_id)
            assert entry is not None
            item = found.get(body_item(m))
            content = None if item is None else unpack_content(item, entry.index)
            if content is not None:
                m.body, m.user_properties, m.system_properties, m.message_group_id = content
                m.body_md5 = body_md5(m.body)

    def lease_page(
        self,
        partition: str,
        limit: int,
        start: Item | None = None,
        forward: bool = True,
        projection: Projection | None = None,
    ) -> tuple[list[Item], Item | None]:
        """One page of a partition's leases from the table in queue order (`dead_letters.lease_page`)."""
        return dead_letters.lease_page(self.client, self.name, partition, limit, start, forward, projection)

    def delete_expired(self, item: Item, now_ms: int) -> None:
        """Remove a lease whose retention is over (TTL would, later); a no-op if it is gone or not expired."""
        conditional(self.client.delete_item, **request(self.name, key_of(item), LeaseItem.x <= now_ms // 1000))


def _is_body(item: Item) -> bool:
    return place_of(item)[1].startswith(BODY)


def _partial(item: Item) -> bool:
    """A pack as the ready index holds it (its keys and place only)."""
    return is_pack(item) and PackItem.p.attr_name not in item
