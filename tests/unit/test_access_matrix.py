"""Every operation of the API, under key policies: allowed, refused by action, refused by resource, refused by
an explicit Deny, allowed by wildcard; a refusal is exactly MNS's AccessDenied (403) naming the action, and an
allowed call gets exactly the answer the account's root key gets."""

from __future__ import annotations

import time

import pytest

from mnsd.request import routes
from tests.unit.access_calls import ROOT, World, policy, resource

NOW = int(time.time())
HANDLE = "bad-handle"
QUEUE = "<Queue><VisibilityTimeout>60</VisibilityTimeout></Queue>"
MESSAGE = "<Message><MessageBody>m</MessageBody></Message>"
ACCOUNT_BODY = "<Account><LoggingBucket>logs</LoggingBucket></Account>"
HANDLES = f"<ReceiptHandles><ReceiptHandle>{HANDLE}</ReceiptHandle></ReceiptHandles>"
VISIBILITIES = (
    f"<ChangeVisibilities><VisibilityTimeout>10</VisibilityTimeout><ReceiptHandle>{HANDLE}</ReceiptHandle>"
    "</ChangeVisibilities>"
)
TOPIC = "<Topic><MaximumMessageSize>2048</MaximumMessageSize></Topic>"
SUBSCRIPTION = "<Subscription><Endpoint>acs:mns:cn-hangzhou:1000000000000001:queues/q</Endpoint></Subscription>"
STRATEGY = "<Subscription><NotifyStrategy>EXPONENTIAL_DECAY_RETRY</NotifyStrategy></Subscription>"
RECEIVER = "<Receiver><VisibilityTimeout>60</VisibilityTimeout></Receiver>"


# operation: (RAM action, method, target, body); the resource is the target's path
OPERATIONS: dict[str, tuple[str, str, str, str]] = {
    "get_account_attributes": ("GetAccountAttributes", "GET", "/?accountmeta=true", ""),
    "set_account_attributes": ("SetAccountAttributes", "PUT", "/?accountmeta=true", ACCOUNT_BODY),
    "issue_security_token": ("IssueSecurityToken", "POST", "/?securitytoken=true", ""),
    "list_access_keys": ("ListAccessKeys", "GET", "/?accesskeys=true", ""),
    "list_queue": ("ListQueue", "GET", "/queues", ""),
    "create_queue": ("CreateQueue", "PUT", "/queues/q", QUEUE),
    "set_queue_attributes": ("SetQueueAttributes", "PUT", "/queues/q?metaoverride=true", QUEUE),
    "redrive_queue": ("RedriveQueue", "PUT", "/queues/q?redrive=true", ""),
    "rewind_queue": ("RewindQueue", "PUT", f"/queues/q?rewindtime={NOW - 60}", ""),
    "get_queue_attributes": ("GetQueueAttributes", "GET", "/queues/q", ""),
    "queue_metrics": ("GetQueueAttributes", "GET", "/queues/q?metrics=true", ""),
    "queue_minutes": ("GetQueueAttributes", "GET", "/queues/q?metrics=minutely", ""),
    "delete_queue": ("DeleteQueue", "DELETE", "/queues/q", ""),
    "send_message": ("SendMessage", "POST", "/queues/q/messages", MESSAGE),
    "batch_send_message": ("BatchSendMessage", "POST", "/queues/q/messages", f"<Messages>{MESSAGE}</Messages>"),
    "receive_message": ("ReceiveMessage", "GET", "/queues/q/messages?waitseconds=0", ""),
    "batch_receive_message": ("BatchReceiveMessage", "GET", "/queues/q/messages?numOfMessages=2&waitseconds=0", ""),
    "peek_message": ("PeekMessage", "GET", "/queues/q/messages?peekonly=true", ""),
    "batch_peek_message": ("BatchPeekMessage", "GET", "/queues/q/messages?peekonly=true&numOfMessages=2", ""),
    "delete_message": ("DeleteMessage", "DELETE", f"/queues/q/messages?ReceiptHandle={HANDLE}", ""),
    "batch_delete_message": ("BatchDeleteMessage", "DELETE", "/queues/q/messages", HANDLES),
    "change_message_visibility": (
        "ChangeMessageVisibility",
        "PUT",
        f"/queues/q/messages?ReceiptHandle={HANDLE}&VisibilityTimeout=10",
        "",
    ),
    "batch_change_message_visibility": ("ChangeMessageVisibility", "PUT", "/queues/q/messages", VISIBILITIES),
    "create_receiver": ("CreateReceiver", "PUT", "/queues/q/receivers/r2", RECEIVER),
    "list_receiver": ("ListReceiver", "GET", "/queues/q/receivers", ""),
    "get_receiver_attributes": ("GetReceiverAttributes", "GET", "/queues/q/receivers/r", ""),
    "delete_receiver": ("DeleteReceiver", "DELETE", "/queues/q/receivers/r", ""),
    "list_topic": ("ListTopic", "GET", "/topics", ""),
    "create_topic": ("CreateTopic", "PUT", "/topics/t2", ""),
    "set_topic_attributes": ("SetTopicAttributes", "PUT", "/topics/t?metaoverride=true", TOPIC),
    "get_topic_attributes": ("GetTopicAttributes", "GET", "/topics/t", ""),
    "delete_topic": ("DeleteTopic", "DELETE", "/topics/t", ""),
    "publish_message": ("PublishMessage", "POST", "/topics/t/messages", MESSAGE),
    "list_subscription_by_topic": ("ListSubscriptionByTopic", "GET", "/topics/t/subscriptions", ""),
    "subscribe": ("Subscribe", "PUT", "/topics/t/subscriptions/s2", SUBSCRIPTION),
    "set_subscription_attributes": (
        "SetSubscriptionAttributes",
        "PUT",
        "/topics/t/subscriptions/s?metaoverride=true",
        STRATEGY,
    ),
    "get_subscription_attributes": ("GetSubscriptionAttributes", "GET", "/topics/t/subscriptions/s", ""),
    "subscription_metrics": ("GetSubscriptionAttributes", "GET", "/topics/t/subscriptions/s?metrics=true", ""),
    "unsubscribe": ("Unsubscribe", "DELETE", "/topics/t/subscriptions/s", ""),
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


def resource_path(target: str) -> str:
    return target.split("?", 1)[0] or "/"


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
    action, method, target, body = OPERATIONS[operation]
    path = resource_path(target)
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
