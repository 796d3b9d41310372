"""Signature nonces across every function container: one conditional put per signed OpenAPI request in the meta
table (`items.meta.NonceItem`: `pk = nonce#{key}`), removed by TTL once the request's timestamp is out of the accepted
window."""

from __future__ import annotations

from typing import Any

from mnsd.storage.dynamodb.items.conditions import conditional
from mnsd.storage.dynamodb.items.meta import NONCE_PREFIX, NonceItem
from mnsd.storage.dynamodb.items.wire import Expression, item_of


class DynamoNonces:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def first_use(self, key: str, expires: int) -> bool:
        item = item_of(NonceItem, {"pk": f"{NONCE_PREFIX}{key}", "sk": "nonce", "x": expires})
        new = Expression()
        condition = new.condition(NonceItem.pk.does_not_exist())
        put = conditional(
            self.client.put_item, TableName=self.table, Item=item, ConditionExpression=condition, **new.arguments()
        )
        return put is not None
