"""Explicit read schemas for DynamoDB export lines (`{"Item": {"name": {"S": ...}, ...}}` per line).

Spark reads each export with one of these schemas, so there is no inference pass and the JSON
parser skips every attribute a job does not need (bodies, properties, ...). Numbers arrive as
DynamoDB `{"N": "123"}` strings and are cast to long when the item is flattened.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

# The operation-log table (MNS_LOG_TABLE): attribute -> DynamoDB type. See docs/analytics.md.
LOG_ATTRIBUTES: dict[str, str] = {
    "pk": "S",
    "sk": "S",
    "account": "S",
    "kind": "S",
    "resource": "S",
    "event": "S",
    "time": "N",
    "message_id": "S",
    "enqueue_time": "N",
    "dequeue_count": "N",
    "first_dequeue_time": "N",
    "priority": "N",
    "delay": "N",
    "body_size": "N",
    "subscription": "S",
    "endpoint_kind": "S",
    "attempt": "N",
    "outcome": "S",
    "status": "N",
    "latency_ms": "N",
    "publish_time": "N",
    "x": "N",
}

# What the jobs read of the log: queue jobs and the subscription job each parse only their attributes.
QUEUE_EVENT_ATTRIBUTES = {k: LOG_ATTRIBUTES[k] for k in ("pk", "sk", "event", "time", "message_id")} | {
    k: LOG_ATTRIBUTES[k] for k in ("enqueue_time", "dequeue_count")
}
TOPIC_EVENT_ATTRIBUTES = {k: LOG_ATTRIBUTES[k] for k in ("pk", "sk", "event", "time", "message_id")} | {
    k: LOG_ATTRIBUTES[k] for k in ("subscription", "attempt", "outcome", "latency_ms")
}

# The message table (MNS_MESSAGE_TABLE): only what the backlog snapshot needs. Bodies are never read.
MESSAGE_ATTRIBUTES: dict[str, str] = {
    "pk": "S",
    "sk": "S",
    "v": "N",
    "d": "N",
    "e": "N",
    "x": "N",
    "k": "BOOL",  # a lease kept for rewind (deleted, no `v`): not part of the backlog
}
# A packed batch's lease (`mnsd.storage.dynamodb.items.packs`): `p` its batch's size, and each entry n's own `v`, `d`, `k` as
# `v{n}`, `d{n}`, `k{n}`, with `r{n}` (its version) present while the entry holds a message.
PACK_ENTRIES = 16
PACK_ENTRY_ATTRIBUTES = {"r": "N", "v": "N", "d": "N", "k": "BOOL"}
MESSAGE_ATTRIBUTES |= {"p": "N"} | {
    f"{name}{n}": kind for n in range(PACK_ENTRIES) for name, kind in PACK_ENTRY_ATTRIBUTES.items()
}

# The meta table (MNS_META_TABLE): queue items map (account, queue name) to the queue incarnation.
META_ATTRIBUTES: dict[str, str] = {
    "pk": "S",
    "sk": "S",
    "queue_id": "S",
}


# The backlog snapshot (`mnsd.monitoring.snapshot.BacklogRow`): one plain JSON line per queue, not DynamoDB JSON.
BACKLOG_STRINGS = ("account", "queue", "queue_id")
BACKLOG_NUMBERS = ("active", "inactive", "delayed", "oldest_enqueue_time", "read_at")
BACKLOG_SCHEMA = StructType(
    [StructField(name, StringType()) for name in BACKLOG_STRINGS]
    + [StructField(name, LongType()) for name in BACKLOG_NUMBERS]
)


def item_schema(attributes: dict[str, str]) -> StructType:
    """The schema of one export line: `Item` holding `{type: value}` structs, every value read as a string."""
    fields = [StructField(name, StructType([StructField(kind, StringType())])) for name, kind in attributes.items()]
    return StructType([StructField("Item", StructType(fields))])


LOG_SCHEMA = item_schema(LOG_ATTRIBUTES)
QUEUE_EVENT_SCHEMA = item_schema(QUEUE_EVENT_ATTRIBUTES)
TOPIC_EVENT_SCHEMA = item_schema(TOPIC_EVENT_ATTRIBUTES)
MESSAGE_SCHEMA = item_schema(MESSAGE_ATTRIBUTES)
META_SCHEMA = item_schema(META_ATTRIBUTES)


def _value(name: str, kind: str) -> Column:
    column = F.col(f"Item.{name}.{kind}")
    return column.cast("long").alias(name) if kind == "N" else column.alias(name)


def flatten(items: DataFrame, attributes: dict[str, str]) -> DataFrame:
    """One column per attribute: strings as they are, numbers as long; a missing attribute is null."""
    return items.select(*(_value(name, kind) for name, kind in attributes.items()))
