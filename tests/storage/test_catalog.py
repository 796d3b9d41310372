"""The catalog returns entities on every engine: queues, topics, subscriptions, account settings."""

from __future__ import annotations

import dataclasses

from mnsd.control.accounts import AccountService
from mnsd.control.catalog import AccountAttributes, Catalog
from mnsd.model.queues import Queue, QueueAttributes
from mnsd.model.topics import Subscription, SubscriptionAttributes, Topic, TopicAttributes


def test_queues(storage):
    catalog = Catalog(storage.meta)
    queue = Queue("A", "q", "qid1", QueueAttributes(delay_seconds=5, logging_enabled=True), 10, 10)
    assert catalog.create_queue(queue) is None
    assert catalog.create_queue(dataclasses.replace(queue, queue_id="qid2")) == queue
    assert catalog.get_queue("A", "q") == queue
    assert catalog.get_queue("B", "q") is None  # another account
    assert catalog.queue_name("qid1") == ("A", "q")
    changed = dataclasses.replace(queue, attributes=QueueAttributes(visibility_timeout=60), last_modify_time=20)
    assert catalog.update_queue(changed)
    assert catalog.get_queue("A", "q") == changed
    assert not catalog.update_queue(dataclasses.replace(changed, name="missing"))
    assert catalog.count_queues("A") == 1
    assert catalog.list_queues("A", "", 10, None) == ([changed], False)
    catalog.delete_queue("A", "q")
    assert catalog.get_queue("A", "q") is None


def test_the_metrics_choice_and_alarms_are_kept_and_unset_again(storage):
    catalog = Catalog(storage.meta)
    alarms = '{"OldestMessageAge":600,"Minutes":5}'
    queue = Queue("A", "q", "qid1", QueueAttributes(metrics_enabled=True, alarms=alarms), 10, 10)
    assert catalog.create_queue(queue) is None
    assert catalog.get_queue("A", "q") == queue
    unset = dataclasses.replace(queue, attributes=QueueAttributes(metrics_enabled=None), last_modify_time=20)
    assert catalog.update_queue(unset)
    assert catalog.get_queue("A", "q", fresh=True) == unset
    assert catalog.get_queue("A", "q").attributes.metrics_enabled is None
    topic = Topic("A", "t", "tid", TopicAttributes(metrics_enabled=False), 10, 10)
    assert catalog.create_topic(topic) is None
    assert catalog.get_topic("A", "t") == topic
    assert catalog.update_topic(dataclasses.replace(topic, attributes=TopicAttributes()))
    assert catalog.get_topic("A", "t").attributes.metrics_enabled is None


def test_topics_and_subscriptions(storage):
    catalog = Catalog(storage.meta)
    topic = Topic("A", "t", "tid", TopicAttributes(maximum_message_size=2048), 10, 10)
    assert catalog.create_topic(topic) is None
    assert catalog.get_topic("A", "t") == topic
    subscriptions = [
        Subscription("A", "t", f"s{i}", SubscriptionAttributes(f"http://example.com/{i}", "tag"), 1000, 1, "tid")
        for i in range(3)
    ]
    for subscription in subscriptions:
        assert catalog.create_subscription(subscription) is None
    assert catalog.create_subscription(subscriptions[0]) == subscriptions[0]
    assert catalog.list_subscriptions("A", "t", "", 2, None) == (subscriptions[:2], True)
    assert catalog.list_subscriptions("A", "t", "", 2, "s1") == (subscriptions[2:], False)
    retimed = dataclasses.replace(
        subscriptions[1],
        attributes=dataclasses.replace(subscriptions[1].attributes, notify_strategy="EXPONENTIAL_DECAY_RETRY"),
        last_modify_time=5,
    )
    assert catalog.update_subscription(retimed)
    assert catalog.get_subscription("A", "t", "s1") == retimed
    dead_lettering = dataclasses.replace(
        retimed, attributes=dataclasses.replace(retimed.attributes, dlq_enabled=True, dlq_target_queue="dlq")
    )
    assert catalog.update_subscription(dead_lettering)
    assert catalog.get_subscription("A", "t", "s1") == dead_lettering
    assert catalog.get_subscription("A", "t", "s1").attributes.dead_letter_queue == "dlq"
    catalog.delete_topic("A", "t")
    assert catalog.get_topic("A", "t") is None
    assert catalog.list_subscriptions("A", "t", "", 10, None) == ([], False)


def test_account_settings(storage):
    accounts = AccountService(Catalog(storage.meta))
    assert accounts.attributes("A") == AccountAttributes()
    accounts.set_logging_bucket("A", "bucket")
    assert accounts.attributes("A") == AccountAttributes(logging_bucket="bucket")
    assert accounts.attributes("B") == AccountAttributes()
