"""The analytics as pure DataFrame functions: export items in, one result DataFrame out.

Inputs are the raw export DataFrames read with the schemas of `glue_jobs.schemas`. Every output
has a `date` column (yyyy-mm-dd, UTC) to partition by. Days and hours are computed from epoch
milliseconds with integer arithmetic, so nothing depends on the session time zone.
Metric definitions: docs/analytics.md.
"""

from __future__ import annotations

import datetime

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from glue_jobs.schemas import (
    MESSAGE_ATTRIBUTES,
    META_ATTRIBUTES,
    PACK_ENTRIES,
    QUEUE_EVENT_ATTRIBUTES,
    TOPIC_EVENT_ATTRIBUTES,
    flatten,
)

HOUR_MS = 3_600_000
DAY_MS = 86_400_000
PERCENTILES = (0.5, 0.95, 0.99)
DEFAULT_POISON_THRESHOLD = 5


def _utc_date(epoch_ms: Column) -> Column:
    return F.date_from_unix_date(F.floor(epoch_ms / DAY_MS).cast("int")).cast("string")


def _utc_hour(epoch_ms: Column) -> Column:
    return (F.floor(epoch_ms / HOUR_MS) % 24).cast("int")


def drop_days_ttl_may_have_thinned(hourly: DataFrame, export_time_ms: int, log_ttl_hours: int) -> DataFrame:
    """Keep the days that started at or after export time - TTL: none of their records can have been removed.

    Older days may have lost records to TTL, and rewriting their partitions would replace complete
    figures (written by an earlier export) with smaller ones."""
    first_day = -(-(export_time_ms - log_ttl_hours * HOUR_MS) // DAY_MS)
    cutoff = (datetime.date(1970, 1, 1) + datetime.timedelta(days=first_day)).isoformat()
    return hourly.where(F.col("date") >= cutoff)


def log_events(log_items: DataFrame, kind: str, attributes: dict[str, str]) -> DataFrame:
    """The log events of one kind (`queue` or `topic`), each (pk, sk) once, with account and resource.

    A stream retry can write the same event twice: copies share (pk, sk) and every attribute, so the
    event's string attributes join (pk, sk) in the de-duplication key. That keeps the de-duplication a
    hash aggregate (only numbers ride along) instead of a sort of the whole log. Account, kind and
    resource are read from `pk` (`{account}#{kind}#{resource}`), which every item has.
    """
    events = flatten(log_items, attributes).where(F.col("pk").isNotNull() & F.col("sk").isNotNull())
    pk_parts = F.split(F.col("pk"), "#")
    strings = [name for name, type_ in attributes.items() if type_ == "S"]
    return (
        events.where(pk_parts[1] == kind)
        .dropDuplicates(strings)
        .withColumns({"_account": pk_parts[0], "_resource": pk_parts[2]})
    )


def _count(condition: Column) -> Column:
    return F.count(F.when(condition, 1))


def _quantile_columns(frame: DataFrame, column: str, prefix: str) -> DataFrame:
    names = [f"{prefix}_p{int(p * 100)}" for p in PERCENTILES]
    return frame.select(
        *(c for c in frame.columns if c != column),
        *(F.col(column)[i].alias(name) for i, name in enumerate(names)),
    )


def queue_hourly(log_items: DataFrame) -> DataFrame:
    """Per (account, queue, date, hour): event counts and time-to-first-receive / time-in-queue percentiles."""
    events = log_events(log_items, "queue", QUEUE_EVENT_ATTRIBUTES)
    event = F.col("event")
    waited = F.col("time") - F.col("enqueue_time")
    levels = F.array(*(F.lit(p) for p in PERCENTILES))
    first_receive = (event == "receive") & (F.col("dequeue_count") == 1)
    hourly = events.groupBy(
        F.col("_account").alias("account"),
        F.col("_resource").alias("queue"),
        _utc_date(F.col("time")).alias("date"),
        _utc_hour(F.col("time")).alias("hour"),
    ).agg(
        _count(event == "send").alias("sends"),
        _count(event == "receive").alias("receives"),
        _count(event == "delete").alias("deletes"),
        _count((event == "receive") & (F.col("dequeue_count") > 1)).alias("redeliveries"),
        _count(event == "expire").alias("expired"),
        F.percentile(F.when(first_receive, waited), levels).alias("_first_receive"),
        F.percentile(F.when(event == "delete", waited), levels).alias("_in_queue"),
    )
    hourly = _quantile_columns(hourly, "_first_receive", "time_to_first_receive_ms")
    return _quantile_columns(hourly, "_in_queue", "time_in_queue_ms")


def subscription_hourly(log_items: DataFrame) -> DataFrame:
    """Per (account, topic, subscription, date, hour): deliveries, first-try successes, retries, drops, latency."""
    events = log_events(log_items, "topic", TOPIC_EVENT_ATTRIBUTES).where(
        F.col("event").isin("push", "drop") & F.col("subscription").isNotNull()
    )
    push = F.col("event") == "push"
    success = push & (F.col("outcome") == "success")
    levels = F.array(*(F.lit(p) for p in PERCENTILES))
    hourly = events.groupBy(
        F.col("_account").alias("account"),
        F.col("_resource").alias("topic"),
        F.col("subscription"),
        _utc_date(F.col("time")).alias("date"),
        _utc_hour(F.col("time")).alias("hour"),
    ).agg(
        F.count_distinct(F.when(success, F.col("message_id"))).alias("deliveries"),
        _count(success & (F.col("attempt") == 1)).alias("first_try_successes"),
        _count(push & (F.col("attempt") > 1)).alias("retries"),
        _count(F.col("event") == "drop").alias("drops"),
        F.percentile(F.when(success, F.col("latency_ms")), levels).alias("_latency"),
    )
    return _quantile_columns(hourly, "_latency", "delivery_latency_ms")


def poison_messages(log_items: DataFrame, snapshot_ms: int, threshold: int = DEFAULT_POISON_THRESHOLD) -> DataFrame:
    """Messages received at least `threshold` times (max dequeue_count) that were never deleted."""
    events = log_events(log_items, "queue", QUEUE_EVENT_ATTRIBUTES)
    event = F.col("event")
    per_message = events.groupBy(
        F.col("_account").alias("account"), F.col("_resource").alias("queue"), F.col("message_id")
    ).agg(
        F.max("dequeue_count").alias("max_dequeue_count"),
        F.min("enqueue_time").alias("enqueue_time"),
        F.max(F.when(event == "receive", F.col("time"))).alias("last_receive_time"),
        _count(event == "delete").alias("_deletes"),
        (_count(event == "expire") > 0).alias("expired"),
    )
    return per_message.where((F.col("max_dequeue_count") >= threshold) & (F.col("_deletes") == 0)).select(
        "account",
        "queue",
        "message_id",
        "max_dequeue_count",
        "enqueue_time",
        "last_receive_time",
        "expired",
        F.lit(snapshot_ms).cast("long").alias("snapshot_time"),
        _utc_date(F.lit(snapshot_ms)).alias("date"),
    )


def queues_of(meta_items: DataFrame) -> DataFrame:
    """(account, queue, queue_id) from the meta table's `{account}#queue` items."""
    meta = flatten(meta_items, META_ATTRIBUTES)
    return meta.where(F.col("pk").endswith("#queue") & F.col("queue_id").isNotNull()).select(
        F.split(F.col("pk"), "#")[0].alias("account"), F.col("sk").alias("queue"), "queue_id"
    )


def _leases(items: DataFrame) -> DataFrame:
    """One row per message lease: a single lease as it is, a packed batch's lease (`p`) as one row per entry that holds
    a message (its `r{n}`), with the entry's own `v`, `d`, `k` and the pack's `e` and `x` (one pass over the input)."""

    def entry(suffix: str, holds: Column) -> Column:
        return F.struct(holds.alias("r"), *(F.col(f"{name}{suffix}").alias(name) for name in ("v", "d", "k")))

    own = F.array(entry("", F.lit(1).cast("long")))
    packed = F.array(*(entry(str(n), F.col(f"r{n}")) for n in range(PACK_ENTRIES)))
    rows = items.select("pk", "sk", "e", "x", F.explode(F.when(F.col("p").isNull(), own).otherwise(packed)).alias("l"))
    return rows.where(F.col("l.r").isNotNull()).select("pk", "sk", "e", "x", "l.v", "l.d", "l.k")


def backlog_snapshot(message_items: DataFrame, meta_items: DataFrame, snapshot_ms: int) -> DataFrame:
    """Per queue at `snapshot_ms`: Active / Inactive / Delayed counts and the oldest message's age.

    Only lease items (`sk` starting with `L`) count; a lease whose TTL `x` has passed is skipped even
    though DynamoDB may not have removed it yet, and so is a lease kept for rewind (`k`). Queues with no live message report zeros. Leases of
    queue incarnations absent from the meta table (deleted queues awaiting TTL) are left out by the join.
    """
    leases = _leases(flatten(message_items, MESSAGE_ATTRIBUTES)).where(
        F.col("sk").startswith("L") & (F.col("x").isNull() | (F.col("x") * 1000 > snapshot_ms)) & F.col("k").isNull()
    )
    waiting = F.col("v") > snapshot_ms
    dequeued = F.coalesce(F.col("d"), F.lit(0)) > 0
    # A striped queue's leases are in partitions `{queue_id}#{stripe}` beside `{queue_id}` (stripe 0).
    per_queue = leases.groupBy(F.split(F.col("pk"), "#")[0].alias("queue_id")).agg(
        _count(~waiting | F.col("v").isNull()).alias("active"),
        _count(waiting & dequeued).alias("inactive"),
        _count(waiting & ~dequeued).alias("delayed"),
        F.min("e").alias("_oldest_enqueue"),
    )
    joined = queues_of(meta_items).join(per_queue, "queue_id", "left")
    return joined.select(
        "account",
        "queue",
        "queue_id",
        *(F.coalesce(F.col(c), F.lit(0)).cast("long").alias(c) for c in ("active", "inactive", "delayed")),
        (F.lit(snapshot_ms) - F.col("_oldest_enqueue")).alias("oldest_message_age_ms"),
        F.lit(snapshot_ms).cast("long").alias("snapshot_time"),
        _utc_date(F.lit(snapshot_ms)).alias("date"),
    )


def backlog_from_counts(rows: DataFrame, snapshot_ms: int) -> DataFrame:
    """The backlog snapshot from the snapshot function's rows (`glue_jobs.schemas.BACKLOG_SCHEMA`): the same columns as
    `backlog_snapshot`. Each queue's counts are its `backlog` when it was read (`read_at`, within the run that started
    at `snapshot_ms`), exact up to a few thousand leases per state range and estimated beyond; its oldest message is
    the oldest not delayed, aged at its own read."""
    return rows.select(
        "account",
        "queue",
        "queue_id",
        *(F.coalesce(F.col(c), F.lit(0)).cast("long").alias(c) for c in ("active", "inactive", "delayed")),
        (F.col("read_at") - F.col("oldest_enqueue_time")).alias("oldest_message_age_ms"),
        F.lit(snapshot_ms).cast("long").alias("snapshot_time"),
        _utc_date(F.lit(snapshot_ms)).alias("date"),
    )
