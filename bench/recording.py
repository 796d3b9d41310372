"""A recording proxy over a boto3 DynamoDB client: every call with its DynamoDB-billed capacity.

Units follow DynamoDB's rules via `mnsd.storage.capacity`:
  PutItem           write units of max(size before, size of the new item)
  BatchWriteItem    per item, as PutItem / DeleteItem
  UpdateItem        write units of max(size before, size after)
  DeleteItem        write units of the deleted item (1 if absent)
  TransactWriteItems  twice the units of each Put / Update / Delete as above (a cancelled
                    transaction is billed the same and recorded as a failed condition)
  failed conditional writes consume as if they had succeeded (size of the item present)
  GetItem           read units of the item (1 if absent); ConsistentRead = full, else half
  BatchGetItem      per item, eventually consistent unless asked
  Query             read units of the total size of the items evaluated (rounded once, 4 KB),
                    halved when eventually consistent; ProjectionExpression and Select=COUNT do
                    not reduce it, so evaluated items are re-read in full through the raw client.
Sizes before/after are read through the raw, unrecorded client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from bench import _common  # noqa: F401  (import paths)
from mnsd.storage.capacity import item_size, read_units, write_units
from mnsd.storage.dynamodb import condition_failed


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


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)

    def reset(self) -> None:
        self.calls.clear()


class RecordingClient:
    def __init__(self, raw: Any, recorder: Recorder) -> None:
        self._raw = raw
        self.recorder = recorder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    # --- helpers --------------------------------------------------------------------------------

    def _size_of(self, table: str, key: dict[str, Any]) -> int | None:
        item = self._raw.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        return None if item is None else item_size(item)

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

    def put_item(self, **kwargs: Any) -> Any:
        table, item = kwargs["TableName"], kwargs["Item"]
        before = self._size_of(table, self._key_of(item)) or 0
        result, failed = self._conditional(self._raw.put_item, **kwargs)
        size = before if failed else max(before, item_size(item))
        self.recorder.calls.append(Call("PutItem", table, 1, 0, write_units(size), 0, failed, f"{size} B"))
        if failed:
            raise result
        return result

    def batch_write_item(self, **kwargs: Any) -> Any:
        wcu, n, sizes = 0, 0, []
        table = ""
        for table, requests in kwargs["RequestItems"].items():
            for request in requests:
                if "PutRequest" in request:
                    item = request["PutRequest"]["Item"]
                    before = self._size_of(table, self._key_of(item)) or 0
                    size = max(before, item_size(item))
                else:
                    size = self._size_of(table, request["DeleteRequest"]["Key"]) or 0
                wcu += write_units(size)
                sizes.append(size)
                n += 1
        result = self._raw.batch_write_item(**kwargs)
        unprocessed = sum(len(v) for v in result.get("UnprocessedItems", {}).values())
        detail = f"{n} items, sizes {sorted(sizes)}" + (f", {unprocessed} unprocessed" if unprocessed else "")
        self.recorder.calls.append(Call("BatchWriteItem", table, n, 0, wcu, 0, False, detail))
        return result

    def update_item(self, **kwargs: Any) -> Any:
        table, key = kwargs["TableName"], kwargs["Key"]
        before = self._size_of(table, key)
        result, failed = self._conditional(self._raw.update_item, **kwargs)
        after = before if failed else self._size_of(table, key)
        size = max(before or 0, after or 0)
        self.recorder.calls.append(
            Call("UpdateItem", table, 1, 0, write_units(size), 0, failed, f"{before}->{after} B")
        )
        if failed:
            raise result
        return result

    def delete_item(self, **kwargs: Any) -> Any:
        table, key = kwargs["TableName"], kwargs["Key"]
        before = self._size_of(table, key)
        result, failed = self._conditional(self._raw.delete_item, **kwargs)
        self.recorder.calls.append(Call("DeleteItem", table, 1, 0, write_units(before or 0), 0, failed, f"{before} B"))
        if failed:
            raise result
        return result

    def transact_write_items(self, **kwargs: Any) -> Any:
        sizes = []
        table = ""
        for action in kwargs["TransactItems"]:
            (kind, request), *_ = action.items()
            table = request["TableName"]
            key = self._key_of(request["Item"]) if kind == "Put" else request["Key"]
            before = self._size_of(table, key) or 0
            sizes.append(max(before, item_size(request["Item"])) if kind == "Put" else before)
        try:
            result, failed = self._raw.transact_write_items(**kwargs), False
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            result, failed = exc, True
        wcu = 2 * sum(write_units(size) for size in sizes)
        detail = f"{len(sizes)} items, sizes {sizes}"
        self.recorder.calls.append(Call("TransactWriteItems", table, len(sizes), 0, wcu, 0, failed, detail))
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
            )
        )
        return result
