"""The control-plane table on DynamoDB: `pk` the record's scope (`{account}#{kind}`, see
`mnsd.control.catalog`), `sk` the resource name, so listing with a prefix and paging is one Query.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from mnsd.model.ports import Record
from mnsd.storage.dynamodb import queries
from mnsd.storage.dynamodb.conditions import condition_failed

if TYPE_CHECKING:
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer


@lru_cache(maxsize=1)
def _types() -> tuple[TypeSerializer, TypeDeserializer]:
    """boto3's DynamoDB type codec, loaded on first use (importing boto3 costs a cold start ~200 ms)."""
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

    return TypeSerializer(), TypeDeserializer()


def _to_item(record: Record) -> dict[str, Any]:
    return {key: _types()[0].serialize(value) for key, value in record.items()}


def meta_item(scope: str, name: str, record: Record) -> dict[str, Any]:
    """A record as the meta table stores it (DynamoDB JSON)."""
    return {"pk": {"S": scope}, "sk": {"S": name}, **_to_item(record)}


def _from_item(item: dict[str, Any]) -> Record:
    record = {key: _types()[1].deserialize(value) for key, value in item.items() if key not in ("pk", "sk")}
    return {key: int(value) if isinstance(value, Decimal) else value for key, value in record.items()}


class DynamoMetaTable:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def _key(self, scope: str, name: str) -> dict[str, Any]:
        return {"pk": {"S": scope}, "sk": {"S": name}}

    def create(self, scope: str, name: str, record: Record) -> Record | None:
        """Store a new record; if the name is taken, return the record that holds it instead."""
        item = {**self._key(scope, name), **_to_item(record)}
        try:
            self.client.put_item(TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)")
            return None
        except ClientError as exc:
            if not condition_failed(exc):
                raise
        existing = self.get(scope, name)
        return existing if existing is not None else self.create(scope, name, record)

    def get(self, scope: str, name: str) -> Record | None:
        response = self.client.get_item(TableName=self.table, Key=self._key(scope, name), ConsistentRead=True)
        item = response.get("Item")
        return None if item is None else _from_item(item)

    def update(self, scope: str, name: str, changes: Record, expected: Record | None = None) -> bool:
        """Apply changes to an existing record; False if there is none, or if it does not hold the `expected`
        values (None: the attribute must be absent)."""
        if not changes:
            return self.get(scope, name) is not None
        names = {f"#a{i}": key for i, key in enumerate(changes)}
        values = {f":v{i}": _types()[0].serialize(value) for i, value in enumerate(changes.values())}
        condition = ["attribute_exists(pk)"]
        for i, (key, value) in enumerate((expected or {}).items()):
            names[f"#e{i}"] = key
            if value is None:
                condition.append(f"attribute_not_exists(#e{i})")
            else:
                values[f":e{i}"] = _types()[0].serialize(value)
                condition.append(f"#e{i} = :e{i}")
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self._key(scope, name),
                UpdateExpression="SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(changes))),
                ConditionExpression=" AND ".join(condition),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            return True
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise

    def put(self, scope: str, name: str, record: Record) -> None:
        self.client.put_item(TableName=self.table, Item={**self._key(scope, name), **_to_item(record)})

    def delete(self, scope: str, name: str) -> Record | None:
        """Delete a record; the deleted record, or None if there was none."""
        response = self.client.delete_item(TableName=self.table, Key=self._key(scope, name), ReturnValues="ALL_OLD")
        item = response.get("Attributes")
        return None if item is None else _from_item(item)

    def count(self, scope: str) -> int:
        return queries.count(
            self.client,
            TableName=self.table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": scope}},
        )

    def list(
        self, scope: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[tuple[str, Record]], bool]:
        """Up to `limit` (name, record) pairs in name order, and whether more follow."""
        values: dict[str, Any] = {":pk": {"S": scope}}
        condition = "pk = :pk"
        if prefix:
            condition += " AND begins_with(sk, :prefix)"
            values[":prefix"] = {"S": prefix}
        found: list[tuple[str, Record]] = []
        start = self._key(scope, start_after) if start_after else None
        while len(found) <= limit:
            kwargs: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
            response = self.client.query(
                TableName=self.table,
                KeyConditionExpression=condition,
                ExpressionAttributeValues=values,
                Limit=limit + 1 - len(found),
                **kwargs,
            )
            found += [(item["sk"]["S"], _from_item(item)) for item in response["Items"]]
            start = response.get("LastEvaluatedKey")
            if not start:
                break
        return found[:limit], len(found) > limit
