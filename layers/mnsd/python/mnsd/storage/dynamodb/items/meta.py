"""The meta table's items: the catalog's records (queues, their id map, topics, subscriptions, account settings, the
accounts with subscriptions), signature nonces and request counters.

Every item is keyed `pk` (the record's scope, `{account}#{kind}`, see `mnsd.control.catalog`; `nonce#{key}`;
`rate#{key}#{shard}`) and `sk` (the resource's name; "nonce"; the second). A record's fields are its attributes,
under the same names (the entities' dataclass fields, `wire.fields_of`) (numbers N, text S, flags BOOL, a None NULL); a queue's record also holds the engine's
placement of it (`placement.FIELDS`) and its receivers (a list of maps, each a `Receiver`'s fields).
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import (
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)

from mnsd.control.catalog import ACCOUNT, QUEUE, QUEUE_IDS, SUBSCRIBERS, TOPIC, AccountAttributes
from mnsd.model.queues import QueueAttributes, Receiver
from mnsd.model.topics import SubscriptionAttributes, TopicAttributes
from mnsd.storage.dynamodb.items.placement import PlacedItem
from mnsd.storage.dynamodb.items.wire import Expiry, KeyedItem, fields_of, model

NONCE_PREFIX = "nonce#"
RATE_PREFIX = "rate#"


class MetaItem(KeyedItem):
    """The meta table's items: keyed by scope and name."""


class _Placement(MetaItem, PlacedItem):
    """The engine's placement of a queue incarnation's messages (`items.placement`)."""


# A queue's receivers (`Receiver`s): what the check of its items reads each entry of its list with (the list itself is
# written by type, so a None field stays NULL as it always was).
ReceiverMap: type[MapAttribute[str, Any]] = type(
    "ReceiverMap", (MapAttribute,), {"__module__": __name__, **fields_of(Receiver)}
)
_INCARNATION = ("create_time", "last_modify_time")

QueueItem: type[MetaItem] = model(
    "QueueItem",
    _Placement,
    "A queue (`{account}#queue`, its name): its incarnation, times, attributes, receivers and placement.",
    queue_id=UnicodeAttribute(),
    **{name: NumberAttribute() for name in _INCARNATION},
    **fields_of(QueueAttributes),
    receivers=ListAttribute(null=True),  # of `ReceiverMap`s (see there)
    receivers_version=NumberAttribute(null=True),
)
QueueIdItem: type[MetaItem] = model(
    "QueueIdItem",
    _Placement,
    "A queue id's entry (`queue-ids#queue`, the id): the account and name of its queue; a receiver's incarnation (with "
    "its `queue_id`) also holds its placement there.",
    account=UnicodeAttribute(),
    name=UnicodeAttribute(),
    queue_id=UnicodeAttribute(null=True),
)
TopicItem: type[MetaItem] = model(
    "TopicItem",
    MetaItem,
    "A topic (`{account}#topic`, its name).",
    topic_id=UnicodeAttribute(),
    **{name: NumberAttribute() for name in _INCARNATION},
    **fields_of(TopicAttributes),
)
SubscriptionItem: type[MetaItem] = model(
    "SubscriptionItem",
    MetaItem,
    "A subscription (`{account}#subscription#{topic}`, its name).",
    topic_id=UnicodeAttribute(),
    create_time_ms=NumberAttribute(),
    last_modify_time=NumberAttribute(),
    **fields_of(SubscriptionAttributes),
)
AccountItem: type[MetaItem] = model(
    "AccountItem", MetaItem, 'An account\'s settings (`{account}#account`, "meta").', **fields_of(AccountAttributes)
)
SubscriberItem: type[MetaItem] = model(
    "SubscriberItem", MetaItem, "An account that made subscriptions (`subscribers#account`, the account).",
    account=UnicodeAttribute(),
)  # fmt: skip


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
