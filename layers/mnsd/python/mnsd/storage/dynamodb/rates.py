"""Counting requests per second across every function container: a conditional counter item in the meta table.

A count of one key and second is `pk = rate#{key}#{shard}`, `sk = {second}`, removed by TTL a minute later.
Each taken request costs one write unit (a refused one too: a failed condition is billed). One item takes at
most `SHARD_LIMIT` counts a second, well within an item's 1,000 writes a second: a higher limit spreads over
shards picked at random, each allowed its share, so a request may be refused while another shard still has
room (at most one share of a second early).
"""

from __future__ import annotations

import math
import random
from typing import Any

from botocore.exceptions import ClientError

from mnsd.storage.dynamodb.conditions import condition_failed
from mnsd.storage.dynamodb.layout import TTL_ATTRIBUTE

SHARD_LIMIT = 500
KEEP_SECONDS = 60


class DynamoRateCounter:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def take(self, key: str, second: int, limit: int) -> bool:
        shards = math.ceil(limit / SHARD_LIMIT)
        share = math.ceil(limit / shards)
        shard = random.randrange(shards)
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": f"rate#{key}#{shard}"}, "sk": {"S": str(second)}},
                UpdateExpression="ADD n :one SET #ttl = :ttl",
                ConditionExpression="attribute_not_exists(n) OR n < :share",
                ExpressionAttributeNames={"#ttl": TTL_ATTRIBUTE},
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":share": {"N": str(share)},
                    ":ttl": {"N": str(second + KEEP_SECONDS)},
                },
            )
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise
        return True
