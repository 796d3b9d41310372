"""A refused call over several resources changes none of them: TagResources and UntagResources naming several queues
or topics are checked whole (every one there, every one's tags within their limit) before any is written, on each
engine, as the Terraform provider sends them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.support.terraform import Provider

KINDS = {"queue": ("QueueName", "GetQueueAttributes"), "topic": ("TopicName", "GetTopicAttributes")}


def tags_of(provider: Provider, kind: str, name: str) -> dict[str, str]:
    parameter, action = KINDS[kind]
    data = provider.ok(action, **{parameter: name})["Data"]
    return {t["TagKey"]: t["TagValue"] for t in data["Tags"] or []}


def numbered(prefix: str, values: list[str]) -> dict[str, str]:
    return {f"{prefix}.{n}": value for n, value in enumerate(values, 1)}


def made(provider: Provider, kind: str, tags: dict[str, str]) -> str:
    parameter, _ = KINDS[kind]
    name = f"refused-{uuid.uuid4().hex[:10]}"
    given: dict[str, Any] = {}
    for n, (key, value) in enumerate(tags.items(), 1):
        given.update({f"Tag.{n}.Key": key, f"Tag.{n}.Value": value})
    provider.ok(f"Create{kind.title()}", **{parameter: name}, **given)
    return name


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_refused_tag_resources_tags_none_of_the_resources_it_names(endpoint, kind):
    provider = Provider(endpoint)
    full = {f"k{n}": "v" for n in range(20)}
    first, at_limit = made(provider, kind, {"keep": "1"}), made(provider, kind, full)
    one_more = {"ResourceType": kind, "Tag.1.Key": "new", "Tag.1.Value": "x"}

    status, body = provider.rpc("TagResources", **numbered("ResourceId", [first, at_limit]), **one_more)
    assert (status, body["Code"]) == (400, "InvalidArgument"), body
    status, body = provider.rpc("TagResources", **numbered("ResourceId", [first, "refused-missing"]), **one_more)
    assert status == 404, body
    assert tags_of(provider, kind, first) == {"keep": "1"} and tags_of(provider, kind, at_limit) == full

    status, body = provider.rpc(
        "UntagResources",
        ResourceType=kind,
        **numbered("ResourceId", [first, "refused-missing"]),
        **{"TagKey.1": "keep"},
    )
    assert status == 404, body
    assert tags_of(provider, kind, first) == {"keep": "1"}

    provider.ok("TagResources", **numbered("ResourceId", [first, first]), **one_more)  # a name twice: tagged once
    assert tags_of(provider, kind, first) == {"keep": "1", "new": "x"}
