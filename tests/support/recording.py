"""A recording proxy over a boto3 DynamoDB client: every call with its DynamoDB-billed capacity.

Units follow DynamoDB's rules via `mnsd.storage.capacity`:
  PutItem           write units of max(size before, size of the new item)
  BatchWriteItem    per item, as PutItem / DeleteItem
  UpdateItem        write units of max(size before, size after)
  DeleteItem        write units of the deleted item (1 if absent)
  TransactWriteItems  twice the units of each Put / Update / Delete / ConditionCheck as above (a cancelled
                    transaction is billed the same and recorded as a failed condition); its index writes as
                    below, once (counted as standard writes: an assumption, DynamoDB's guide is silent)
  failed conditional writes consume as if they had succeeded (size of the item present)
  GetItem           read units of the item (1 if absent); ConsistentRead = full, else half
  BatchGetItem      per item, eventually consistent unless asked
  Query             read units of the total size of the items evaluated (rounded once, 4 KB),
                    halved when eventually consistent; ProjectionExpression and Select=COUNT do
                    not reduce it, so evaluated items are re-read in full through the raw client.
  index writes      per global secondary index: putting an entry, deleting one, or rewriting one whose
                    projected attributes changed cost one write of the entry's size (projected attributes and
                    keys, plus 100 bytes); changing an entry's index key costs two (delete, then put)
Sizes before/after are read through the raw, unrecorded client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from mnsd.storage.capacity import item_size, read_units, write_units
from mnsd.storage.dynamodb.items.conditions import condition_failed


@dataclass
class Call:
    op: str
    table: str
    items_written: int = 0
    items_read: int = 0
    wcu: float = 0.0
    rcu: float = 0.0
    failed_condition: bool = False
    detail: str = ""
    index_wcu: float = 0.0  # writes of the table's global secondary indexes (not in `wcu`)
    index: str = ""  # the index a Query read (none: the table)


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)

    def reset(self) -> None:
        self.calls.clear()


def _entry(item: dict[str, Any] | None, keys: list[str], projected: set[str] | None) -> dict[str, Any] | None:
    """An item's entry in an index (None if it lacks the index's keys: a sparse index leaves it out)."""
    if item is None or not all(k in item for k in keys):
        return None
    return {k: v for k, v in item.items() if k in keys or projected is None or k in projected}


def _size(item: dict[str, Any] | None) -> int | None:
    return None if item is None else item_size(item)


# The detail a single-item write records, from the item's size before and after (None: absent).
_WRITE_DETAIL = {
    "PutItem": lambda before, after: f"{max(before or 0, after or 0)} B",
    "UpdateItem": lambda before, after: f"{before}->{after} B",
    "DeleteItem": lambda before, after: f"{before} B",
}


class RecordingClient:
    def __init__(self, raw: Any, recorder: Recorder) -> None:
        self._raw = raw
        self.recorder = recorder
        self._indexes: dict[str, list[tuple[list[str], set[str] | None]]] = {}

    def _index_specs(self, table: str) -> list[tuple[list[str], set[str] | None]]:
        """(key attributes, projected attributes or None for ALL) of each global secondary index of a table."""
        if table not in self._indexes:
            description = self._raw.describe_table(TableName=table)["Table"]
            keys = [k["AttributeName"] for k in description["KeySchema"]]
            specs = []
            for index in description.get("GlobalSecondaryIndexes", []):
                index_keys = [k["AttributeName"] for k in index["KeySchema"]]
                projection = index["Projection"]
                kind = projection["ProjectionType"]
                projected = None if kind == "ALL" else set(projection.get("NonKeyAttributes", []))
                specs.append(([*index_keys, *(k for k in keys if k not in index_keys)], projected))
            self._indexes[table] = specs
        return self._indexes[table]

    def _item(self, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        return self._raw.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")

    def _index_wcu(self, table: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> float:
        wcu = 0.0
        for keys, projected in self._index_specs(table):
            old, new = _entry(before, keys, projected), _entry(after, keys, projected)
            if old == new:
                continue
            moved = old is not None and new is not None and any(old[k] != new[k] for k in keys[:2])
            for side in (old, new) if moved else (new or old,):
                if side is not None:
                    wcu += write_units(item_size(side) + 100)
        return wcu

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    # --- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _key_of(item: dict[str, Any]) -> dict[str, Any]:
        return {"pk": item["pk"], "sk": item["sk"]}

    def _conditional(self, fn: Any, **kwargs: Any) -> tuple[Any, bool]:
        try:
            return fn(**kwargs), False
        except ClientError as exc:
            if condition_failed(exc):
                return exc, True
            raise

    # --- writes ---------------------------------------------------------------------------------

    def _write_one(self, op: str, write: Any, kwargs: dict[str, Any], key: dict[str, Any], after: Any) -> Any:
        """A single-item write, billed max(size before, size after) (the item present when its condition failed),
        and its index writes; `after()` is the item it leaves. Raises what the write raised."""
        table = kwargs["TableName"]
        old = self._item(table, key)
        result, failed = self._conditional(write, **kwargs)
        new = old if failed else after()
        before, size = _size(old), _size(new)
        detail = _WRITE_DETAIL[op](before, size)
        call = Call(op, table, 1, 0, write_units(max(before or 0, size or 0)), 0, failed, detail)
        call.index_wcu = self._index_wcu(table, old, new)
        self.recorder.calls.append(call)
        if failed:
            raise result
        return result

    def put_item(self, **kwargs: Any) -> Any:
        item = kwargs["Item"]
        return self._write_one("PutItem", self._raw.put_item, kwargs, self._key_of(item), lambda: item)

    def batch_write_item(self, **kwargs: Any) -> Any:
        wcu, n, sizes, index_wcu = 0, 0, [], 0.0
        table = ""
        for table, requests in kwargs["RequestItems"].items():
            for request in requests:
                if "PutRequest" in request:
                    item = request["PutRequest"]["Item"]
                    old = self._item(table, self._key_of(item))
                    size = max(item_size(old) if old else 0, item_size(item))
                    index_wcu += self._index_wcu(table, old, item)
                else:
                    old = self._item(table, request["DeleteRequest"]["Key"])
                    size = item_size(old) if old else 0
                    index_wcu += self._index_wcu(table, old, None)
                wcu += write_units(size)
                sizes.append(size)
                n += 1
        result = self._raw.batch_write_item(**kwargs)
        unprocessed = sum(len(v) for v in result.get("UnprocessedItems", {}).values())
        detail = f"{n} items, sizes {sorted(sizes)}" + (f", {unprocessed} unprocessed" if unprocessed else "")
        call = Call("BatchWriteItem", table, n, 0, wcu, 0, False, detail)
        call.index_wcu = index_wcu
        self.recorder.calls.append(call)
        return result

    def update_item(self, **kwargs: Any) -> Any:
        table, key = kwargs["TableName"], kwargs["Key"]
        return self._write_one("UpdateItem", self._raw.update_item, kwargs, key, lambda: self._item(table, key))

    def delete_item(self, **kwargs: Any) -> Any:
        return self._write_one("DeleteItem", self._raw.delete_item, kwargs, kwargs["Key"], lambda: None)

    def transact_write_items(self, **kwargs: Any) -> Any:
        actions = []
        for action in kwargs["TransactItems"]:
            (kind, request), *_ = action.items()
            table = request["TableName"]
            key = self._key_of(request["Item"]) if kind == "Put" else request["Key"]
            actions.append((kind, request, table, key, self._item(table, key)))
        try:
            result, failed = self._raw.transact_write_items(**kwargs), False
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            result, failed = exc, True
        sizes, index_wcu = [], 0.0
        for kind, request, table, key, old in actions:
            new = old if failed or kind == "ConditionCheck" else request["Item"] if kind == "Put" else None
            if kind == "Update" and not failed:
                new = self._item(table, key)
            sizes.append(max(_size(old) or 0, _size(new) or 0))
            index_wcu += self._index_wcu(table, old, new)
        wcu = 2 * sum(write_units(size) for size in sizes)
        detail = f"{len(sizes)} items, sizes {sizes}"
        call = Call("TransactWriteItems", actions[-1][2] if actions else "", len(sizes), 0, wcu, 0, failed, detail)
        call.index_wcu = index_wcu
        self.recorder.calls.append(call)
        if failed:
            raise result
        return result

    # --- reads ----------------------------------------------------------------------------------

    def get_item(self, **kwargs: Any) -> Any:
        result = self._raw.get_item(**kwargs)
        item = result.get("Item")
        consistent = bool(kwargs.get("ConsistentRead"))
        size = item_size(item) if item else 0
        self.recorder.calls.append(
            Call(
                "GetItem",
                kwargs["TableName"],
                0,
                1 if item else 0,
                0,
                read_units(size, consistent),
                False,
                f"{size} B{' consistent' if consistent else ''}",
            )
        )
        return result

    def batch_get_item(self, **kwargs: Any) -> Any:
        result = self._raw.batch_get_item(**kwargs)
        rcu, n, table = 0.0, 0, ""
        for table, items in result.get("Responses", {}).items():
            consistent = bool(kwargs["RequestItems"][table].get("ConsistentRead"))
            for item in items:
                rcu += read_units(item_size(item), consistent)
                n += 1
        self.recorder.calls.append(Call("BatchGetItem", table, 0, n, 0, rcu, False, f"{n} items"))
        return result

    def query(self, **kwargs: Any) -> Any:
        result = self._raw.query(**kwargs)
        full = {k: v for k, v in kwargs.items() if k not in ("ProjectionExpression", "Select")}
        if "ExpressionAttributeNames" in full:  # (those only the projection named are left out with it)
            said = " ".join(str(v) for k, v in full.items() if k.endswith("Expression"))
            names = {k: v for k, v in full["ExpressionAttributeNames"].items() if re.search(rf"{k}\b", said)}
            full = {k: v for k, v in full.items() if k != "ExpressionAttributeNames"}
            full.update({"ExpressionAttributeNames": names} if names else {})
        evaluated = self._raw.query(**full)["Items"]
        total = sum(item_size(i) for i in evaluated)
        rcu = read_units(total, bool(kwargs.get("ConsistentRead")))
        self.recorder.calls.append(
            Call(
                "Query",
                kwargs["TableName"],
                0,
                len(evaluated),
                0,
                rcu,
                False,
                f"{len(evaluated)} items evaluated, {total} B",
                index=kwargs.get("IndexName", ""),
            )
        )
        return result


def recorded_moto_services(clock: Any, notifier: Any = None, wrap: Any = None) -> tuple[Any, Any, Recorder]:
    """In-process moto (started; stop the returned mock when done) with the service's tables, and the services
    over a `RecordingClient` of it (given to `wrap` first, when given: `wrap(client, recorder)`): (mock, services,
    recorder)."""
    from moto import mock_aws

    mock = mock_aws()
    mock.start()
    import boto3

    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.services import build_services

    settings = Settings.from_env({})
    raw = boto3.client("dynamodb", region_name="us-east-1")
    create_tables(raw, settings)
    recorder = Recorder()
    client = RecordingClient(raw, recorder)
    services = build_services(
        settings, dynamodb=wrap(client, recorder) if wrap else client, clock=clock, notifier=notifier
    )
    return mock, services, recorder
