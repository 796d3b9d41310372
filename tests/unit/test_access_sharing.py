"""Sharing across accounts: a queue's or topic's resource policy grants another account some actions; the
owner is named by the endpoint's host. Without a grant, exactly today's refusal."""

from __future__ import annotations

import json

import pytest

from tests.unit.access_calls import ACCOUNT, OTHER, OTHER_ROOT, ROOT, World, policy, resource

OWNER_HOST = f"{ACCOUNT}.mns.cn-hangzhou.aliyuncs.com"
TODAYS_REFUSAL = "The OwnerId that your Access Key Id associated to is forbidden for this operation."
SEND = "<Message><MessageBody>shared</MessageBody></Message>"


def grant(world: World, actions: list[str], effect: str = "Allow", principal: object = None, kind: str = "queues"):
    document = {
        "Version": "1",
        "Statement": [
            {
                "Effect": effect,
                "Principal": principal or {"RAM": [f"acs:ram::{OTHER}:root"]},
                "Action": actions,
                "Resource": [resource(f"/{kind}/{'q' if kind == 'queues' else 't'}*")],
            }
        ],
    }
    root = "Queue" if kind == "queues" else "Topic"
    name = "q" if kind == "queues" else "t"
    body = f"<{root}><Policy>{_escaped(json.dumps(document))}</Policy></{root}>"
    answer = world.call(ROOT, "PUT", f"/{kind}/{name}?metaoverride=true", body)
    assert answer.status == 204, answer.body


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_without_a_grant_another_account_gets_todays_refusal_whether_the_queue_exists_or_not():
    world = World()
    for target in ("/queues/q/messages", "/queues/missing/messages"):
        answer = world.call(OTHER_ROOT, "POST", target, SEND, host=OWNER_HOST)
        assert (answer.status, answer.code, answer.message) == (403, "AccessDenied", TODAYS_REFUSAL)


def test_a_grant_lets_the_other_account_do_exactly_the_granted_actions():
    world = World()
    grant(world, ["mns:SendMessage", "mns:*ReceiveMessage", "mns:DeleteMessage"])

    sent = world.call(OTHER_ROOT, "POST", "/queues/q/messages", SEND, host=OWNER_HOST)
    assert sent.status == 201
    received = world.call(OTHER_ROOT, "GET", "/queues/q/messages?numOfMessages=16&waitseconds=0", host=OWNER_HOST)
    assert received.status == 200 and b"shared" in received.body

    for method, target in (
        ("GET", "/queues/q"),  # not granted: the queue's attributes and counts
        ("DELETE", "/queues/q"),
        ("GET", "/queues/q/messages?peekonly=true"),
        ("GET", "/queues"),  # another account's list: never
        ("GET", "/topics"),
    ):
        answer = world.call(OTHER_ROOT, method, target, host=OWNER_HOST)
        assert (answer.status, answer.code, answer.message) == (403, "AccessDenied", TODAYS_REFUSAL), target
    # the owner's queue is still there, and the other account's own world has no queue at all
    assert world.call(ROOT, "GET", "/queues/q").status == 200
    assert world.call(OTHER_ROOT, "GET", "/queues").value("Queue") is None


def test_the_grant_is_written_in_the_other_accounts_own_calls_only():
    """A grant to another account does not open the queue to a third one."""
    world = World()
    grant(world, ["mns:SendMessage"])
    third = world.key("THIRD", None, account="3000000000000003")
    answer = world.call(third, "POST", "/queues/q/messages", SEND, host=OWNER_HOST)
    assert (answer.status, answer.code) == (403, "AccessDenied")


def test_revoking_the_grant_refuses_again():
    world = World()
    grant(world, ["mns:SendMessage"])
    assert world.call(OTHER_ROOT, "POST", "/queues/q/messages", SEND, host=OWNER_HOST).status == 201
    assert world.call(ROOT, "PUT", "/queues/q?metaoverride=true", "<Queue><Policy></Policy></Queue>").status == 204
    answer = world.call(OTHER_ROOT, "POST", "/queues/q/messages", SEND, host=OWNER_HOST)
    assert (answer.status, answer.code, answer.message) == (403, "AccessDenied", TODAYS_REFUSAL)


def test_an_explicit_deny_in_the_resource_policy_wins():
    world = World()
    document = {
        "Version": "1",
        "Statement": [
            {"Effect": "Allow", "Principal": [OTHER], "Action": ["mns:*"], "Resource": [resource("/queues/q*")]},
            {"Effect": "Deny", "Principal": [OTHER], "Action": ["mns:SendMessage"], "Resource": ["*"]},
        ],
    }
    body = f"<Queue><Policy>{_escaped(json.dumps(document))}</Policy></Queue>"
    assert world.call(ROOT, "PUT", "/queues/q?metaoverride=true", body).status == 204
    assert world.call(OTHER_ROOT, "GET", "/queues/q", host=OWNER_HOST).status == 200
    answer = world.call(OTHER_ROOT, "POST", "/queues/q/messages", SEND, host=OWNER_HOST)
    assert (answer.status, answer.code) == (403, "AccessDenied")


def test_the_grantees_own_key_policy_must_allow_it_too():
    world = World()
    grant(world, ["mns:SendMessage"])
    own_only = world.key("OWNONLY", policy(("Allow", ["mns:*"], [f"acs:mns:*:{OTHER}:*"])), account=OTHER)
    answer = world.call(own_only, "POST", "/queues/q/messages", SEND, host=OWNER_HOST)
    assert (answer.status, answer.code) == (403, "AccessDenied")
    both = world.key(
        "BOTH", policy(("Allow", ["mns:SendMessage"], [f"acs:mns:*:{ACCOUNT}:/queues/q/*"])), account=OTHER
    )
    assert world.call(both, "POST", "/queues/q/messages", SEND, host=OWNER_HOST).status == 201


def test_a_topic_can_be_shared_for_publishing():
    world = World()
    grant(world, ["mns:PublishMessage"], kind="topics")
    assert world.call(OTHER_ROOT, "POST", "/topics/t/messages", SEND, host=OWNER_HOST).status == 201
    answer = world.call(OTHER_ROOT, "GET", "/topics/t", host=OWNER_HOST)
    assert (answer.status, answer.code) == (403, "AccessDenied")


def test_the_policy_is_returned_to_the_owner_and_checked_when_set():
    world = World()
    grant(world, ["mns:SendMessage"])
    attributes = world.call(ROOT, "GET", "/queues/q")
    assert json.loads(attributes.value("Policy") or "")["Statement"][0]["Action"] == ["mns:SendMessage"]

    bad = '{"Version":"1","Statement":[{"Effect":"Allow","Action":"mns:*","Resource":"*"}]}'
    answer = world.call(ROOT, "PUT", "/queues/q?metaoverride=true", f"<Queue><Policy>{bad}</Policy></Queue>")
    assert (answer.status, answer.code) == (400, "InvalidArgument")
    assert "Principal is required" in answer.message


@pytest.mark.parametrize(
    "host",
    [
        f"{ACCOUNT}.mns.cn-hangzhou.aliyuncs.com",
        f"{ACCOUNT}.queues.example.com",
        f"{ACCOUNT}.mns.localhost:8080",
        "127.0.0.1:8080",
        "127.0.0.1",
        "[::1]:8080",
        "mns.example.com",
    ],
)
def test_a_key_reaches_its_own_account_by_its_host_or_any_host_that_names_none(host):
    world = World()
    assert world.call(ROOT, "GET", "/queues/q", host=host).status == 200


@pytest.mark.parametrize("host", [f"{ACCOUNT}.queues.example.com", f"{ACCOUNT}.mns.localhost:8080"])
def test_any_host_whose_first_name_is_an_account_id_names_that_account(host):
    world = World()
    answer = world.call(OTHER_ROOT, "GET", "/queues/q", host=host)
    assert (answer.status, answer.code, answer.message) == (403, "AccessDenied", TODAYS_REFUSAL)


def test_a_shared_topics_policy_is_read_once_per_cache_period(monkeypatch):
    world = World()
    grant(world, ["mns:PublishMessage"], kind="topics")
    table = world.services.catalog.table
    reads = []
    get = table.get
    monkeypatch.setattr(
        table,
        "get",
        lambda scope, name: (reads.append(name) if scope.endswith("#topic") else None) or get(scope, name),
    )
    for _ in range(5):
        assert world.call(OTHER_ROOT, "POST", "/topics/t/messages", SEND, host=OWNER_HOST).status == 201
    # each publish reads its topic once; the policy is read once for the five
    assert len(reads) == 5 + 1
    world.clock.sleep(world.services.settings.meta_cache_seconds)
    assert world.call(OTHER_ROOT, "POST", "/topics/t/messages", SEND, host=OWNER_HOST).status == 201
    assert len(reads) == 6 + 2
