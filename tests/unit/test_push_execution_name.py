"""The retry execution's name: `{message id}-{16 hex}`, the suffix a hash of (account, topic, subscription), so that
the metrics sampler attributes each running execution to its subscription (`mnsd.monitoring.retries`)."""

from __future__ import annotations

import hashlib
import re

from mnsd.model.topics import Subscription, SubscriptionAttributes, TopicMessage
from mnsd.push.workflow import execution_name, retry_suffix, subscription_suffix, suffix_of
from mnsd.storage.ids import new_message_id

ACCOUNT = "1000000000000001"
OTHER = "1000000000000002"


def subscription(account: str = ACCOUNT, topic: str = "t", name: str = "s") -> Subscription:
    return Subscription(account, topic, name, SubscriptionAttributes("http://h.example/"), 1, 2, "tid")


def message(message_id: str, account: str = ACCOUNT, topic: str = "t") -> TopicMessage:
    return TopicMessage(account, topic, "tid", message_id, "body", "", 1449556920975)


def test_the_suffix_is_stable_sixteen_hex_digits_of_account_topic_and_subscription() -> None:
    # Pinned: a change would leave the executions running at a deployment unattributed until they end (a day at most).
    expected = "a5788b5ded746189"
    assert retry_suffix(ACCOUNT, "t", "s") == expected == hashlib.sha1(f"{ACCOUNT}\nt\ns".encode()).hexdigest()[:16]
    assert subscription_suffix(subscription()) == expected


def test_the_suffix_differs_across_accounts_topics_and_subscriptions_and_the_parts_do_not_run_together() -> None:
    suffixes = {
        retry_suffix(ACCOUNT, "t", "s"),
        retry_suffix(OTHER, "t", "s"),
        retry_suffix(ACCOUNT, "u", "s"),
        retry_suffix(ACCOUNT, "t", "u"),
        retry_suffix(ACCOUNT, "ab", "c"),
        retry_suffix(ACCOUNT, "a", "bc"),
    }
    assert len(suffixes) == 6


def test_the_name_is_the_message_id_and_the_suffix_unique_per_message_and_within_80_characters() -> None:
    longest = subscription(topic="t" * 256, name="s" * 256)
    message_id = new_message_id(2**53, slot=99)
    name = execution_name(longest, message(message_id))
    assert name == f"{message_id}-{subscription_suffix(longest)}" and len(name) <= 80
    assert re.fullmatch(r"[A-Za-z0-9_-]+", name)  # Step Functions' allowed characters
    assert suffix_of(name) == subscription_suffix(longest)
    assert execution_name(longest, message(new_message_id(2**53, slot=99))) != name
    same_name_elsewhere = subscription(account=OTHER, topic="t" * 256, name="s" * 256)
    assert execution_name(same_name_elsewhere, message(message_id, OTHER)) != name
