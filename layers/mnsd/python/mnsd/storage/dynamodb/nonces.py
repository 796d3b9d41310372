"""Signature nonces across every function container: one conditional put per signed OpenAPI request in the meta
table (`pk = nonce#{key}`), removed by TTL once the request's timestamp is out of the accepted window."""

from __future__ import annotations

from typing import Any

from mnsd.storage.dynamodb.conditions import conditional
from mnsd.storage.dynamodb.layout import TTL_ATTRIBUTE

_NEW = "attribute_not_exists(pk)"


class DynamoNonces:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def first_use(self, key: str, expires: int) -> bool:
        item = {"pk": {"S": f"nonce#{key}"}, "sk": {"S": "nonce"}, TTL_ATTRIBUTE: {"N": str(expires)}}
        put = conditional(self.client.put_item, TableName=self.table, Item=item, ConditionExpression=_NEW)
        return put is not None
