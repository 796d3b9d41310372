"""TagResources and UntagResources (the Terraform provider's): tags of queues and topics, kept with their records."""

from __future__ import annotations

from typing import Any

from mnsd.ground import errors
from mnsd.ground.validation import mns_bool
from mnsd.model.tags import MAX_TAGS, TagChanges
from mnsd.rpc import records
from mnsd.rpc.call import RpcCall

QUEUE, TOPIC = "queue", "topic"
MAX_RESOURCES = 50


def resource_type(call: RpcCall) -> str:
    kind = call.required("ResourceType").strip().lower()
    if kind not in (QUEUE, TOPIC):
        raise errors.InvalidArgument("The ResourceType should be queue or topic.")
    return kind


def resource_ids(call: RpcCall) -> list[str]:
    ids = call.numbered("ResourceId")
    if not 1 <= len(ids) <= MAX_RESOURCES:
        raise errors.InvalidArgument(f"Name 1 to {MAX_RESOURCES} resources: ResourceId.1, ResourceId.2, ...")
    return ids


def _apply(call: RpcCall, changes: TagChanges) -> None:
    records.retag(call, records.QUEUES if resource_type(call) == QUEUE else records.TOPICS, resource_ids(call), changes)


def tag_resources(call: RpcCall) -> Any:
    given = call.tags()
    if not 1 <= len(given) <= MAX_TAGS:
        raise errors.InvalidArgument(f"Name 1 to {MAX_TAGS} tags: Tag.1.Key, Tag.1.Value, ...")
    _apply(call, TagChanges(add=tuple(given)))
    return None


def untag_resources(call: RpcCall) -> Any:
    every = call.flag("All")
    remove_all = every is not None and mns_bool("All", every)
    keys = call.numbered("TagKey")
    if not keys and not remove_all:
        raise errors.InvalidArgument("Name the tag keys to remove (TagKey.1, ...) or All true.")
    _apply(call, TagChanges(remove=tuple(keys), remove_all=remove_all))
    return None
