"""The API's routes: what API Gateway sees (method + path), and which operation serves each call.

MNS puts several operations on one route, told apart by the query string or the body's root
element. This table is the one source for the local runtime's router and for the CDK app, which
builds one Lambda function per route from it (what each may do on AWS: `infra/grants.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from mnsd.calls.call import Call
from mnsd.ground import errors
from mnsd.ground.http import HttpResponse
from mnsd.operations.batch_change_message_visibility import batch_change_message_visibility
from mnsd.operations.batch_delete_message import batch_delete_message
from mnsd.operations.batch_peek_message import batch_peek_message
from mnsd.operations.batch_receive_message import batch_receive_message
from mnsd.operations.batch_send_message import batch_send_message
from mnsd.operations.change_message_visibility import change_message_visibility
from mnsd.operations.create_queue import create_queue
from mnsd.operations.create_receiver import create_receiver
from mnsd.operations.create_topic import create_topic
from mnsd.operations.delete_message import delete_message
from mnsd.operations.delete_queue import delete_queue
from mnsd.operations.delete_receiver import delete_receiver
from mnsd.operations.delete_topic import delete_topic
from mnsd.operations.get_account_attributes import get_account_attributes
from mnsd.operations.get_message_history import queue_message_history, topic_message_history
from mnsd.operations.get_queue_attributes import get_queue_attributes
from mnsd.operations.get_receiver_attributes import get_receiver_attributes
from mnsd.operations.get_signing_certificate import get_signing_certificate
from mnsd.operations.get_subscription_attributes import get_subscription_attributes
from mnsd.operations.get_topic_attributes import get_topic_attributes
from mnsd.operations.hourly_metrics import queue_metrics, subscription_metrics
from mnsd.operations.issue_security_token import issue_security_token
from mnsd.operations.list_access_keys import list_access_keys
from mnsd.operations.list_queue import list_queue
from mnsd.operations.list_receiver import list_receiver
from mnsd.operations.list_subscription_by_topic import list_subscription_by_topic
from mnsd.operations.list_topic import list_topic
from mnsd.operations.minute_metrics import queue_minutes
from mnsd.operations.peek_message import peek_message
from mnsd.operations.publish_message import publish_message
from mnsd.operations.receive_message import receive_message
from mnsd.operations.redrive_queue import redrive_queue
from mnsd.operations.rewind_queue import rewind_queue
from mnsd.operations.send_message import send_message
from mnsd.operations.set_account_attributes import set_account_attributes
from mnsd.operations.set_queue_attributes import set_queue_attributes
from mnsd.operations.set_subscription_attributes import set_subscription_attributes
from mnsd.operations.set_topic_attributes import set_topic_attributes
from mnsd.operations.subscribe import subscribe
from mnsd.operations.unsubscribe import unsubscribe
from mnsd.push.signing import CERTIFICATE_PATH

Operation = Callable[[Call], HttpResponse]
# The function behind `$default`: whatever no route matches gets an MNS error from it (`functions/not_found.py`).
CATCH_ALL = "not_found"


# The RAM action (`mns:` + this) each operation is authorized as: named here, never derived from a function's name,
# so renaming a function changes no permission. The hourly and minutely metrics are views of attributes,
# authorized as those.
ACTIONS: dict[Operation, str] = {
    # MNS has no action of its own for a batch of visibility changes: each is a ChangeMessageVisibility on the queue.
    batch_change_message_visibility: "ChangeMessageVisibility",
    batch_delete_message: "BatchDeleteMessage",
    batch_peek_message: "BatchPeekMessage",
    batch_receive_message: "BatchReceiveMessage",
    batch_send_message: "BatchSendMessage",
    change_message_visibility: "ChangeMessageVisibility",
    create_queue: "CreateQueue",
    create_receiver: "CreateReceiver",
    create_topic: "CreateTopic",
    delete_message: "DeleteMessage",
    delete_queue: "DeleteQueue",
    delete_receiver: "DeleteReceiver",
    delete_topic: "DeleteTopic",
    get_account_attributes: "GetAccountAttributes",
    get_queue_attributes: "GetQueueAttributes",
    get_receiver_attributes: "GetReceiverAttributes",
    get_subscription_attributes: "GetSubscriptionAttributes",
    get_topic_attributes: "GetTopicAttributes",
    issue_security_token: "IssueSecurityToken",
    list_access_keys: "ListAccessKeys",
    list_queue: "ListQueue",
    list_receiver: "ListReceiver",
    list_subscription_by_topic: "ListSubscriptionByTopic",
    list_topic: "ListTopic",
    peek_message: "PeekMessage",
    publish_message: "PublishMessage",
    queue_message_history: "GetMessageHistory",
    queue_metrics: "GetQueueAttributes",
    queue_minutes: "GetQueueAttributes",
    receive_message: "ReceiveMessage",
    redrive_queue: "RedriveQueue",
    rewind_queue: "RewindQueue",
    send_message: "SendMessage",
    set_account_attributes: "SetAccountAttributes",
    set_queue_attributes: "SetQueueAttributes",
    set_subscription_attributes: "SetSubscriptionAttributes",
    set_topic_attributes: "SetTopicAttributes",
    subscribe: "Subscribe",
    subscription_metrics: "GetSubscriptionAttributes",
    topic_message_history: "GetMessageHistory",
    unsubscribe: "Unsubscribe",
}


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    path: str  # API Gateway route path, parameters in braces
    select: Callable[[Call], Operation]
    # The longest a call may take (long polls): sizes the function's timeout.
    long_poll: bool = False
    # Served without authentication (the push signing certificate).
    public: bool = False
    # Serves the JSON plane too (SMQProxy 2026-04-09: the message operations, `mnsd.calls.planes`).
    json: bool = False
    # The path of the RAM resource its operations are authorized on, when it is not `path` (`mnsd.access.permissions`).
    resource: str = ""


def _flag(call: Call, name: str) -> bool:
    return (call.request.query(name) or "").lower() == "true"


def _has(call: Call, name: str) -> bool:
    return call.request.query(name) is not None


def _root(call: Call, *expected: str) -> str:
    """The request body's root element, which must be one the operation defines (the spec's schema)."""
    tag = call.xml().tag
    if tag not in expected:
        raise errors.InvalidArgument(
            f"The XML you provided did not validate against our published schema, cause by Element {tag}."
        )
    return tag


def _with_root(*expected: str) -> Callable[[Operation], Callable[[Call], Operation]]:
    """A route serving one operation whose body, when there is one, has one of the expected roots."""

    def selector(operation: Operation) -> Callable[[Call], Operation]:
        def select(call: Call) -> Operation:
            if call.request.body.strip():
                _root(call, *expected)
            return operation

        return select

    return selector


def _put(root: str, create: Operation, update: Operation) -> Callable[[Call], Operation]:
    """Create, or set attributes with `?metaoverride=true`; a body, when sent, has the resource's root."""

    def select(call: Call) -> Operation:
        if call.request.body.strip():
            _root(call, root)
        return update if _flag(call, "metaoverride") else create

    return select


def _put_queue(call: Call) -> Operation:
    """A queue's PUT: RedriveQueue (`?redrive=true`), RewindQueue (`?rewindtime=T`), else create or set."""
    if _flag(call, "redrive"):
        return redrive_queue
    if _has(call, "rewindtime"):
        return rewind_queue
    return _put("Queue", create_queue, set_queue_attributes)(call)


def _get_queue(call: Call) -> Operation:
    """A queue's GET: the console's charts (`?metrics=minutely`, `?metrics=hourly`), else GetQueueAttributes."""
    if not _has(call, "metrics"):
        return get_queue_attributes
    return queue_minutes if (call.request.query("metrics") or "").lower() == "minutely" else queue_metrics


def _send(call: Call) -> Operation:
    return batch_send_message if call.plane.root("Message", "Messages") == "Messages" else send_message


def _delete_messages(call: Call) -> Operation:
    if _has(call, "ReceiptHandle"):
        return delete_message
    call.plane.root("ReceiptHandles")
    return batch_delete_message


def _change_visibility(call: Call) -> Operation:
    """ChangeMessageVisibility (`?ReceiptHandle=...`, no body), else the batch, whose body's root is
    `ChangeVisibilities` (`mnsd.wire.requests.visibility_changes`)."""
    if _has(call, "ReceiptHandle") or not call.request.body.strip():
        return change_message_visibility
    call.plane.root("ChangeVisibilities")
    return batch_change_message_visibility


def _publish(call: Call) -> Operation:
    if call.request.body.strip():
        call.plane.root("Message")
    return publish_message


def _account(operation: Operation, root: str | None = None, flag: str = "accountmeta") -> Callable[[Call], Operation]:
    """An account-level operation, named by its flag in the query string (`/?accountmeta=true`)."""

    def select(call: Call) -> Operation:
        if not _flag(call, flag):
            raise errors.InvalidRequestURL()
        if root is not None and call.request.body.strip():
            _root(call, root)
        return operation

    return select


def _get_account(call: Call) -> Operation:
    """`GET /`: ListAccessKeys (`?accesskeys=true`, the console's), else GetAccountAttributes (`?accountmeta=true`)."""
    return list_access_keys if _flag(call, "accesskeys") else _account(get_account_attributes)(call)


ROUTES: dict[str, Route] = {
    route.name: route
    for route in (
        Route("get_account", "GET", "/", _get_account),
        Route("put_account", "PUT", "/", _account(set_account_attributes, "Account")),
        # IssueSecurityToken (`?securitytoken=true`): reads only the access keys and the receipt secret. The same
        # route serves the Mns-open OpenAPI (`mnsd.rpc`: queues, topics, subscriptions, tags, the account's settings
        # and endpoint, its signatures' nonces), whose calls `request.api` hands to the OpenAPI's door (`rpc.door`).
        Route(
            "post_account",
            "POST",
            "/",
            _account(issue_security_token, "SecurityToken", flag="securitytoken"),
        ),
        Route("list_queues", "GET", "/queues", lambda call: list_queue),
        Route(
            "put_queue",
            "PUT",
            "/queues/{queue}",
            _put_queue,
        ),
        Route(
            "get_queue",
            "GET",
            "/queues/{queue}",
            _get_queue,
        ),
        Route("delete_queue", "DELETE", "/queues/{queue}", lambda call: delete_queue),
        Route(
            "post_messages",
            "POST",
            "/queues/{queue}/messages",
            _send,
            json=True,
        ),
        Route(
            "get_messages",
            "GET",
            "/queues/{queue}/messages",
            lambda call: (
                (batch_peek_message if _has(call, "numOfMessages") else peek_message)
                if _flag(call, "peekonly")
                else (batch_receive_message if _has(call, "numOfMessages") else receive_message)
            ),
            long_poll=True,
            json=True,
        ),
        Route(
            "delete_messages",
            "DELETE",
            "/queues/{queue}/messages",
            _delete_messages,
            json=True,
        ),
        Route(
            "put_messages",
            "PUT",
            "/queues/{queue}/messages",
            _change_visibility,
            json=True,
        ),
        # A message's history from the operation log (`mnsd.log.history`): a message operation's resource.
        Route(
            "get_queue_message_history",
            "GET",
            "/queues/{queue}/messages/{message}/history",
            lambda call: queue_message_history,
            resource="/queues/{queue}/messages",
        ),
        # A queue's receivers (`mnsd.queues.receivers`): their messages are reached through the routes above, at
        # the address `{queue}.{receiver}`. Creating one may copy the queue's earlier messages to it.
        Route(
            "list_receivers",
            "GET",
            "/queues/{queue}/receivers",
            lambda call: list_receiver,
        ),
        Route(
            "put_receiver",
            "PUT",
            "/queues/{queue}/receivers/{receiver}",
            _with_root("Receiver")(create_receiver),
        ),
        Route(
            "get_receiver",
            "GET",
            "/queues/{queue}/receivers/{receiver}",
            lambda call: get_receiver_attributes,
        ),
        Route(
            "delete_receiver",
            "DELETE",
            "/queues/{queue}/receivers/{receiver}",
            lambda call: delete_receiver,
        ),
        Route("list_topics", "GET", "/topics", lambda call: list_topic),
        Route(
            "put_topic",
            "PUT",
            "/topics/{topic}",
            _put("Topic", create_topic, set_topic_attributes),
        ),
        Route(
            "get_topic",
            "GET",
            "/topics/{topic}",
            lambda call: get_topic_attributes,
        ),
        Route("delete_topic", "DELETE", "/topics/{topic}", lambda call: delete_topic),
        Route(
            "post_topic_messages",
            "POST",
            "/topics/{topic}/messages",
            _publish,
            json=True,
        ),
        Route(
            "get_topic_message_history",
            "GET",
            "/topics/{topic}/messages/{message}/history",
            lambda call: topic_message_history,
            resource="/topics/{topic}/messages",
        ),
        Route(
            "list_subscriptions",
            "GET",
            "/topics/{topic}/subscriptions",
            lambda call: list_subscription_by_topic,
        ),
        Route(
            "put_subscription",
            "PUT",
            "/topics/{topic}/subscriptions/{subscription}",
            _put("Subscription", subscribe, set_subscription_attributes),
        ),
        Route(
            "get_subscription",
            "GET",
            "/topics/{topic}/subscriptions/{subscription}",
            lambda call: subscription_metrics if _has(call, "metrics") else get_subscription_attributes,
        ),
        Route(
            "delete_subscription",
            "DELETE",
            "/topics/{topic}/subscriptions/{subscription}",
            lambda call: unsubscribe,
        ),
        Route("get_signing_certificate", "GET", CERTIFICATE_PATH, lambda call: get_signing_certificate, public=True),
    )
}


def path_parameters(route_path: str, path: str) -> dict[str, str]:
    """`{name}` segments of `route_path` in `path` (none when it is not the route's path)."""
    template, given = route_path.split("/"), path.split("/")
    if len(template) != len(given):
        return {}
    found = {}
    for part, value in zip(template, given, strict=True):
        if part.startswith("{") and part.endswith("}"):
            found[part[1:-1]] = unquote(value)
        elif part != value:
            return {}
    return found
