"""The README's example policies do what the README says of them (producer, consumer, read-only operator)."""

from __future__ import annotations

import re
from pathlib import Path

from mnsd.access.keys import AccessKey
from mnsd.model.policy import Policy
from tests.unit.access_calls import ROOT, World

README = Path(__file__).resolve().parents[2] / "README.md"
SEND = "<Message><MessageBody>m</MessageBody></Message>"


def role_policies() -> dict[str, Policy]:
    section = README.read_text().split("## Access control", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"```json\n(.*?)```\n\*([a-z -]+)\*", section, flags=re.S)
    return {role: Policy.parse(document) for document, role in found}


def world_with_queues() -> World:
    world = World()
    for queue in ("orders", "payments-eu"):
        assert world.call(ROOT, "PUT", f"/queues/{queue}").status == 201
        assert world.call(ROOT, "POST", f"/queues/{queue}/messages", SEND).status == 201
    return world


def statuses(world: World, key, calls: list[tuple[str, str, str]]) -> list[int]:
    return [world.call(key, method, target, body).status for method, target, body in calls]


def with_role(key_id: str, role: str) -> tuple[World, AccessKey]:
    """The queues' world, and a key `key_id` whose policy is the README's `role`."""
    world = world_with_queues()
    return world, world.key(key_id, role_policies()[role])


def assert_refused(world: World, key: AccessKey, calls: list[tuple[str, str, str]]) -> None:
    assert statuses(world, key, calls) == [403] * len(calls)


def test_the_readme_has_the_three_roles():
    assert set(role_policies()) == {"producer", "consumer", "read-only operator"}


def test_a_producer_sends_to_its_queue_and_does_nothing_else():
    world, key = with_role("PRODUCER", "producer")
    assert statuses(world, key, [("POST", "/queues/orders/messages", SEND)]) == [201]
    refused = [
        ("POST", "/queues/payments-eu/messages", SEND),
        ("GET", "/queues/orders/messages?waitseconds=0", ""),
        ("GET", "/queues/orders", ""),
        ("DELETE", "/queues/orders", ""),
        ("GET", "/queues", ""),
    ]
    assert_refused(world, key, refused)


def test_a_consumer_receives_acknowledges_and_reads_counts_of_its_queue_only():
    world, key = with_role("CONSUMER", "consumer")
    received = world.call(key, "GET", "/queues/orders/messages?waitseconds=0")
    assert received.status == 200
    handle = received.value("ReceiptHandle")
    assert world.call(key, "PUT", f"/queues/orders/messages?ReceiptHandle={handle}&VisibilityTimeout=30").status == 200
    assert world.call(key, "GET", "/queues/orders").status == 200
    refused = [
        ("POST", "/queues/orders/messages", SEND),
        ("GET", "/queues/payments-eu/messages?waitseconds=0", ""),
        ("PUT", "/queues/orders?metaoverride=true", "<Queue><VisibilityTimeout>60</VisibilityTimeout></Queue>"),
    ]
    assert_refused(world, key, refused)


def test_a_read_only_operator_reads_everything_peeks_but_not_at_payments_and_changes_nothing():
    world, key = with_role("OPERATOR", "read-only operator")
    allowed = [
        ("GET", "/queues", ""),
        ("GET", "/queues/orders", ""),
        ("GET", "/queues/payments-eu", ""),
        ("GET", "/queues/orders/messages?peekonly=true", ""),
        ("GET", "/topics", ""),
        ("GET", "/topics/t/subscriptions/s", ""),
    ]
    assert statuses(world, key, allowed) == [200] * len(allowed)
    refused = [
        ("GET", "/queues/payments-eu/messages?peekonly=true", ""),
        ("GET", "/queues/orders/messages?waitseconds=0", ""),
        ("POST", "/queues/orders/messages", SEND),
        ("DELETE", "/queues/orders", ""),
        ("PUT", "/topics/new", ""),
    ]
    assert_refused(world, key, refused)
