"""The message table on DynamoDB: one small lease item per message, the body inline when it fits in 1 KB.

The layout is `mnsd.storage.dynamodb.layout`. The lease's sort key orders the queue: priority
first, then the time the message first became receivable. A receive is one Query over the lease
range and one conditional UpdateItem per claimed message (`version` and `visible_at` as observed),
so two consumers can never own one message. Nothing ever rewrites a body: DynamoDB bills
UpdateItem by the whole item, so only the small lease changes and TTL (`x`, free) removes what
retention ends. Deleting a message deletes its lease; an out-of-line body is left to TTL.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

from mnsd.queue_model import Message, MessageRef, MessageState, QueueCounts
from mnsd.storage import ReadyScan
from mnsd.storage.dynamodb import conditional, dead_letters
from mnsd.storage.dynamodb.layout import (
    BODY,
    Item,
    body_of,
    lease_key,
    message_id_of,
    message_items,
    message_of,
    state_of,
)

_BATCH_WRITE_LIMIT = 25
_MAX_PAGE = 1000


class DynamoMessageStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    # --- writes -------------------------------------------------------------------------------

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (with BatchWriteItem); the ids of those that could not be stored."""
        requests = [{"PutRequest": {"Item": item}} for m in messages for item in message_items(m)]
        failed: set[str] = set()
        for start in range(0, len(requests), _BATCH_WRITE_LIMIT):
            pending = requests[start : start + _BATCH_WRITE_LIMIT]
            for attempt in range(6):
                response = self.client.batch_write_item(RequestItems={self.table: pending})
                pending = response.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                time.sleep(0.02 * 2**attempt * random.random())
            failed |= {message_id_of(r["PutRequest"]["Item"]) for r in pending}
        return failed

    def claim(self, message: Message, now_ms: int, visible_at: int) -> Message | None:
        """Take the lease of an Active message as observed; None if another consumer changed it first."""
        if message.state_at(now_ms) is not MessageState.ACTIVE:
            return None
        after = message.received(now_ms, visible_at)
        response = conditional(
            self.client.update_item,
            TableName=self.table,
            Key=_key(message.ref),
            UpdateExpression="SET v = :vis, r = :next, d = d + :one, f = if_not_exists(f, :now)",
            ConditionExpression="r = :ver AND v <= :now AND x > :now_s",
            ExpressionAttributeValues={
                ":vis": {"N": str(after.visible_at)},
                ":next": {"N": str(after.version)},
                ":one": {"N": "1"},
                ":now": {"N": str(now_ms)},
                ":now_s": {"N": str(now_ms // 1000)},
                ":ver": {"N": str(message.version)},
            },
            ReturnValues="ALL_NEW",
        )
        return None if response is None else message_of(response["Attributes"])

    def claim_some(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        claimed: list[Message] = []
        for candidate in candidates:
            if len(claimed) == count:
                break
            message = self.claim(candidate, now_ms, visible_at)
            if message is not None:
                claimed.append(message)
        return claimed

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return [self.delete(ref, version, now_ms) for ref, version in leases]

    def delete(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        """Delete a message whose lease is still the one a receipt handle names (`Message.held_by`)."""
        response = conditional(
            self.client.delete_item,
            TableName=self.table,
            Key=_key(ref),
            ConditionExpression="r = :ver AND v > :now AND x > :now_s",
            ExpressionAttributeValues={
                ":ver": {"N": str(version)},
                ":now": {"N": str(now_ms)},
                ":now_s": {"N": str(now_ms // 1000)},
            },
        )
        return response is not None

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a message whose lease is still the one a receipt handle names (`Message.retimed`)."""
        response = conditional(
            self.client.update_item,
            TableName=self.table,
            Key=_key(ref),
            UpdateExpression="SET v = :vis, r = :next",
            ConditionExpression="r = :ver AND v > :now AND x > :now_s",
            ExpressionAttributeValues={
                ":vis": {"N": str(visible_at)},
                ":next": {"N": str(version + 1)},
                ":ver": {"N": str(version)},
                ":now": {"N": str(now_ms)},
                ":now_s": {"N": str(now_ms // 1000)},
            },
        )
        return response is not None

    # --- reads --------------------------------------------------------------------------------

    def _leases(self, queue_id: str, page: int, projection: str | None = None) -> Iterator[list[Item]]:
        """Pages of lease items in queue order; pages grow (to 1000) when the first ones do not suffice."""
        return dead_letters.lease_pages(self.client, self.table, [queue_id], projection, page)

    def scan_ready(self, queue_id: str, now_ms: int, wanted: int) -> ReadyScan:
        """Up to `wanted` Active, unexpired messages in queue order (priority, then position)."""
        ready: list[Message] = []
        next_visible: int | None = None
        for items in self._leases(queue_id, wanted):
            for item in items:
                state = state_of(item, now_ms)
                if state is MessageState.ACTIVE:
                    ready.append(message_of(item))
                elif state is not MessageState.EXPIRED:
                    visible_at = int(item["v"]["N"])
                    next_visible = visible_at if next_visible is None else min(next_visible, visible_at)
            if len(ready) >= wanted:
                break
        return ReadyScan(ready[:wanted], next_visible)

    def load_bodies(self, messages: list[Message]) -> None:
        """Fill in the bodies stored apart from their leases (one BatchGetItem per 100)."""
        missing = [m for m in messages if m.body is None]
        for start in range(0, len(missing), 100):
            chunk = {(m.queue_id, m.message_id): m for m in missing[start : start + 100]}
            keys = [{"pk": {"S": q}, "sk": {"S": BODY + mid}} for q, mid in chunk]
            while keys:
                response = self.client.batch_get_item(RequestItems={self.table: {"Keys": keys}})
                for item in response.get("Responses", {}).get(self.table, []):
                    chunk[(item["pk"]["S"], item["sk"]["S"][1:])].body = body_of(item)
                keys = response.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", [])

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        found = dict.fromkeys(MessageState, 0)
        for items in self._leases(queue_id, _MAX_PAGE, projection="sk, v, d, e, x, k"):
            for item in items:
                found[state_of(item, now_ms)] += 1
        return QueueCounts(found[MessageState.ACTIVE], found[MessageState.INACTIVE], found[MessageState.DELAYED])

    # --- dead letters and rewind (`dead_letters`) -----------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        return dead_letters.move(self.client, self.table, source, now_ms, target)

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        return dead_letters.delete_keeping(self.client, self.table, leases, now_ms)

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        return dead_letters.rewind(self.client, self.table, [queue_id], since_ms, now_ms)

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
        return dead_letters.drop_kept(self.client, self.table, [queue_id])


def _key(ref: MessageRef) -> Item:
    return {"pk": {"S": ref.queue_id}, "sk": {"S": lease_key(ref)}}
