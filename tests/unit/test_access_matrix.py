"""Every operation of the API, under key policies: allowed, refused by action, refused by resource, refused by
an explicit Deny, allowed by wildcard; a refusal is exactly MNS's AccessDenied (403) naming the action, and an
allowed call gets exactly the answer the account's root key gets."""

from __future__ import annotations

import time

import pytest
from access_calls import ROOT, World, policy, resource

from mnsd.request import routes

NOW = int(time.time())
HANDLE = "bad-handle"


# operation: (RAM action, method, target, body, resource path)
OPERATIONS: dict[str, tuple[str, str, str, str, str]] = {
    "get_account_attributes": ("GetAccountAttributes", "GET", "/?accountmeta=true", "", "/"),
    "set_account_attributes": (
        "SetAccountAttributes",
        "PUT",
        "/?accountmeta=true",
        "<Account><LoggingBucket>logs</LoggingBucket></Account>",
        "/",
    ),
    "issue_security_token": ("IssueSecurityToken", "POST", "/?securitytoken=true", "", "/"),
    "list_access_keys": ("ListAccessKeys", "GET", "/?accesskeys=true", "", "/"),
    "list_queue": ("ListQueue", "GET", "/queues", "", "/queues"),
    "create_queue": (
        "CreateQueue",
        "PUT",
        "/queues/q",
        "<Queue><VisibilityTimeout>60</VisibilityTimeout></Queue>",
        "/queues/q",
    ),
    "set_queue_attributes": (
        "SetQueueAttributes",
        "PUT",
        "/queues/q?metaoverride=true",
        "<Queue><VisibilityTimeout>60</VisibilityTimeout></Queue>",
        "/queues/q",
    ),
    "redrive_queue": ("RedriveQueue", "PUT", "/queues/q?redrive=true", "", "/queues/q"),
    "rewind_queue": ("RewindQueue", "PUT", f"/queues/q?rewindtime={NOW - 60}", "", "/queues/q"),
    "get_queue_attributes": ("GetQueueAttributes", "GET", "/queues/q", "", "/queues/q"),
    "queue_metrics": ("GetQueueAttributes", "GET", "/queues/q?metrics=true", "", "/queues/q"),
    "delete_queue": ("DeleteQueue", "DELETE", "/queues/q", "", "/queues/q"),
    "send_message": (
        "SendMessage",
        "POST",
        "/queues/q/messages",
        "<Message><MessageBody>m</MessageBody></Message>",
        "/queues/q/messages",
    ),
    "batch_send_message": (
        "BatchSendMessage",
        "POST",
        "/queues/q/messages",
        "<Messages><Message><MessageBody>m</MessageBody></Message></Messages>",
        "/queues/q/messages",
    ),
    "receive_message": ("ReceiveMessage", "GET", "/queues/q/messages?waitseconds=0", "", "/queues/q/messages"),
    "batch_receive_message": (
        "BatchReceiveMessage",
        "GET",
        "/queues/q/messages?numOfMessages=2&waitseconds=0",
        "",
        "/queues/q/messages",
    ),
    "peek_message": ("PeekMessage", "GET", "/queues/q/messages?peekonly=true", "", "/queues/q/messages"),
    "batch_peek_message": (
        "BatchPeekMessage",
        "GET",
        "/queues/q/messages?peekonly=true&numOfMessages=2",
        "",
        "/queues/q/messages",
    ),
    "delete_message": (
        "DeleteMessage",
        "DELETE",
        f"/queues/q/messages?ReceiptHandle={HANDLE}",
        "",
        "/queues/q/messages",
    ),
    "batch_delete_message": (
        "BatchDeleteMessage",
        "DELETE",
        "/queues/q/messages",
        f"<ReceiptHandles><ReceiptHandle>{HANDLE}</ReceiptHandle></ReceiptHandles>",
        "/queues/q/messages",
    ),
    "change_message_visibility": (
        "ChangeMessageVisibility",
        "PUT",
        f"/queues/q/messages?ReceiptHandle={HANDLE}&VisibilityTimeout=10",
        "",
        "/queues/q/messages",
    ),
    "list_topic": ("ListTopic", "GET", "/topics", "", "/topics"),
    "create_topic": ("CreateTopic", "PUT", "/topics/t2", "", "/topics/t2"),
    "set_topic_attributes": (
        "SetTopicAttributes",
        "PUT",
        "/topics/t?metaoverride=true",
        "<Topic><MaximumMessageSize>2048</MaximumMessageSize></Topic>",
        "/topics/t",
    ),
    "get_topic_attributes": ("GetTopicAttributes", "GET", "/topics/t", "", "/topics/t"),
    "delete_topic": ("DeleteTopic", "DELETE", "/topics/t", "", "/topics/t"),
    "publish_message": (
        "PublishMessage",
        "POST",
        "/topics/t/messages",
        "<Message><MessageBody>m</MessageBody></Message>",
        "/topics/t/messages",
    ),
    "list_subscription_by_topic": (
        "ListSubscriptionByTopic",
        "GET",
        "/topics/t/subscriptions",
        "",
        "/topics/t/subscriptions",
    ),
    "subscribe": (
        "Subscribe",
        "PUT",
        "/topics/t/subscriptions/s2",
        "<Subscription><Endpoint>acs:mns:cn-hangzhou:1000000000000001:queues/q</Endpoint></Subscription>",
        "/topics/t/subscriptions/s2",
    ),
    "set_subscription_attributes": (
        "SetSubscriptionAttributes",
        "PUT",
        "/topics/t/subscriptions/s?metaoverride=true",
        "<Subscription><NotifyStrategy>EXPONENTIAL_DECAY_RETRY</NotifyStrategy></Subscription>",
        "/topics/t/subscriptions/s",
    ),
    "get_subscription_attributes": (
        "GetSubscriptionAttributes",
        "GET",
        "/topics/t/subscriptions/s",
        "",
        "/topics/t/subscriptions/s",
    ),
    "subscription_metrics": (
        "GetSubscriptionAttributes",
        "GET",
        "/topics/t/subscriptions/s?metrics=true",
        "",
        "/topics/t/subscriptions/s",
    ),
    "unsubscribe": ("Unsubscribe", "DELETE", "/topics/t/subscriptions/s", "", "/topics/t/subscriptions/s"),
}
PUBLIC = {"get_signing_certificate"}
# Only a root key may do these, whatever a key's policy allows.
ROOT_ONLY = {"list_access_keys": "only a root key of the account may list its keys"}


def test_the_matrix_covers_every_operation_the_routes_serve():
    served = {
        name
        for name, value in vars(routes).items()
        if callable(value) and getattr(value, "__module__", "").startswith("mnsd.operations.")
    }
    assert served - PUBLIC == set(OPERATIONS)


def _other_action(action: str) -> str:
    return "mns:GetTopicAttributes" if action != "GetTopicAttributes" else "mns:GetQueueAttributes"


def _other_resource(path: str) -> str:
    return resource("/queues/elsewhere") if path != "/queues/elsewhere" else resource("/topics/elsewhere")


def _wildcard(action: str) -> str:
    return f"mns:{action[:4]}*"


def _wildcard_resource(path: str) -> str:
    return f"acs:mns:*:1000000000000001:{path[:-1]}*" if len(path) > 1 else "acs:mns:*:*:/"


CASES = {
    "allowed": lambda a, p: policy(("Allow", [f"mns:{a}"], [resource(p)])),
    "refused by action": lambda a, p: policy(("Allow", [_other_action(a)], [resource(p)])),
    "refused by resource": lambda a, p: policy(("Allow", [f"mns:{a}"], [_other_resource(p)])),
    "refused by explicit Deny": lambda a, p: policy(
        ("Allow", ["mns:*"], ["*"]),
        ("Deny", [f"mns:{a}"], [resource(p)]),
    ),
    "allowed by wildcard": lambda a, p: policy(("Allow", [_wildcard(a)], [_wildcard_resource(p)])),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_every_operation_under_key_policies(operation, case):
    action, method, target, body, path = OPERATIONS[operation]
    root_answer = World().call(ROOT, method, target, body)
    assert root_answer.status != 403

    world = World()
    key = world.key("SCOPED", CASES[case](action, path))
    answer = world.call(key, method, target, body)

    refusal = f"You are not authorized to do action mns:{action} on resource {resource(path)}"
    if case.startswith("allowed") and operation in ROOT_ONLY:
        assert (answer.status, answer.code) == (403, "AccessDenied")
        assert answer.message == f"{refusal}: {ROOT_ONLY[operation]}."
    elif case.startswith("allowed"):
        assert (answer.status, answer.code) == (root_answer.status, root_answer.code)
    else:
        assert (answer.status, answer.code) == (403, "AccessDenied")
        assert answer.message == f"{refusal}."
        assert len(answer.request_id) == 24
