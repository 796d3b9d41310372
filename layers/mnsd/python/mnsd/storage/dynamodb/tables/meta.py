"""The control-plane table on DynamoDB: `pk` the record's scope (`{account}#{kind}`, see
`mnsd.control.catalog`), `sk` the resource name, so listing with a prefix and paging is one Query.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from botocore.exceptions import ClientError

from mnsd.model.ports import Record
from mnsd.storage.dynamodb.items.conditions import condition_failed
from mnsd.storage.dynamodb.items.meta import MetaItem, model_of
from mnsd.storage.dynamodb.items.wire import Expression, equals, item_of, key_of, read, record_of, set_value
from mnsd.storage.dynamodb.tables import queries

_KEYS = ("pk", "sk")


def meta_item(scope: str, name: str, record: Record) -> dict[str, Any]:
    """A record as the meta table stores it (DynamoDB JSON)."""
    return item_of(model_of(scope), {"pk": scope, "sk": name, **record})


def _record(item: dict[str, Any]) -> Record:
    return record_of(model_of(read(item, MetaItem.pk)), item, leave=_KEYS)


class DynamoMetaTable:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def _key(self, scope: str, name: str) -> dict[str, Any]:
        return key_of(MetaItem, scope, name)

    def create(self, scope: str, name: str, record: Record) -> Record | None:
        """Store a new record; if the name is taken, return the record that holds it instead."""
        new = Expression()
        try:
            self.client.put_item(
                TableName=self.table,
                Item=meta_item(scope, name, record),
                ConditionExpression=new.condition(MetaItem.pk.does_not_exist()),
                **new.arguments(),
            )
            return None
        except ClientError as exc:
            if not condition_failed(exc):
                raise
        existing = self.get(scope, name)
        return existing if existing is not None else self.create(scope, name, record)

    def get(self, scope: str, name: str) -> Record | None:
        response = self.client.get_item(TableName=self.table, Key=self._key(scope, name), ConsistentRead=True)
        item = response.get("Item")
        return None if item is None else _record(item)

    def update(self, scope: str, name: str, changes: Record, expected: Record | None = None) -> bool:
        """Apply changes to an existing record; False if there is none, or if it does not hold the `expected`
        values (None: the attribute must be absent)."""
        if not changes:
            return self.get(scope, name) is not None
        fields = model_of(scope).get_attributes()
        try:  # (an unknown field is a KeyError: every field a record has is its model's)
            actions = [set_value(fields[key], value) for key, value in changes.items()]
            held = [equals(fields[key], value) for key, value in (expected or {}).items()]
        except KeyError as exc:
            raise ValueError(f"no attribute {exc} in the records of {scope!r}") from None
        expression = Expression()
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self._key(scope, name),
                UpdateExpression=expression.update(*actions),
                ConditionExpression=expression.condition(reduce(lambda a, b: a & b, held, MetaItem.pk.exists())),
                **expression.arguments(),
            )
            return True
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise

    def put(self, scope: str, name: str, record: Record) -> None:
        self.client.put_item(TableName=self.table, Item=meta_item(scope, name, record))

    def delete(self, scope: str, name: str) -> Record | None:
        """Delete a record; the deleted record, or None if there was none."""
        response = self.client.delete_item(TableName=self.table, Key=self._key(scope, name), ReturnValues="ALL_OLD")
        item = response.get("Attributes")
        return None if item is None else _record(item)

    def count(self, scope: str) -> int:
        scoped = Expression()
        return queries.count(
            self.client, TableName=self.table, KeyConditionExpression=scoped.condition(MetaItem.pk == scope),
            **scoped.arguments(),
        )  # fmt: skip

    def list(
        self, scope: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[tuple[str, Record]], bool]:
        """Up to `limit` (name, record) pairs in name order, and whether more follow."""
        listed = Expression()
        keys = MetaItem.pk == scope
        condition = listed.condition(keys & MetaItem.sk.startswith(prefix) if prefix else keys)
        found: list[tuple[str, Record]] = []
        start = self._key(scope, start_after) if start_after else None
        while len(found) <= limit:
            kwargs: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
            response = self.client.query(
                TableName=self.table,
                KeyConditionExpression=condition,
                **listed.arguments(),
                Limit=limit + 1 - len(found),
                **kwargs,
            )
            found += [(record_of(MetaItem, item)["sk"], _record(item)) for item in response["Items"]]
            start = response.get("LastEvaluatedKey")
            if not start:
                break
        return found[:limit], len(found) > limit
