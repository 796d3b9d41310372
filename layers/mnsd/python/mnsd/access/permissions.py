"""The RAM action and resource of every operation, as the API reference names them.

The action is `mns:` and the operation's name (`send_message` -> `mns:SendMessage`); the resource is
`acs:mns:{region}:{account}:` and the route's path with its names filled in, so queue operations are on
`/queues/{queue}`, message operations on `/queues/{queue}/messages`, ListQueue on `/queues`, and topics
follow the same pattern (`/topics/{topic}`, `/topics/{topic}/messages`, `/topics/{topic}/subscriptions/{s}`).
"""

from __future__ import annotations

from dataclasses import dataclass

# Operations that are views of another's data are authorized as that one.
_SAME_AS = {
    "queue_metrics": "GetQueueAttributes",
    "queue_minutes": "GetQueueAttributes",
    "subscription_metrics": "GetSubscriptionAttributes",
}
QUEUE, TOPIC = "queue", "topic"
QUEUE_MESSAGES = "/queues/{queue}/messages"  # the resource path of the message operations


@dataclass(frozen=True)
class Permission:
    action: str  # mns:SendMessage
    resource: str  # acs:mns:cn-hangzhou:1000000000000001:/queues/orders/messages
    # The queue or topic whose resource policy may grant it to another account (None: account-wide).
    kind: str | None = None
    name: str = ""


def action_of(operation_name: str) -> str:
    camel = _SAME_AS.get(operation_name) or "".join(part.title() for part in operation_name.split("_"))
    return f"mns:{camel}"


def permission_for(operation_name: str, route_path: str, params: dict[str, str], region: str, owner: str) -> Permission:
    path = route_path.format(**params)
    kind, name = (
        (QUEUE, params["queue"]) if "queue" in params else (TOPIC, params["topic"]) if "topic" in params else (None, "")
    )
    return Permission(action_of(operation_name), f"acs:mns:{region}:{owner}:{path}", kind, name)
