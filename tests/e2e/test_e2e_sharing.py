"""Sharing a queue with another account, through the official SDK unchanged: the grantee addresses the
owner's account by the endpoint's host (`{AccountId}.mns.localhost`, as `{AccountId}.mns.{region}.aliyuncs.com`
on MNS), signs with its own key, and may do what the queue's policy grants it, until the grant is revoked.
A topic of one account delivers into another's queue only while that queue's policy lets it."""

from __future__ import annotations

import json
import re
import socket
import time

import pytest
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from mnsd.model.policy import grant_document
from tests.support.servers import ACCOUNT_A, ACCOUNT_B

REGION = "cn-hangzhou"
ACCOUNT_HOST = re.compile(r"\d+\.mns\.localhost\Z")
XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


@pytest.fixture
def account_hosts(monkeypatch):
    """`{AccountId}.mns.localhost` resolves to this machine (as /etc/hosts or a resolver of *.localhost would)."""
    resolve = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        return resolve("127.0.0.1" if isinstance(host, str) and ACCOUNT_HOST.match(host) else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def owner_endpoint(endpoint: str, account: str) -> str:
    port = endpoint.rsplit(":", 1)[1]
    return f"http://{account}.mns.localhost:{port}"


def set_policy(raw, kind: str, name: str, grantee: str | None, actions: list[str]) -> None:
    """The owner's SetQueueAttributes / SetTopicAttributes with a `Policy` (none: the grant removed)."""
    owner = raw.key_id == ACCOUNT_A[1] and ACCOUNT_A[0] or ACCOUNT_B[0]
    document = ""
    if grantee:
        document = json.dumps(grant_document(grantee, actions, [f"acs:mns:*:{owner}:/{kind}s/{name}*"]))
    root = kind.title()
    body = f'<?xml version="1.0" encoding="UTF-8"?><{root} {XMLNS}><Policy>{document}</Policy></{root}>'
    response = raw.request("PUT", f"/{kind}s/{name}?metaoverride=true", body)
    assert response.status == 204, response.body


def refused(call) -> str:
    with pytest.raises(MNSServerException) as exc:
        call()
    return exc.value.type


def test_a_granted_account_uses_the_owners_queue_through_the_sdk_until_revoked(
    endpoint, account_a, raw_a, qname, account_hosts
):
    account_a.get_queue(qname).create(QueueMeta())
    grantee = Account(owner_endpoint(endpoint, ACCOUNT_A[0]), ACCOUNT_B[1], ACCOUNT_B[2])
    shared = grantee.get_queue(qname)
    shared.set_encoding(False)
    try:
        assert refused(lambda: shared.send_message(Message("before"))) == "AccessDenied"

        set_policy(raw_a, "queue", qname, ACCOUNT_B[0], ["mns:SendMessage", "mns:ReceiveMessage", "mns:DeleteMessage"])
        shared.send_message(Message("from B"))
        received = shared.receive_message(3)
        assert received.message_body == "from B"
        shared.delete_message(received.receipt_handle)

        # what was not granted: the queue's attributes and counts, peeking, deleting it, the owner's lists
        assert refused(lambda: shared.get_attributes()) == "AccessDenied"
        assert refused(lambda: shared.peek_message()) == "AccessDenied"
        assert refused(lambda: shared.delete()) == "AccessDenied"
        assert refused(lambda: grantee.list_queue(qname)) == "AccessDenied"
        assert refused(lambda: grantee.list_topic()) == "AccessDenied"

        set_policy(raw_a, "queue", qname, None, [])
        assert refused(lambda: shared.send_message(Message("after"))) == "AccessDenied"
        assert account_a.get_queue(qname).get_attributes().active_messages == 0
    finally:
        account_a.get_queue(qname).delete()


def test_a_topic_of_another_account_delivers_into_a_queue_only_while_its_policy_grants_it(
    account_a, account_b, raw_a, qname
):
    queue = account_a.get_queue(qname)
    queue.create(QueueMeta())
    queue.set_encoding(False)
    topic = account_b.get_topic(qname)
    topic.create(TopicMeta())
    endpoint = f"acs:mns:{REGION}:{ACCOUNT_A[0]}:queues/{qname}"
    subscription = topic.get_subscription("into-a")
    try:
        assert refused(lambda: subscription.subscribe(SubscriptionMeta(endpoint))) == "EndpointInvalid"

        set_policy(raw_a, "queue", qname, ACCOUNT_B[0], ["mns:SendMessage"])
        subscription.subscribe(SubscriptionMeta(endpoint, notify_content_format="SIMPLIFIED"))
        topic.publish_message(TopicMessage("across accounts"))
        delivered = queue.receive_message(10)
        assert delivered.message_body == "across accounts"
        queue.delete_message(delivered.receipt_handle)

        set_policy(raw_a, "queue", qname, None, [])
        topic.publish_message(TopicMessage("after the grant"))
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            assert queue.get_attributes().active_messages == 0
            time.sleep(0.2)
    finally:
        topic.delete()
        queue.delete()
