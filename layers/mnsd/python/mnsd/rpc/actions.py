"""The OpenAPI's action table: each action, what serves it, and the resources it is authorized on (the RAM action is
`mns:` and its name, as on the XML plane; the resource the path of the documented ARN: `/queues/{queue}`,
`/topics/{topic}/subscriptions/{subscription}`, `/` for the account's own settings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnsd.ground import errors
from mnsd.rpc import account_actions as account
from mnsd.rpc import queue_actions as queues
from mnsd.rpc import records
from mnsd.rpc import tag_actions as tags
from mnsd.rpc import topic_actions as topics
from mnsd.rpc.call import RpcCall

Resource = tuple[str, dict[str, str]]  # a route path and the names filling it


def _queue(call: RpcCall) -> list[Resource]:
    return [("/queues/{queue}", {"queue": call.required("QueueName")})]


def _topic(call: RpcCall) -> list[Resource]:
    return [("/topics/{topic}", {"topic": call.required("TopicName")})]


def _subscription(call: RpcCall) -> list[Resource]:
    names = {"topic": call.required("TopicName"), "subscription": call.required("SubscriptionName")}
    return [("/topics/{topic}/subscriptions/{subscription}", names)]


def _subscriptions(call: RpcCall) -> list[Resource]:
    return [("/topics/{topic}/subscriptions", {"topic": call.required("TopicName")})]


def _tagged(call: RpcCall) -> list[Resource]:
    kind = tags.resource_type(call)
    return [(f"/{kind}s/{{{kind}}}", {kind: name}) for name in tags.resource_ids(call)]


def _fixed(path: str) -> Callable[[RpcCall], list[Resource]]:
    return lambda call: [(path, {})]


@dataclass(frozen=True)
class Action:
    serve: Callable[[RpcCall], Any]  # the answer's Data (None: none)
    resources: Callable[[RpcCall], list[Resource]]
    # The endpoint actions stay open while the account's endpoint refuses the caller's address (`mnsd.control.endpoint_acl`).
    endpoint_control: bool = False


_ROOT = _fixed("/")
ACTIONS: dict[str, Action] = {
    "CreateQueue": Action(records.creator(records.QUEUES), _queue),
    "DeleteQueue": Action(records.deleter(records.QUEUES), _queue),
    "SetQueueAttributes": Action(records.updater(records.QUEUES), _queue),
    "GetQueueAttributes": Action(queues.get_queue_attributes, _queue),
    "ListQueue": Action(queues.list_queue, _fixed("/queues")),
    "CreateTopic": Action(records.creator(records.TOPICS), _topic),
    "DeleteTopic": Action(records.deleter(records.TOPICS), _topic),
    "SetTopicAttributes": Action(records.updater(records.TOPICS), _topic),
    "GetTopicAttributes": Action(topics.get_topic_attributes, _topic),
    "ListTopic": Action(topics.list_topic, _fixed("/topics")),
    "Subscribe": Action(topics.subscribe, _subscription),
    "Unsubscribe": Action(topics.unsubscribe, _subscription),
    "SetSubscriptionAttributes": Action(topics.set_subscription_attributes, _subscription),
    "GetSubscriptionAttributes": Action(topics.get_subscription_attributes, _subscription),
    "ListSubscriptionByTopic": Action(topics.list_subscription_by_topic, _subscriptions),
    "TagResources": Action(tags.tag_resources, _tagged),
    "UntagResources": Action(tags.untag_resources, _tagged),
    "GetAccountAttributes": Action(account.get_account_attributes, _ROOT),
    "SetAccountAttributes": Action(account.set_account_attributes, _ROOT),
    "GetEndpointAttribute": Action(account.get_endpoint_attribute, _ROOT, endpoint_control=True),
    "EnableEndpoint": Action(account.enable_endpoint, _ROOT, endpoint_control=True),
    "DisableEndpoint": Action(account.disable_endpoint, _ROOT, endpoint_control=True),
    "AuthorizeEndpointAcl": Action(account.authorize_endpoint_acl, _ROOT, endpoint_control=True),
    "RevokeEndpointAcl": Action(account.revoke_endpoint_acl, _ROOT, endpoint_control=True),
}
# OSS event rules deliver OSS object events into a queue or topic: nothing here produces those events (an S3 bucket's
# notifications would be a different source with other names and shapes), so they are refused, never accepted and dropped.
EVENT_RULES = ("CreateEventRule", "DeleteEventRule", "GetEventRule", "ListEventRules")

EventRulesNotOffered = errors.openapi_error(
    "OperationNotSupported",
    400,
    "Event rules (OSS object events into a queue or topic) are not offered: no OSS events reach this service.",
)
ActionNotFound = errors.openapi_error(
    "InvalidAction.NotFound", 404, "Specified api is not found, please check your url and method."
)
VersionInvalid = errors.openapi_error("InvalidVersion", 400, "Specified parameter Version is not valid.")


def action_of(name: str) -> Action:
    if name in EVENT_RULES:
        raise EventRulesNotOffered()
    found = ACTIONS.get(name)
    if found is None:
        raise ActionNotFound()
    return found
