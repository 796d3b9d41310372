"""The control plane as entities: queues, topics, subscriptions and account settings over a `MetaTable`.

Records are kept by scope, an account's records of one kind (`{account}#{kind}`: its queues, its topics, a topic's
subscriptions, its settings), with the resource name as key, so a listing with a prefix is one range read and an
account only ever reaches its own records. A pseudo-account's scope maps queue ids to (account, name) for the
operation log. A storage engine may keep fields of its own in a queue's record (the DynamoDB engine its placement of
the queue's messages); the catalog keeps them as they are.

A queue's receivers are kept on its record (`receivers`, changed only as a whole, conditioned on
`receivers_version`), so a send finds them with the queue.

Queue records are cached per container (per `Catalog`) for `cache_seconds`: a queue created, changed or
deleted by another container is seen here at most that late, while this container's own writes update the
cache at once (a single process is always coherent). A re-created queue is a new incarnation (`queue_id`):
a container that still holds the old record writes to the old incarnation, never into the new one.
Lookups that find nothing are not cached (a queue just created elsewhere is seen at once).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from mnsd.control.registry import Records
from mnsd.ground.clock import Clock, SystemClock
from mnsd.model.ports import MetaTable, Record
from mnsd.model.queues import Queue, QueueAttributes, Receiver
from mnsd.model.topics import Subscription, SubscriptionAttributes, Topic, TopicAttributes

QUEUE = "queue"
TOPIC = "topic"
ACCOUNT = "account"
ACCOUNT_RECORD = "meta"
QUEUE_IDS = "queue-ids"  # the pseudo-account whose queue scope maps queue ids to (account, name)
SUBSCRIBERS = "subscribers"  # the pseudo-account whose account scope lists the accounts that made subscriptions
LIST_PAGE = 1000


@dataclass(frozen=True)
class AccountAttributes:
    logging_bucket: str = ""
    log_store: str = ""  # the OpenAPI's LogStoreName beside the bucket (its ProjectName)
    # The account's public endpoint (`mnsd.control.endpoint_acl`): whether it serves, and its source-address allow-list (JSON).
    endpoint_enabled: bool = True
    endpoint_acl: str = ""


Named = TypeVar("Named", Queue, Topic, Subscription)


def _every_page(read: Callable[[str | None], tuple[list[Named], bool]]) -> Iterator[Named]:
    """Every entity a listing gives, page after page (`read(start_after)`: a page and whether more follow)."""
    start_after = None
    while True:
        found, more = read(start_after)
        yield from found
        if not more or not found:
            return
        start_after = found[-1].name


def _scope(account_id: str, kind: str) -> str:
    return f"{account_id}#{kind}"


def queue_scope(account_id: str) -> str:
    """The scope of an account's queue records (the storage engine keeps its own fields in them too)."""
    return _scope(account_id, QUEUE)


def _subscriptions(topic_name: str) -> str:
    return f"subscription#{topic_name}"


def _fields(cls: type, record: Record) -> Record:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in record.items() if k in names}


def _record(entity: Queue | Topic | Subscription, *names: str) -> Record:
    """An entity's record: its fields `names` beside its attributes'."""
    return {**{name: getattr(entity, name) for name in names}, **dataclasses.asdict(entity.attributes)}


def _queue_record(queue: Queue) -> Record:
    return _record(queue, "queue_id", "create_time", "last_modify_time")


def _queue(account_id: str, name: str, record: Record) -> Queue:
    attributes = QueueAttributes(**_fields(QueueAttributes, record))
    return Queue(
        account_id,
        name,
        record["queue_id"],
        attributes,
        record["create_time"],
        record["last_modify_time"],
        tuple(_receiver(entry) for entry in record.get("receivers") or ()),
        int(record.get("receivers_version") or 0),
    )


# A receiver's numbers (an engine may give those nested in a record as another number type).
_RECEIVER_NUMBERS = (
    "create_time_ms",
    "start_time",
    "last_modify_time",
    "visibility_timeout",
    "polling_wait_seconds",
    "dlq_max_receive_count",
)


def _receiver(record: Record) -> Receiver:
    fields = _fields(Receiver, record)
    for name in _RECEIVER_NUMBERS:
        if fields.get(name) is not None:
            fields[name] = int(fields[name])
    return Receiver(**fields)


def _topic_record(topic: Topic) -> Record:
    return _record(topic, "topic_id", "create_time", "last_modify_time")


def _topic(account_id: str, name: str, record: Record) -> Topic:
    attributes = TopicAttributes(**_fields(TopicAttributes, record))
    return Topic(account_id, name, record["topic_id"], attributes, record["create_time"], record["last_modify_time"])


def _subscription_record(subscription: Subscription) -> Record:
    return _record(subscription, "topic_id", "create_time_ms", "last_modify_time")


def _subscription(account_id: str, topic_name: str, name: str, record: Record) -> Subscription:
    attributes = SubscriptionAttributes(**_fields(SubscriptionAttributes, record))
    return Subscription(
        account_id,
        topic_name,
        name,
        attributes,
        record["create_time_ms"],
        record["last_modify_time"],
        record["topic_id"],
    )


class Catalog:
    def __init__(self, table: MetaTable, clock: Clock | None = None, cache_seconds: float = 0.0) -> None:
        self.table = table
        self.clock = clock or SystemClock()
        self.cache_seconds = cache_seconds
        self._lock = threading.Lock()
        self._queues: dict[tuple[str, str], tuple[Queue, float]] = {}  # (account, name) -> (queue, read at)
        # The records as the control-plane path shared by queues and topics reads them (`mnsd.control.registry`).
        self.queues = Records(
            self.get_queue, self.create_queue, self.update_queue, self.count_queues, self.delete_queue, self.list_queues
        )
        self.topics = Records(
            self.get_topic, self.create_topic, self.update_topic, self.count_topics, self.delete_topic, self.list_topics
        )

    # --- queues -------------------------------------------------------------------------------

    def _remember(self, queue: Queue) -> None:
        if self.cache_seconds > 0:
            with self._lock:
                self._queues[(queue.account_id, queue.name)] = (queue, self.clock.now())

    def _forget(self, account_id: str, name: str) -> None:
        with self._lock:
            self._queues.pop((account_id, name), None)

    def create_queue(self, queue: Queue) -> Queue | None:
        """Store a new queue; if the name is taken, the queue that holds it instead."""
        existing = self.table.create(_scope(queue.account_id, QUEUE), queue.name, _queue_record(queue))
        if existing is not None:
            found = _queue(queue.account_id, queue.name, existing)
            self._remember(found)
            return found
        self.table.put(_scope(QUEUE_IDS, QUEUE), queue.queue_id, {"account": queue.account_id, "name": queue.name})
        self._remember(queue)
        return None

    def get_queue(self, account_id: str, name: str, fresh: bool = False) -> Queue | None:
        """The queue record, as read at most `cache_seconds` ago (`fresh`: read now)."""
        with self._lock:
            cached = None if fresh else self._queues.get((account_id, name))
        if cached is not None and self.clock.now() - cached[1] < self.cache_seconds:
            return cached[0]
        record = self.table.get(_scope(account_id, QUEUE), name)
        if record is None:
            self._forget(account_id, name)
            return None
        queue = _queue(account_id, name, record)
        self._remember(queue)
        return queue

    def update_queue(self, queue: Queue) -> bool:
        """Write a queue's attributes and modify time; False if it no longer exists."""
        changes = {**dataclasses.asdict(queue.attributes), "last_modify_time": queue.last_modify_time}
        updated = self.table.update(
            _scope(queue.account_id, QUEUE), queue.name, changes, expected={"queue_id": queue.queue_id}
        )
        self._forget(queue.account_id, queue.name)  # re-read: another container may have changed it too
        return updated

    def delete_queue(self, account_id: str, name: str) -> None:
        self.table.delete(_scope(account_id, QUEUE), name)
        self._forget(account_id, name)

    def count_queues(self, account_id: str) -> int:
        return self.table.count(_scope(account_id, QUEUE))

    def list_queues(
        self, account_id: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[Queue], bool]:
        found, more = self.table.list(_scope(account_id, QUEUE), prefix, limit, start_after)
        return [_queue(account_id, name, record) for name, record in found], more

    # --- receivers (`mnsd.queues.receivers`): on their queue's record ----------------------------

    def set_receivers(self, queue: Queue, receivers: tuple[Receiver, ...]) -> bool:
        """Write a queue's receivers; False if it no longer exists, or if its receivers changed since `queue` was
        read (`receivers_version`)."""
        changes = {
            "receivers": [dataclasses.asdict(receiver) for receiver in receivers],
            "receivers_version": queue.receivers_version + 1,
        }
        expected = {"queue_id": queue.queue_id, "receivers_version": queue.receivers_version or None}
        updated = self.table.update(_scope(queue.account_id, QUEUE), queue.name, changes, expected)
        self._forget(queue.account_id, queue.name)  # re-read: another container may have changed it too
        return updated

    def add_receiver_id(self, account_id: str, address: str, queue_id: str) -> None:
        """Map a new receiver's incarnation to its account and address (`queue_name`). The entry is made as a record
        holding its `queue_id`: an engine may keep its own fields of the incarnation there, as in a queue's record."""
        self.table.create(
            _scope(QUEUE_IDS, QUEUE), queue_id, {"account": account_id, "name": address, "queue_id": queue_id}
        )

    def accounts_with_queues(self) -> list[str]:
        """Every account that ever made a queue or receiver (from the queue-id map, which keeps deleted ones too), in
        order: the accounts whose queues the metrics show (one read of the map per 1,000 incarnations)."""
        return sorted({str(record["account"]) for record in self._every(_scope(QUEUE_IDS, QUEUE))})

    def _every(self, scope: str) -> Iterator[Record]:
        """Every record of a scope, read a page (`LIST_PAGE`) at a time."""
        start_after = None
        while True:
            found, more = self.table.list(scope, "", LIST_PAGE, start_after)
            yield from (record for _, record in found)
            if not more or not found:
                return
            start_after = found[-1][0]

    def queue_name(self, queue_id: str) -> tuple[str, str] | None:
        """(account, name) of the queue an id was made for (the queue may have been deleted since)."""
        record = self.table.get(_scope(QUEUE_IDS, QUEUE), queue_id)
        return None if record is None else (record["account"], record["name"])

    # --- topics -------------------------------------------------------------------------------

    def create_topic(self, topic: Topic) -> Topic | None:
        existing = self.table.create(_scope(topic.account_id, TOPIC), topic.name, _topic_record(topic))
        return None if existing is None else _topic(topic.account_id, topic.name, existing)

    def get_topic(self, account_id: str, name: str) -> Topic | None:
        record = self.table.get(_scope(account_id, TOPIC), name)
        return None if record is None else _topic(account_id, name, record)

    def update_topic(self, topic: Topic) -> bool:
        changes = {**dataclasses.asdict(topic.attributes), "last_modify_time": topic.last_modify_time}
        return self.table.update(_scope(topic.account_id, TOPIC), topic.name, changes)

    def delete_topic(self, account_id: str, name: str) -> None:
        """Delete a topic and its subscriptions."""
        self.table.delete(_scope(account_id, TOPIC), name)
        scope = _scope(account_id, _subscriptions(name))
        while True:
            found, _ = self.table.list(scope, "", LIST_PAGE, None)
            if not found:
                return
            for subscription_name, _record in found:
                self.table.delete(scope, subscription_name)

    def count_topics(self, account_id: str) -> int:
        return self.table.count(_scope(account_id, TOPIC))

    def every_queue(self, account_id: str) -> Iterator[Queue]:
        """Every queue of an account, in name order, a page (`LIST_PAGE`) read at a time."""
        return _every_page(lambda after: self.list_queues(account_id, "", LIST_PAGE, after))

    def every_topic(self, account_id: str) -> Iterator[Topic]:
        """Every topic of an account, in name order, a page read at a time."""
        return _every_page(lambda after: self.list_topics(account_id, "", LIST_PAGE, after))

    def every_subscription(self, account_id: str, topic_name: str) -> Iterator[Subscription]:
        """Every subscription of a topic, in name order, a page read at a time."""
        return _every_page(lambda after: self.list_subscriptions(account_id, topic_name, "", LIST_PAGE, after))

    def list_topics(
        self, account_id: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[Topic], bool]:
        found, more = self.table.list(_scope(account_id, TOPIC), prefix, limit, start_after)
        return [_topic(account_id, name, record) for name, record in found], more

    # --- subscriptions ------------------------------------------------------------------------

    def create_subscription(self, subscription: Subscription) -> Subscription | None:
        scope = _scope(subscription.account_id, _subscriptions(subscription.topic_name))
        existing = self.table.create(scope, subscription.name, _subscription_record(subscription))
        if existing is None:
            self._note_subscriber(subscription.account_id)
            return None
        return _subscription(subscription.account_id, subscription.topic_name, subscription.name, existing)

    def get_subscription(self, account_id: str, topic_name: str, name: str) -> Subscription | None:
        record = self.table.get(_scope(account_id, _subscriptions(topic_name)), name)
        return None if record is None else _subscription(account_id, topic_name, name, record)

    def update_subscription(self, subscription: Subscription) -> bool:
        attributes = subscription.attributes
        changes = {
            "notify_strategy": attributes.notify_strategy,
            "dlq_enabled": attributes.dlq_enabled,
            "dlq_target_queue": attributes.dlq_target_queue,
            "last_modify_time": subscription.last_modify_time,
        }
        scope = _scope(subscription.account_id, _subscriptions(subscription.topic_name))
        updated = self.table.update(scope, subscription.name, changes)
        if updated:
            self._note_subscriber(subscription.account_id)  # (a subscription made before the list was kept)
        return updated

    def _note_subscriber(self, account_id: str) -> None:
        """The account is one whose subscriptions may have pushes to retry (a write per Subscribe or
        SetSubscriptionAttributes, never per publish)."""
        self.table.put(_scope(SUBSCRIBERS, ACCOUNT), account_id, {"account": account_id})

    def accounts_with_subscriptions(self) -> list[str]:
        """Every account that made (or changed) a subscription, in order, whether or not it has queues: the accounts
        whose subscriptions' pending retries the metrics show (one read per 1,000 accounts)."""
        return [str(record["account"]) for record in self._every(_scope(SUBSCRIBERS, ACCOUNT))]

    def delete_subscription(self, account_id: str, topic_name: str, name: str) -> None:
        self.table.delete(_scope(account_id, _subscriptions(topic_name)), name)

    def list_subscriptions(
        self, account_id: str, topic_name: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[Subscription], bool]:
        found, more = self.table.list(_scope(account_id, _subscriptions(topic_name)), prefix, limit, start_after)
        return [_subscription(account_id, topic_name, name, record) for name, record in found], more

    # --- account settings ---------------------------------------------------------------------

    def account_attributes(self, account_id: str) -> AccountAttributes:
        record = self.table.get(_scope(account_id, ACCOUNT), ACCOUNT_RECORD) or {}
        return AccountAttributes(**_fields(AccountAttributes, record))

    def set_account_attributes(self, account_id: str, attributes: AccountAttributes) -> None:
        self.table.put(_scope(account_id, ACCOUNT), ACCOUNT_RECORD, dataclasses.asdict(attributes))
