"""Create, set attributes of and delete a queue or a topic: the OpenAPI's actions that differ only in the kind of record
(its name's parameter, its inputs and its service), written once over a `Kind`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnsd.model.queues import QueueAttributeChanges
from mnsd.model.tags import TagChanges, applied
from mnsd.model.topics import TopicAttributeChanges
from mnsd.rpc import inputs
from mnsd.rpc.call import RpcCall
from mnsd.rpc.envelope import DONE

Serve = Callable[[RpcCall], Any]


@dataclass(frozen=True)
class Kind:
    """A kind of record as the OpenAPI names it: the parameter naming one, the changes a call gives (`(call, *,
    creating)`), the changes class (its tags alone are `tagged(tags=...)`), its service and the noun of the service's
    methods (`create_{noun}`, `set_{noun}_attributes`, `delete_{noun}`)."""

    name: str
    changes: Callable[..., Any]
    tagged: Callable[..., Any]
    service: Callable[[RpcCall], Any]
    noun: str

    def create(self, call: RpcCall) -> Callable[[str, str, Any], bool]:
        return getattr(self.service(call), f"create_{self.noun}")

    def get(self, call: RpcCall) -> Callable[[str, str], Any]:
        return getattr(self.service(call), f"get_{self.noun}")

    def update(self, call: RpcCall) -> Callable[[str, str, Any], None]:
        return getattr(self.service(call), f"set_{self.noun}_attributes")

    def delete(self, call: RpcCall) -> Callable[[str, str], None]:
        return getattr(self.service(call), f"delete_{self.noun}")


QUEUES = Kind("QueueName", inputs.queue_changes, QueueAttributeChanges, lambda call: call.services.queues, "queue")
TOPICS = Kind("TopicName", inputs.topic_changes, TopicAttributeChanges, lambda call: call.services.topics, "topic")


def creator(kind: Kind) -> Serve:
    def create(call: RpcCall) -> Any:
        name = call.required(kind.name)
        changes = kind.changes(call, creating=True)
        if not kind.create(call)(call.owner, name, changes) and changes.tags is not None:
            # an equal one stood (tags are not compared): the tags named are set on it, as TagResources would
            kind.update(call)(call.owner, name, kind.tagged(tags=changes.tags))
        return DONE

    return create


def updater(kind: Kind) -> Serve:
    def update(call: RpcCall) -> Any:
        kind.update(call)(call.owner, call.required(kind.name), kind.changes(call, creating=False))
        return DONE

    return update


def deleter(kind: Kind) -> Serve:
    def delete(call: RpcCall) -> Any:
        kind.delete(call)(call.owner, call.required(kind.name))
        return DONE

    return delete


def retag(call: RpcCall, kind: Kind, names: list[str], changes: TagChanges) -> None:
    """TagResources and UntagResources: the same change of tags on each record named, the whole call checked first
    (every record there, every one's tags within their rules after the change) so that a refused call changes none.
    (A record deleted or retagged by another call between the check and the writes can still refuse a later write.)"""
    for name in dict.fromkeys(names):
        applied(kind.get(call)(call.owner, name).attributes.tags, changes)
    for name in names:
        kind.update(call)(call.owner, name, kind.tagged(tags=changes))
