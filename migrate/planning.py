"""What `apply` would do to make the target match the source: each resource created, changed, left as it is, in
conflict (a setting that cannot change once made), only on the target (left alone), or not carried (the target
cannot hold it: named with why)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from migrate.estate import FIXED, QUEUE, SUBSCRIPTION, TOPIC, Estate, Resource

CREATE, UPDATE, UNCHANGED, CONFLICT, NOT_CARRIED, TARGET_ONLY = (
    "create",
    "update",
    "unchanged",
    "conflict",
    "not-carried",
    "target-only",
)
ORDER = {QUEUE: 0, TOPIC: 1, SUBSCRIPTION: 2}
SERVED_PUSH_KINDS = ("queue:", "http://", "https://", "email:", "alisms:")
# A Lambda function's or EventBridge bus's ARN (`mnsd.model.cloud_targets` checks them exactly on the target).
AWS_TARGET = re.compile(
    r"arn:(aws|aws-cn|aws-us-gov):(lambda:[^:]+:\d{12}:function:|events:[^:]+:\d{12}:event-bus/)\S+\Z"
)
# Alibaba Cloud's functions and buses: carried only where the user maps them (`--map-endpoint OLD=NEW`).
MAPPABLE_PUSH_KINDS = ("acs:fc:", "acs:eventbridge:")
# What a target that is not Alibaba's service (a deployed stack, `make run`) does not offer, and why.
SSE_WHY = "server-side encryption per queue or topic is not offered: the stack encrypts its tables as a whole"
FIFO_TOPIC_WHY = "FIFO topics are not offered by the target"
PUSH_KIND_WHY = (
    "the target delivers to queues, HTTP, mail (email), SMS (alisms), Lambda functions and EventBridge buses (their "
    "ARNs) only"
)
UNMAPPED_WHY = (
    "an Alibaba Cloud function or bus: map it to a Lambda function's or EventBridge bus's ARN with "
    "--map-endpoint OLD=NEW"
)


@dataclass
class Change:
    action: str
    kind: str
    name: str
    wanted: Resource | None = None  # the settings to write (None for target-only)
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)  # (setting, on the target, wanted)
    tags_added: dict[str, str] = field(default_factory=dict)
    tags_removed: list[str] = field(default_factory=list)
    not_carried: list[tuple[str, str]] = field(default_factory=list)  # (setting, why)
    reason: str = ""

    @property
    def changes_anything(self) -> bool:
        return self.action in (CREATE, UPDATE)


@dataclass
class Plan:
    source: str
    target: str
    changes: list[Change]

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def drift(self) -> bool:
        """Whether the target differs from the source in anything it can hold."""
        return any(c.action in (CREATE, UPDATE, CONFLICT) for c in self.changes)


def is_alibaba(endpoint: str) -> bool:
    return (urlsplit(endpoint).hostname or "").endswith(".aliyuncs.com")


def served(endpoint: str) -> bool:
    """Whether a target other than Alibaba's delivers to `endpoint` (as compared: `migrate.estate.endpoint_of`)."""
    return endpoint.startswith(SERVED_PUSH_KINDS) or bool(AWS_TARGET.match(endpoint))


def mapped(resource: Resource, endpoint_map: Mapping[str, str]) -> Resource:
    """A subscription whose Endpoint the user mapped (`--map-endpoint OLD=NEW`), with the new one; any other as is."""
    if resource.kind != SUBSCRIPTION or str(resource.settings.get("Endpoint")) not in endpoint_map:
        return resource
    settings = {**resource.settings, "Endpoint": endpoint_map[str(resource.settings["Endpoint"])]}
    return dataclasses.replace(resource, settings=settings)


def _carried(resource: Resource, alibaba_target: bool, skipped_topics: set[str]) -> tuple[Resource, list, str]:
    """The resource as the target can hold it: (resource without the settings it cannot hold, those settings with
    why, why the resource as a whole is not carried or "")."""
    if alibaba_target:
        return resource, [], ""
    if resource.kind == SUBSCRIPTION:
        topic = resource.name.split("/", 1)[0]
        if topic in skipped_topics:
            return resource, [], f"its topic {topic} is not carried"
        endpoint = str(resource.settings["Endpoint"])
        if not served(endpoint):
            why = UNMAPPED_WHY if endpoint.lower().startswith(MAPPABLE_PUSH_KINDS) else PUSH_KIND_WHY
            return resource, [], f"endpoint {endpoint}: {why}"
        return resource, [], ""
    if resource.kind == TOPIC and resource.settings.get("TopicType", "normal") != "normal":
        return resource, [], FIFO_TOPIC_WHY
    if resource.settings.get("EnableSSE"):
        kept = {k: v for k, v in resource.settings.items() if k != "EnableSSE"}
        return Resource(resource.kind, resource.name, kept, resource.tags), [("EnableSSE", SSE_WHY)], ""
    return resource, [], ""


def make_plan(
    source: Estate, target: Estate, source_name: str, target_name: str, endpoint_map: Mapping[str, str] | None = None
) -> Plan:
    """The plan; a subscription's Endpoint named in `endpoint_map` (OLD -> NEW, as compared) is made with NEW."""
    alibaba_target = is_alibaba(target_name)
    changes: list[Change] = []
    skipped_topics: set[str] = set()
    for resource in sorted(source.resources.values(), key=lambda r: (ORDER[r.kind], r.name)):
        wanted, not_carried, whole = _carried(mapped(resource, endpoint_map or {}), alibaba_target, skipped_topics)
        if whole:
            if resource.kind == TOPIC:
                skipped_topics.add(resource.name)
            changes.append(Change(NOT_CARRIED, resource.kind, resource.name, reason=whole))
            continue
        changes.append(_compare(wanted, target.resources.get(resource.key), not_carried))
    for key, resource in sorted(target.resources.items(), key=lambda item: (ORDER[item[0][0]], item[0][1])):
        if key not in source.resources:
            changes.append(Change(TARGET_ONLY, resource.kind, resource.name))
    return Plan(source_name, target_name, changes)


def _compare(wanted: Resource, found: Resource | None, not_carried: list[tuple[str, str]]) -> Change:
    if found is None:
        return Change(CREATE, wanted.kind, wanted.name, wanted, tags_added=dict(wanted.tags), not_carried=not_carried)
    differences = [
        (name, found.settings.get(name), value)
        for name, value in wanted.settings.items()
        if found.settings.get(name) != value
    ]
    added = {k: v for k, v in wanted.tags.items() if found.tags.get(k) != v}
    removed = sorted(k for k in found.tags if k not in wanted.tags)
    fixed = [d for d in differences if d[0] in FIXED[wanted.kind]]
    change = Change(UNCHANGED, wanted.kind, wanted.name, wanted, differences, added, removed, not_carried)
    if fixed:
        setting, there, here = fixed[0]
        change.action = CONFLICT
        change.reason = (
            f"{setting} is {there!r} on the target and {here!r} on the source, and cannot change once made: "
            f"delete the target's {wanted.kind} and run apply again"
        )
    elif differences or added or removed:
        change.action = UPDATE
    return change
