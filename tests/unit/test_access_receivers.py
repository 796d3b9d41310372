"""A queue's receivers under access control: a receiver's address (`{queue}.{receiver}`) is a resource of its own
(`/queues/q.r/messages`), so keys and the queue's resource policy may grant it apart from the queue; the policy that
decides for another account is its queue's."""

from __future__ import annotations

import json

from mnsd.model.policy import grant_document
from tests.unit.access_calls import ACCOUNT, OTHER, OTHER_ROOT, ROOT, World, policy, resource

OWNER_HOST = f"{ACCOUNT}.mns.cn-hangzhou.aliyuncs.com"
RECEIVE = "/messages?numOfMessages=16&waitseconds=0"


def test_a_key_granted_the_queue_is_not_granted_its_receiver_nor_the_other_way_round():
    world = World()
    queue_only = world.key("QUEUE", policy(("Allow", ["mns:BatchReceiveMessage"], [resource("/queues/q/messages")])))
    receiver_only = world.key(
        "RECEIVER", policy(("Allow", ["mns:BatchReceiveMessage"], [resource("/queues/q.r/messages")]))
    )
    assert world.call(queue_only, "GET", "/queues/q" + RECEIVE).status == 200
    assert world.call(receiver_only, "GET", "/queues/q.r" + RECEIVE).status == 200  # its copy of the message
    for key, target in ((queue_only, "/queues/q.r"), (receiver_only, "/queues/q")):
        answer = world.call(key, "GET", target + RECEIVE)
        assert (answer.status, answer.code) == (403, "AccessDenied")
        assert f"on resource {resource(target + '/messages')}." in answer.message


def _share(world: World, resources: list[str]) -> None:
    document = grant_document(OTHER, ["mns:BatchReceiveMessage"], [resource(r) for r in resources])
    body = f"<Queue><Policy>{json.dumps(document)}</Policy></Queue>"
    assert world.call(ROOT, "PUT", "/queues/q?metaoverride=true", body).status == 204


def test_another_account_reaches_a_receiver_when_its_queues_policy_grants_the_receivers_address():
    world = World()
    refused = world.call(OTHER_ROOT, "GET", "/queues/q.r" + RECEIVE, host=OWNER_HOST)
    assert (refused.status, refused.code) == (403, "AccessDenied")
    _share(world, ["/queues/q/messages"])  # the queue's own messages only
    assert world.call(OTHER_ROOT, "GET", "/queues/q" + RECEIVE, host=OWNER_HOST).status == 200
    assert world.call(OTHER_ROOT, "GET", "/queues/q.r" + RECEIVE, host=OWNER_HOST).status == 403
    _share(world, ["/queues/q.r/messages"])
    received = world.call(OTHER_ROOT, "GET", "/queues/q.r" + RECEIVE, host=OWNER_HOST)
    assert received.status == 200 and b"hello" in received.body
    assert world.call(OTHER_ROOT, "GET", "/queues/q" + RECEIVE, host=OWNER_HOST).status == 403
