"""The message table: one small lease item per message, the body inline when it fits in 1 KB.

Layout, one partition per queue incarnation (`pk = queue_id`):

    L{priority:02}{position:013}{message_id}   the lease: visibility, version, counts (+ inline body)
    B{message_id}                              the body, when lease + body would exceed 1 KB

The lease's sort key orders the queue: priority first, then the time the message first became
receivable. A receive is one Query over the lease range and one conditional UpdateItem per
claimed message (`version` and `visible_at` as observed), so two consumers can never own one
message. Nothing ever rewrites a body: DynamoDB bills UpdateItem by the whole item, so only the
small lease changes and TTL (`x`, free) removes what retention ends. Deleting a message deletes
its lease; an out-of-line body is left to TTL.

Attribute names are one letter because DynamoDB bills them on every write:
    id message id, v visible_at ms, r version, d dequeue count, e enqueue ms, f first dequeue ms,
    x expiry (epoch seconds, the TTL attribute), m body MD5, b body text, z body zlib-compressed,
    o body stored out of line, u user properties, s system properties, g message group id,
    l the queue logs this message's events (its stream records feed the operation log)
"""

from __future__ import annotations

import random
import time
import zlib
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from mnsd.queue_model import Message, Property, QueueCounts
from mnsd.storage import condition_failed
from mnsd.storage.capacity import KB, item_size

LEASE = "L"
BODY = "B"
_BATCH_WRITE_LIMIT = 25
_MAX_PAGE = 1000
# Receives add `f` and grow `r` and `d`: an inline item keeps this much room so it stays within 1 KB.
_LEASE_GROWTH = 32


def lease_key(priority: int, position: int, message_id: str) -> str:
    return f"{LEASE}{priority:02d}{position:013d}{message_id}"


def body_attributes(body: str) -> dict[str, Any]:
    raw = body.encode("utf-8")
    packed = zlib.compress(raw, 6)
    return {"z": {"B": packed}} if len(packed) < len(raw) else {"b": {"S": body}}


def body_of(item: dict[str, Any]) -> str | None:
    if "z" in item:
        return zlib.decompress(item["z"]["B"]).decode("utf-8")
    if "b" in item:
        return str(item["b"]["S"])
    return None


def properties(items: tuple[Property, ...]) -> dict[str, Any]:
    return {"L": [{"L": [{"S": p.name}, {"S": p.value}, {"S": p.type}]} for p in items]}


def parse_properties(value: dict[str, Any] | None) -> tuple[Property, ...]:
    if not value:
        return ()
    return tuple(Property(*(part["S"] for part in entry["L"])) for entry in value["L"])


def _message_id_of(item: dict[str, Any]) -> str:
    return str(item["id"]["S"]) if "id" in item else str(item["sk"]["S"][1:])


@dataclass(frozen=True)
class ReadyScan:
    """Active messages found in queue order, and when the next inactive or delayed one becomes receivable."""

    messages: list[Message]
    next_visible_at: int | None


class MessageStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    # --- writes -------------------------------------------------------------------------------

    def _items_for(self, message: Message) -> list[dict[str, Any]]:
        key = lease_key(message.priority, message.position, message.message_id)
        lease: dict[str, Any] = {
            "pk": {"S": message.queue_id},
            "sk": {"S": key},
            "id": {"S": message.message_id},
            "v": {"N": str(message.visible_at)},
            "r": {"N": str(message.version)},
            "d": {"N": str(message.dequeue_count)},
            "e": {"N": str(message.enqueue_time)},
            "x": {"N": str(message.expires_at)},
            "m": {"S": message.body_md5},
        }
        if message.user_properties:
            lease["u"] = properties(message.user_properties)
        if message.system_properties:
            lease["s"] = properties(message.system_properties)
        if message.message_group_id:
            lease["g"] = {"S": message.message_group_id}
        if message.logging:
            lease["l"] = {"BOOL": True}
        body = body_attributes(message.body or "")
        if item_size(lease) + item_size(body) + _LEASE_GROWTH <= KB:
            return [{**lease, **body}]
        body_item = {"pk": lease["pk"], "sk": {"S": BODY + message.message_id}, "x": lease["x"], **body}
        return [body_item, {**lease, "o": {"BOOL": True}}]

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages (with BatchWriteItem); the ids of those that could not be stored."""
        requests = [{"PutRequest": {"Item": item}} for m in messages for item in self._items_for(m)]
        failed: set[str] = set()
        for start in range(0, len(requests), _BATCH_WRITE_LIMIT):
            pending = requests[start : start + _BATCH_WRITE_LIMIT]
            for attempt in range(6):
                response = self.client.batch_write_item(RequestItems={self.table: pending})
                pending = response.get("UnprocessedItems", {}).get(self.table, [])
                if not pending:
                    break
                time.sleep(0.02 * 2**attempt * random.random())
            failed |= {_message_id_of(r["PutRequest"]["Item"]) for r in pending}
        return failed

    def _conditional(self, method: str, **request: Any) -> dict[str, Any] | None:
        """A conditional write; its response, or None when its condition did not hold."""
        try:
            return dict(getattr(self.client, method)(TableName=self.table, **request))
        except ClientError as exc:
            if condition_failed(exc):
                return None
            raise

    def claim(self, message: Message, now_ms: int, visible_at: int) -> Message | None:
        """Take the lease of an Active message as observed; None if another consumer changed it first."""
        response = self._conditional(
            "update_item",
            Key=self._key(message),
            UpdateExpression="SET v = :vis, r = r + :one, d = d + :one, f = if_not_exists(f, :now)",
            ConditionExpression="r = :ver AND v <= :now",
            ExpressionAttributeValues={
                ":vis": {"N": str(visible_at)},
                ":one": {"N": "1"},
                ":now": {"N": str(now_ms)},
                ":ver": {"N": str(message.version)},
            },
            ReturnValues="ALL_NEW",
        )
        if response is None:
            return None
        return self._message(message.queue_id, response["Attributes"])

    def delete(self, queue_id: str, key: str, version: int, now_ms: int) -> bool:
        """Delete a message whose lease is still the one a receipt handle names."""
        response = self._conditional(
            "delete_item",
            Key={"pk": {"S": queue_id}, "sk": {"S": key}},
            ConditionExpression="r = :ver AND v > :now",
            ExpressionAttributeValues={":ver": {"N": str(version)}, ":now": {"N": str(now_ms)}},
        )
        return response is not None

    def change_visibility(self, queue_id: str, key: str, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time an Inactive (or Delayed) message whose lease is still the one a receipt handle names."""
        response = self._conditional(
            "update_item",
            Key={"pk": {"S": queue_id}, "sk": {"S": key}},
            UpdateExpression="SET v = :vis, r = r + :one",
            ConditionExpression="r = :ver AND v > :now",
            ExpressionAttributeValues={
                ":vis": {"N": str(visible_at)},
                ":one": {"N": "1"},
                ":ver": {"N": str(version)},
                ":now": {"N": str(now_ms)},
            },
        )
        return response is not None

    # --- reads --------------------------------------------------------------------------------

    def _key(self, message: Message) -> dict[str, Any]:
        return {
            "pk": {"S": message.queue_id},
            "sk": {"S": lease_key(message.priority, message.position, message.message_id)},
        }

    def _message(self, queue_id: str, item: dict[str, Any]) -> Message:
        key = item["sk"]["S"]
        enqueue_time = int(item["e"]["N"])
        return Message(
            queue_id=queue_id,
            message_id=item["id"]["S"],
            priority=int(key[1:3]),
            position=int(key[3:16]),
            visible_at=int(item["v"]["N"]),
            version=int(item["r"]["N"]),
            dequeue_count=int(item["d"]["N"]),
            enqueue_time=enqueue_time,
            first_dequeue_time=int(item["f"]["N"]) if "f" in item else enqueue_time,
            expires_at=int(item["x"]["N"]),
            body_md5=item["m"]["S"],
            body=body_of(item),
            user_properties=parse_properties(item.get("u")),
            system_properties=parse_properties(item.get("s")),
            message_group_id=item.get("g", {}).get("S", ""),
            logging="l" in item,
        )

    def _leases(self, queue_id: str, page: int, projection: str | None = None) -> Any:
        """Pages of lease items in queue order; pages grow (to 1000) when the first ones do not suffice."""
        start = None
        while True:
            kwargs: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
            if projection:
                kwargs["ProjectionExpression"] = projection
            response = self.client.query(
                TableName=self.table,
                KeyConditionExpression="pk = :q AND begins_with(sk, :lease)",
                ExpressionAttributeValues={":q": {"S": queue_id}, ":lease": {"S": LEASE}},
                Limit=page,
                **kwargs,
            )
            yield response["Items"]
            start = response.get("LastEvaluatedKey")
            if not start:
                return
            page = min(page * 2, _MAX_PAGE)

    def scan_ready(self, queue_id: str, now_ms: int, wanted: int) -> ReadyScan:
        """Up to `wanted` Active, unexpired messages in queue order (priority, then position)."""
        now_s = now_ms // 1000
        ready: list[Message] = []
        next_visible: int | None = None
        for items in self._leases(queue_id, wanted):
            for item in items:
                if int(item["x"]["N"]) <= now_s:
                    continue
                visible_at = int(item["v"]["N"])
                if visible_at <= now_ms:
                    ready.append(self._message(queue_id, item))
                elif next_visible is None or visible_at < next_visible:
                    next_visible = visible_at
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
        now_s = now_ms // 1000
        active = inactive = delayed = 0
        for items in self._leases(queue_id, _MAX_PAGE, projection="v, d, x"):
            for item in items:
                if int(item["x"]["N"]) <= now_s:
                    continue
                if int(item["v"]["N"]) <= now_ms:
                    active += 1
                elif int(item["d"]["N"]) > 0:
                    inactive += 1
                else:
                    delayed += 1
        return QueueCounts(active, inactive, delayed)
