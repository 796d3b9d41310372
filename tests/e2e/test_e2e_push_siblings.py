"""Subscriptions of one topic are independent: an endpoint that hangs delays no sibling's pushes.

Before each subscription had its own lane, a topic ran at most 4 fan-outs at once and each waited for
every subscription's first attempt: with one hanging endpoint and 2 publishes a second, a healthy
sibling's delay grew by about 3 s a message (an unbounded backlog)."""

from __future__ import annotations

import time
import uuid

import pytest
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from tests.support.push_receiver import assert_not_held_up, delivery_delays

PUBLISHES = 30
INTERVAL = 0.5  # 2 publishes a second


@pytest.mark.slow
def test_a_hanging_subscription_does_not_delay_its_healthy_sibling(account_a, push_endpoint, hanging_endpoint):
    topic = account_a.get_topic("siblings-" + uuid.uuid4().hex[:12])
    topic.create(TopicMeta())
    try:
        topic.get_subscription("hanging").subscribe(SubscriptionMeta(hanging_endpoint.url("/h"), "", "SIMPLIFIED"))
        topic.get_subscription("healthy").subscribe(SubscriptionMeta(push_endpoint.url("/h"), "", "SIMPLIFIED"))
        published_at: dict[str, float] = {}
        start = time.monotonic()
        for i in range(PUBLISHES):
            time.sleep(max(0.0, start + i * INTERVAL - time.monotonic()))
            at = time.monotonic()
            published_at[topic.publish_message(TopicMessage(f"m{i}")).message_id] = at
        hits = push_endpoint.wait_for(PUBLISHES, timeout=5)
        delays = delivery_delays(published_at, hits, lambda hit: hit.headers["x-mns-message-id"])
        assert len(delays) == PUBLISHES
        assert_not_held_up(delays)
        assert len(hanging_endpoint.hits) >= PUBLISHES // 2  # the hanging one was pushed to meanwhile
    finally:
        topic.delete()
