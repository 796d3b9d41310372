"""Every call of the DynamoDB engine, its outcome handled by its kind, in one place (on Lambda and in the local
runtime alike; the engine's botocore client makes no retries of its own: `mnsd.services.client_config`):

- throttling, a conflict with an ongoing transaction (`TransactionConflictException`, or a transaction cancelled
  for a conflict or throttling alone) and DynamoDB's own 5xx are tried again after a jittered, growing pause, for
  as long as the request's time budget allows (`mnsd.ground.deadlines`; `CALL_SECONDS` outside a request), then answered as
  `Unavailable`, a retryable MNS error (503) that callers handling throttling still see as the `ClientError` it was;
- a call that never reached DynamoDB (no connection) is tried again the same way;
- a call whose answer was lost on the way back (a read timeout, a closed connection: it may have been applied) is
  tried again, and when the retry finds the write's condition no longer holding, what the first attempt did is read
  back (`applied`): a delete that is gone, a put that is there, an update whose assignments are all there count as
  done, so a lost answer never turns into a wrong one. A batch of new items is sent again without the items that
  are there (`unwritten`): written again, a message's lease would undo a claim made since. A transaction carries a `ClientRequestToken` on every attempt:
  DynamoDB applies it once;
- a condition that does not hold stays the domain's outcome (`conditions.conditional`); anything else is raised.
"""

from __future__ import annotations

import functools
import random
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as NotConnected

from mnsd.ground import deadlines, errors
from mnsd.storage.dynamodb.items.conditions import THROTTLES, condition_failed
from mnsd.storage.dynamodb.items.layout import queue_id_of
from mnsd.storage.dynamodb.items.wire import KeyedItem, key_in, read

CALL_SECONDS = 5.0  # how long a call outside a request (a stream consumer's, a worker's) is tried at most
MARGIN_SECONDS = 0.2  # of a request's budget, left for answering
BASE_PAUSE_SECONDS = 0.025
MAX_PAUSE_SECONDS = 1.0
BUSY_CODES = THROTTLES | {"TransactionConflictException", "InternalServerError", "ServiceUnavailable"}
# Why an item of a cancelled transaction failed, when trying again may succeed.
BUSY_REASONS = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"})
_UNFAILED_REASONS = frozenset({"None", None})
_ASSIGNMENT = re.compile(r"\s*(#\w+|[A-Za-z_]\w*)\s*=\s*(:\w+)\s*")  # (PynamoDB names `#0`, values `:0`)
_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)

Request = dict[str, Any]


class Unavailable(errors.ServiceUnavailable, ClientError):
    """DynamoDB still busy (or unreachable) when the budget ran out: the MNS error 503, and the `ClientError` it was."""

    def __init__(self, response: dict[str, Any], operation: str) -> None:
        ClientError.__init__(self, response, operation)
        self.message = errors.ServiceUnavailable.default_message

    def __str__(self) -> str:
        return ClientError.__str__(self)

    @classmethod
    def of(cls, failure: Exception, operation: str) -> Unavailable:
        if isinstance(failure, ClientError):
            return cls(dict(failure.response), operation)
        return cls({"Error": {"Code": type(failure).__name__, "Message": str(failure)}}, operation)


def busy(exc: ClientError) -> bool:
    """Whether DynamoDB refused the call for now (throttling, a conflicting transaction, its own failure)."""
    code = exc.response.get("Error", {}).get("Code")
    if code in BUSY_CODES:
        return True
    if code != "TransactionCanceledException":
        return False
    reasons = {reason.get("Code") for reason in exc.response.get("CancellationReasons", [])} - _UNFAILED_REASONS
    return bool(reasons) and reasons <= BUSY_REASONS


def throttled(exc: ClientError) -> bool:
    code = exc.response.get("Error", {}).get("Code")
    reasons = {reason.get("Code") for reason in exc.response.get("CancellationReasons", [])}
    return code in THROTTLES or bool(reasons & {"ThrottlingError", "ProvisionedThroughputExceeded"})


def pause_seconds(attempt: int) -> float:
    """The pause before attempt `attempt + 1`: "full jitter", up to a bound growing twofold per attempt."""
    return random.random() * min(MAX_PAUSE_SECONDS, BASE_PAUSE_SECONDS * 2**attempt)


def call_seconds(monotonic: Callable[[], float] = time.monotonic) -> float:
    """How long a call may be tried: what the request's budget leaves (less the time to answer), else `CALL_SECONDS`."""
    left = deadlines.remaining(monotonic)
    return CALL_SECONDS if left is None else left - MARGIN_SECONDS


class RetryingClient:
    """A DynamoDB client whose calls are made as the module says; `on_throttled` is told each throttled request (the
    engine counts it as its queue's pressure)."""

    def __init__(
        self,
        client: Any,
        on_throttled: Callable[[Request], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._on_throttled = on_throttled
        self._sleep = sleep
        self._monotonic = monotonic

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name.startswith("get_paginator") or name == "get_waiter":
            return attribute
        return functools.partial(self._call, name, attribute)

    def _call(self, operation: str, method: Callable[..., Any], **request: Any) -> Any:
        if operation == "transact_write_items":
            request.setdefault("ClientRequestToken", uuid.uuid4().hex)
        deadline = self._monotonic() + call_seconds(self._monotonic)
        lost = False  # an attempt was sent and its answer lost: it may have been applied
        attempt = 0
        while True:
            try:
                return method(**request)
            except ClientError as exc:
                done = self._refused(exc, operation, request, lost)
                if done is not None:
                    return done
                failure: Exception = exc
            except HTTPClientError as exc:  # sent, its answer lost (read timeout, connection closed)
                lost, failure = True, exc
                if operation == "batch_write_item":
                    request = unwritten(self, request)
                    if not request["RequestItems"]:
                        return {"UnprocessedItems": {}}
            except NotConnected as exc:  # never sent
                failure = exc
            left = deadline - self._monotonic()
            if left <= 0:
                raise Unavailable.of(failure, operation) from failure
            self._sleep(min(pause_seconds(attempt), left))  # (the last attempt at the deadline)
            attempt += 1

    def _refused(self, exc: ClientError, operation: str, request: Request, lost: bool) -> dict[str, Any] | None:
        """A refused attempt: the write's response if it was applied before (its answer `lost`); None when worth
        trying again; else raised."""
        if lost and condition_failed(exc):
            done = applied(self, operation, request)
            if done is not None:
                return done
        if not busy(exc):
            raise exc
        if throttled(exc) and self._on_throttled is not None:
            self._on_throttled(request)
        return None


def _key(item: dict[str, Any]) -> tuple[str, str]:
    return read(item, KeyedItem.pk), read(item, KeyedItem.sk, "")


def unwritten(client: RetryingClient, request: Request) -> Request:
    """A BatchWriteItem whose answer was lost, less its puts whose items are there (read back, strongly consistent):
    they were written, and may have changed since."""
    remaining: dict[str, list[dict[str, Any]]] = {}
    for table, writes in request["RequestItems"].items():
        puts = [w["PutRequest"]["Item"] for w in writes if "PutRequest" in w]
        keys = [key_in(item) for item in puts]
        found: set[tuple[str, str]] = set()
        while keys:
            response = client.batch_get_item(RequestItems={table: {"Keys": keys, "ConsistentRead": True}})
            found |= {_key(item) for item in response.get("Responses", {}).get(table, [])}
            keys = response.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])
        kept = [w for w in writes if "PutRequest" not in w or _key(w["PutRequest"]["Item"]) not in found]
        if kept:
            remaining[table] = kept
    return {**request, "RequestItems": remaining}


def throttled_partitions(table: str, request: Request) -> set[str]:
    """The queues whose items on `table` a throttled request wrote (its key, its item, its batch's puts)."""
    if request.get("TableName") == table:
        keys = [request.get("Key") or request.get("Item") or {}]
    else:
        batch = request.get("RequestItems", {}).get(table)
        writes = batch if isinstance(batch, list) else []
        keys = [write.get("PutRequest", {}).get("Item", {}) for write in writes]
    partitions = (read(key, KeyedItem.pk) for key in keys)
    return {queue_id_of(partition) for partition in partitions if partition is not None}


def assignments(update: str, names: dict[str, str]) -> list[tuple[str, str]]:
    """The `name = :value` assignments of an UpdateExpression's SET clause (attribute names resolved)."""
    parts = _CLAUSE.split(update)
    found: list[tuple[str, str]] = []
    for keyword, clause in zip(parts[1::2], parts[2::2], strict=True):
        if keyword.upper() != "SET":
            continue
        depth, start, pieces = 0, 0, []
        for n, char in enumerate(clause):
            depth += (char == "(") - (char == ")")
            if char == "," and depth == 0:
                pieces.append(clause[start:n])
                start = n + 1
        pieces.append(clause[start:])
        for piece in pieces:
            matched = _ASSIGNMENT.fullmatch(piece)
            if matched:
                found.append((names.get(matched[1], matched[1]), matched[2]))
    return found


def applied(client: RetryingClient, operation: str, request: Request) -> dict[str, Any] | None:
    """After an attempt whose answer was lost, a retry's failed condition: the response the write would have had if
    the item, read back, shows that it was applied (a deleted item gone; a put item there as put; every plain
    assignment of an update there), else None (the condition failed on someone else's write)."""
    if operation not in ("delete_item", "put_item", "update_item"):
        return None
    key = request.get("Key") or key_in(request["Item"])
    item = client.get_item(TableName=request["TableName"], Key=key, ConsistentRead=True).get("Item")
    if operation == "delete_item":
        return {} if item is None else None
    if item is None:
        return None
    if operation == "put_item":
        return {} if item == request["Item"] else None
    values = request.get("ExpressionAttributeValues", {})
    assigned = assignments(request.get("UpdateExpression", ""), request.get("ExpressionAttributeNames", {}))
    if assigned and all(item.get(name) == values.get(value) for name, value in assigned):
        return {"Attributes": item}
    return None
