"""The meta table's items: the catalog's records (queues, their id map, topics, subscriptions, account settings, the
accounts with subscriptions), signature nonces and request counters.

Every item is keyed `pk` (the record's scope, `{account}#{kind}`, see `mnsd.control.catalog`; `nonce#{key}`;
`rate#{key}#{shard}`) and `sk` (the resource's name; "nonce"; the second). A record's fields are its attributes,
under the same names (numbers N, text S, flags BOOL, a None NULL); a queue's record also holds the engine's
placement of it (`placement.FIELDS`) and its receivers (a list of maps, each a `Receiver`'s fields).
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)

from mnsd.control.catalog import ACCOUNT, QUEUE, QUEUE_IDS, SUBSCRIBERS, TOPIC
from mnsd.storage.dynamodb.items.wire import Expiry, KeyedItem

NONCE_PREFIX = "nonce#"
RATE_PREFIX = "rate#"


class MetaItem(KeyedItem):
    """The meta table's items: keyed by scope and name."""


class _Placement(MetaItem):
    """The engine's placement of a queue incarnation's messages (`placement.Placement.record`)."""

    stripes = NumberAttribute(null=True)
    widened_at = NumberAttribute(null=True)
    index_since = NumberAttribute(null=True)
    plain_stripes = NumberAttribute(null=True)
    index_cursor = UnicodeAttribute(null=True)


class ReceiverMap(MapAttribute[str, Any]):
    """One of a queue's receivers (`mnsd.model.queues.Receiver`): what the validation of its items checks (the list
    itself is written by type, so a None field stays NULL as it always was)."""

    name = UnicodeAttribute()
    queue_id = UnicodeAttribute()
    create_time_ms = NumberAttribute()
    start_time = NumberAttribute()
    last_modify_time = NumberAttribute()
    visibility_timeout = NumberAttribute(null=True)
    polling_wait_seconds = NumberAttribute(null=True)
    dlq_target = UnicodeAttribute(null=True)
    dlq_max_receive_count = NumberAttribute(null=True)
    copy_cursor = UnicodeAttribute(null=True)


class _Resource(MetaItem):
    """What a queue's and a topic's records both hold: times and the attributes they share."""

    create_time = NumberAttribute()
    last_modify_time = NumberAttribute()
    maximum_message_size = NumberAttribute()
    logging_enabled = BooleanAttribute()
    policy = UnicodeAttribute()
    metrics_enabled = BooleanAttribute(null=True)
    tags = UnicodeAttribute()


class QueueItem(_Resource, _Placement):
    """A queue (`{account}#queue`, its name): its incarnation, times, attributes, receivers and placement."""

    queue_id = UnicodeAttribute()
    delay_seconds = NumberAttribute()
    message_retention_period = NumberAttribute()
    visibility_timeout = NumberAttribute()
    polling_wait_seconds = NumberAttribute()
    dlq_target = UnicodeAttribute()
    dlq_max_receive_count = NumberAttribute()
    rewind_period = NumberAttribute()
    max_receives_per_second = NumberAttribute()
    queue_type = UnicodeAttribute()
    alarms = UnicodeAttribute()
    receivers: ListAttribute[Any] = ListAttribute(null=True)  # of `ReceiverMap`s (see there)
    receivers_version = NumberAttribute(null=True)


class QueueIdItem(_Placement):
    """A queue id's entry (`queue-ids#queue`, the id): the account and name of its queue; a receiver's incarnation
    (with its `queue_id`) also holds its placement there."""

    account = UnicodeAttribute()
    name = UnicodeAttribute()
    queue_id = UnicodeAttribute(null=True)


class TopicItem(_Resource):
    """A topic (`{account}#topic`, its name)."""

    topic_id = UnicodeAttribute()


class SubscriptionItem(MetaItem):
    """A subscription (`{account}#subscription#{topic}`, its name)."""

    topic_id = UnicodeAttribute()
    create_time_ms = NumberAttribute()
    last_modify_time = NumberAttribute()
    endpoint = UnicodeAttribute()
    filter_tag = UnicodeAttribute()
    notify_strategy = UnicodeAttribute()
    notify_content_format = UnicodeAttribute()
    dlq_enabled = BooleanAttribute()
    dlq_target_queue = UnicodeAttribute()
    endpoint_given = UnicodeAttribute()


class AccountItem(MetaItem):
    """An account's settings (`{account}#account`, "meta")."""

    logging_bucket = UnicodeAttribute()
    log_store = UnicodeAttribute()
    endpoint_enabled = BooleanAttribute()
    endpoint_acl = UnicodeAttribute()


class SubscriberItem(MetaItem):
    """An account that made subscriptions (`subscribers#account`, the account)."""

    account = UnicodeAttribute()


class NonceItem(MetaItem):
    """A signature nonce's first use (`nonce#{key}`, "nonce"), removed by TTL."""

    x = Expiry()


class RateItem(MetaItem):
    """Requests counted in one second (`rate#{key}#{shard}`, the second), removed by TTL."""

    n = NumberAttribute()
    x = Expiry()


def model_of(scope: str) -> type[MetaItem]:
    """The model of the items of a scope (a catalog's, a nonce's or a counter's)."""
    if scope.startswith(NONCE_PREFIX):
        return NonceItem
    if scope.startswith(RATE_PREFIX):
        return RateItem
    account, _, kind = scope.partition("#")
    if kind == QUEUE:
        return QueueIdItem if account == QUEUE_IDS else QueueItem
    if kind == TOPIC:
        return TopicItem
    if kind.startswith("subscription#"):
        return SubscriptionItem
    if kind == ACCOUNT:
        return SubscriberItem if account == SUBSCRIBERS else AccountItem
    raise ValueError(f"no item kind for the scope {scope!r}")
