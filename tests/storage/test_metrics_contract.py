"""The storage contract for what the metrics read (`mnsd.metrics`): a queue's backlog (its counts, and the enqueue time
of its oldest message that is neither delayed, expired nor kept for rewind), and the accounts whose queues they list."""

from __future__ import annotations

from mnsd.control import catalog as catalog_module
from mnsd.control.catalog import Catalog
from mnsd.model.messages import Message
from mnsd.model.queues import Backlog, Queue, QueueAttributes, QueueCounts
from mnsd.model.topics import Subscription, SubscriptionAttributes
from mnsd.storage import Storage
from tests.storage.engines import claim_one
from tests.support.stored import NOW, sent


def claim(storage: Storage, message: Message, now: int, visible_at: int) -> Message:
    claimed = claim_one(storage.messages, message, now, visible_at)
    assert claimed is not None
    return claimed


def test_an_empty_queue_has_no_oldest_message(storage):
    assert storage.messages.backlog("q1", NOW) == Backlog(QueueCounts(0, 0, 0), None)
    assert Backlog(QueueCounts()).oldest_age_seconds(NOW) == 0


def test_the_oldest_is_the_earliest_enqueued_active_or_inactive_message(storage):
    delayed = sent(NOW - 9000, delay_ms=60_000)  # the earliest, but delayed: not counted as the oldest
    in_flight = sent(NOW - 7000)
    active = sent(NOW - 4000)
    storage.messages.put([delayed, in_flight, active])
    claim(storage, in_flight, NOW - 6000, NOW + 30_000)
    backlog = storage.messages.backlog("q1", NOW)
    assert backlog == Backlog(QueueCounts(1, 1, 1), NOW - 7000)
    assert backlog.oldest_age_seconds(NOW) == 7.0
    assert backlog.counts == storage.messages.counts("q1", NOW)


def test_deleting_the_oldest_makes_the_next_one_the_oldest(storage):
    first, second = sent(NOW - 5000), sent(NOW - 2000)
    storage.messages.put([first, second])
    held = claim(storage, first, NOW - 1000, NOW + 30_000)
    assert storage.messages.backlog("q1", NOW).oldest_enqueue_time == NOW - 5000
    assert storage.messages.delete_many([(held.ref, held.version)], NOW)[0]
    assert storage.messages.backlog("q1", NOW) == Backlog(QueueCounts(1, 0, 0), NOW - 2000)


def test_a_delayed_message_is_the_oldest_once_receivable(storage):
    early, late = sent(NOW - 5000, delay_ms=10_000), sent(NOW - 1000)
    storage.messages.put([early, late])
    assert storage.messages.backlog("q1", NOW).oldest_enqueue_time == NOW - 1000
    assert storage.messages.backlog("q1", NOW + 5000) == Backlog(QueueCounts(2, 0, 0), NOW - 5000)


def test_expired_and_kept_messages_are_not_the_oldest(storage):
    expired = sent(NOW - 10_000, retention=5)  # its retention ended 5 s ago
    kept = sent(NOW - 8000)
    live = sent(NOW - 3000)
    storage.messages.put([expired, kept, live])
    held = claim(storage, kept, NOW - 7000, NOW + 30_000)
    assert storage.messages.delete_keeping([(held.ref, held.version)], NOW - 6000) == [True]
    assert storage.messages.backlog("q1", NOW) == Backlog(QueueCounts(1, 0, 0), NOW - 3000)


def test_a_queue_sees_only_its_own_oldest(storage):
    storage.messages.put([sent(NOW - 9000, queue_id="q2"), sent(NOW - 1000)])
    assert storage.messages.backlog("q1", NOW).oldest_enqueue_time == NOW - 1000
    assert storage.messages.backlog("q2", NOW).oldest_enqueue_time == NOW - 9000


def test_a_fifo_queue_has_its_oldest_across_groups(storage):
    def fifo_message(group: str, enqueued: int) -> Message:
        message = sent(enqueued)
        message.message_group_id, message.fifo = group, True
        message.position = storage.fifo_messages.sequence("q1", group, 1, enqueued)
        return message

    head_a, next_a, head_b = fifo_message("a", NOW - 6000), fifo_message("a", NOW - 2000), fifo_message("b", NOW - 4000)
    storage.fifo_messages.put([head_a, next_a, head_b])
    assert storage.fifo_messages.backlog("q1", NOW) == Backlog(QueueCounts(3, 0, 0), NOW - 6000)
    taken = claim_one(storage.fifo_messages, head_a, NOW, NOW + 30_000)
    assert taken is not None
    assert storage.fifo_messages.delete_many([(taken.ref, taken.version)], NOW)[0]
    assert storage.fifo_messages.backlog("q1", NOW) == Backlog(QueueCounts(2, 0, 0), NOW - 4000)


def test_the_accounts_with_subscriptions_are_found_across_pages(storage, monkeypatch):
    """Whose subscriptions' pending retries the metrics show: every account that made or changed a subscription,
    queues or not, read page by page."""
    monkeypatch.setattr(catalog_module, "LIST_PAGE", 2)
    catalog = Catalog(storage.meta)
    assert catalog.accounts_with_subscriptions() == []
    for n, account in enumerate(["C", "A", "C", "B"]):
        made = Subscription(account, "t", f"s{n}", SubscriptionAttributes("http://example.com/"), 10, 10, "tid")
        assert catalog.create_subscription(made) is None
    assert catalog.create_subscription(made) is not None  # an existing one: nothing new to note
    assert catalog.accounts_with_subscriptions() == ["A", "B", "C"]
    assert catalog.accounts_with_queues() == []


def test_the_accounts_with_queues_are_found_across_pages(storage, monkeypatch):
    """Whose queues the metrics list: every account that made a queue or a receiver, read page by page."""
    monkeypatch.setattr(catalog_module, "LIST_PAGE", 2)
    catalog = Catalog(storage.meta)
    assert catalog.accounts_with_queues() == []
    for n, account in enumerate(["B", "A", "B", "C", "A"]):
        catalog.create_queue(Queue(account, f"q{n}", f"qid{n}", QueueAttributes(), 10, 10))
    catalog.add_receiver_id("D", "q.r", "qid-receiver")
    catalog.delete_queue("C", "q3")  # (its account is still listed: its queues are read, none found)
    assert catalog.accounts_with_queues() == ["A", "B", "C", "D"]
