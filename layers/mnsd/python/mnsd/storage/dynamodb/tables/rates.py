"""Counting requests per second across every function container: a conditional counter item in the meta table.

A count of one key and second is `pk = rate#{key}#{shard}`, `sk = {second}` (`items.meta.RateItem`), removed by TTL
a minute later.
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

from mnsd.storage.dynamodb.items.conditions import condition_failed
from mnsd.storage.dynamodb.items.meta import RATE_PREFIX, RateItem
from mnsd.storage.dynamodb.items.wire import Expression, key_of, set_value

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
        counted = Expression()
        try:
            self.client.update_item(
                TableName=self.table,
                Key=key_of(RateItem, f"{RATE_PREFIX}{key}#{shard}", str(second)),
                UpdateExpression=counted.update(RateItem.n.add(1), set_value(RateItem.x, second + KEEP_SECONDS)),
                ConditionExpression=counted.condition(RateItem.n.does_not_exist() | (RateItem.n < share)),
                **counted.arguments(),
            )
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise
        return True
