"""`apply`: the plan's creations and changes made on the target through Mns-open. Each step is read back from the
target's own state on the next run (`plan` is computed afresh), so a run stopped half-way is finished by running it
again; a queue's dead-letter policy is set after every queue exists (its target queue may be created later)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from migrate.estate import QUEUE, QUEUE_NUMBERS, SUBSCRIPTION, TOPIC, Resource
from migrate.planning import AWS_TARGET, CONFLICT, CREATE, UPDATE, Change, Plan
from mnsclient.errors import ServiceError
from mnsclient.openapi import OpenApiClient
from mnsclient.retrying import retrying

RETRY_SECONDS = 30.0


@dataclass
class Applied:
    done: list[Change] = field(default_factory=list)
    failed: list[tuple[Change, ServiceError]] = field(default_factory=list)
    conflicts: list[Change] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.conflicts


def _tag_params(tags: dict[str, str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for number, (key, value) in enumerate(sorted(tags.items()), 1):
        params[f"Tag.{number}.Key"], params[f"Tag.{number}.Value"] = key, value
    return params


def _params(resource: Resource, numbers: dict[str, Any]) -> dict[str, Any]:
    """The parameters CreateQueue / SetQueueAttributes or CreateTopic / SetTopicAttributes take for `resource`:
    its name, `numbers`, logging, and encryption when it is on."""
    noun = resource.kind.title()
    params = {f"{noun}Name": resource.name, **numbers, "EnableLogging": resource.settings["LoggingEnabled"]}
    if resource.settings.get("EnableSSE"):
        params["EnableSSE"] = True
    return params


def _queue_params(queue: Resource) -> dict[str, Any]:
    s = queue.settings
    params = _params(queue, {n: s[n] for n in QUEUE_NUMBERS})
    if s.get("MaxReceivesPerSecond"):
        params["TenantRateLimitPolicy"] = {"Enabled": True, "MaxReceivesPerSecond": s["MaxReceivesPerSecond"]}
    return params


def _topic_params(topic: Resource) -> dict[str, Any]:
    return _params(topic, {"MaxMessageSize": topic.settings["MaxMessageSize"]})


def _push(endpoint: str) -> tuple[str, str]:
    """(PushType, Endpoint) of Mns-open's Subscribe for an endpoint as compared (`queue:orders`: the target's own
    queue `orders`, in its account and region; a Lambda function's or EventBridge bus's ARN as `fc` or `eventbus`)."""
    for kind in ("queue", "email", "alisms"):
        if endpoint.startswith(kind + ":"):
            return kind, endpoint[len(kind) + 1 :]
    if found := AWS_TARGET.match(endpoint):
        return ("fc" if found[2].startswith("lambda:") else "eventbus"), endpoint
    return "http", endpoint


def _subscription_names(name: str) -> dict[str, str]:
    topic, subscription = name.split("/", 1)
    return {"TopicName": topic, "SubscriptionName": subscription}


def _dlq_param(policy: dict[str, Any] | None) -> dict[str, Any]:
    return {"Enabled": True, **policy} if policy else {"Enabled": False}


class Applier:
    def __init__(self, api: OpenApiClient, retry_seconds: float = RETRY_SECONDS) -> None:
        self.api = api
        self.retry_seconds = retry_seconds

    def _call(self, action: str, params: dict[str, Any]) -> None:
        retrying(lambda: self.api.call(action, params), self.retry_seconds)

    def _retag(self, kind: str, name: str, added: dict[str, str], removed: list[str]) -> None:
        if removed:
            keys = {f"TagKey.{n}": key for n, key in enumerate(removed, 1)}
            self._call("UntagResources", {"ResourceType": kind, "ResourceId.1": name, **keys})
        if added:
            self._call("TagResources", {"ResourceType": kind, "ResourceId.1": name, **_tag_params(added)})

    def _queue(self, change: Change, wanted: Resource) -> None:
        params = _queue_params(wanted)
        if change.action == CREATE:
            if wanted.settings["QueueType"] != "normal":
                params["QueueType"] = wanted.settings["QueueType"]
            self._call("CreateQueue", {**params, **_tag_params(wanted.tags)})
        else:
            if any(name != "DlqPolicy" for name, _, _ in change.differences):
                self._call("SetQueueAttributes", params)
            self._retag(QUEUE, wanted.name, change.tags_added, change.tags_removed)

    def _dead_letters(self, change: Change, wanted: Resource) -> None:
        policy = wanted.settings.get("DlqPolicy")
        if change.action == CREATE and policy is None:
            return
        if change.action == UPDATE and not any(name == "DlqPolicy" for name, _, _ in change.differences):
            return
        self._call("SetQueueAttributes", {"QueueName": wanted.name, "DlqPolicy": _dlq_param(policy)})

    def _topic(self, change: Change, wanted: Resource) -> None:
        if change.action == CREATE:
            self._call("CreateTopic", {**_topic_params(wanted), **_tag_params(wanted.tags)})
        else:
            if change.differences:
                self._call("SetTopicAttributes", _topic_params(wanted))
            self._retag(TOPIC, wanted.name, change.tags_added, change.tags_removed)

    def _subscription(self, change: Change, wanted: Resource) -> None:
        s = wanted.settings
        params: dict[str, Any] = {**_subscription_names(wanted.name), "NotifyStrategy": s["NotifyStrategy"]}
        if s.get("DlqPolicy") or change.action == UPDATE:
            params["DlqPolicy"] = _dlq_param(s.get("DlqPolicy"))
        if change.action == UPDATE:
            self._call("SetSubscriptionAttributes", params)
            return
        push_type, endpoint = _push(s["Endpoint"])
        params.update(PushType=push_type, Endpoint=endpoint, NotifyContentFormat=s["NotifyContentFormat"])
        if s["FilterTag"]:
            params["MessageTag"] = s["FilterTag"]
        self._call("Subscribe", params)

    def apply(self, plan: Plan, progress: Callable[[Change, ServiceError | None], None] | None = None) -> Applied:
        applied = Applied(conflicts=[c for c in plan.changes if c.action == CONFLICT])
        todo = [c for c in plan.changes if c.changes_anything and c.wanted is not None]
        steps: list[tuple[Change, Callable[[Change, Resource], None]]] = []
        steps += [(c, self._queue) for c in todo if c.kind == QUEUE]
        steps += [(c, self._dead_letters) for c in todo if c.kind == QUEUE]
        steps += [(c, self._topic) for c in todo if c.kind == TOPIC]
        steps += [(c, self._subscription) for c in todo if c.kind == SUBSCRIPTION]
        broken: set[tuple[str, str]] = set()
        for change, step in steps:
            if (change.kind, change.name) in broken:
                continue
            assert change.wanted is not None
            try:
                step(change, change.wanted)
            except ServiceError as error:
                broken.add((change.kind, change.name))
                applied.failed.append((change, error))
                if progress is not None:
                    progress(change, error)
                continue
            if step != self._dead_letters:
                applied.done.append(change)
                if progress is not None:
                    progress(change, None)
        applied.done = [c for c in applied.done if (c.kind, c.name) not in broken]
        return applied
