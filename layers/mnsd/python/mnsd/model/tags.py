"""Resource tags of queues and topics (the OpenAPI's `Tag.N.Key` / `Tag.N.Value`, TagResources, UntagResources).

A resource's tags are kept with its record in the catalog, as one canonical JSON object (`{"key": "value"}`, keys
sorted; "" for none), so both engines keep them as they keep any attribute. The rules are the live service's: at most
`MAX_TAGS` a resource, a key of 1 to 128 characters not starting with `aliyun` or `acs:`, a value of at most 128.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mnsd.ground import errors

MAX_TAGS = 20
MAX_KEY = 128
MAX_VALUE = 128
_RESERVED_PREFIXES = ("aliyun", "acs:")


@dataclass(frozen=True)
class TagChanges:
    """Tags to set (key, value) and keys to remove, as a request gives them."""

    add: tuple[tuple[str, str], ...] = ()
    remove: tuple[str, ...] = ()
    remove_all: bool = False


def tag_map(document: str) -> dict[str, str]:
    """The tags a record keeps (its canonical document)."""
    if not document:
        return {}
    loaded = json.loads(document)
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def tag_document(tags: dict[str, str]) -> str:
    return json.dumps(dict(sorted(tags.items())), separators=(",", ":"), ensure_ascii=False) if tags else ""


def check_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY or key.lower().startswith(_RESERVED_PREFIXES):
        raise errors.InvalidArgument(
            f"The tag key {key!r} is invalid: 1 to {MAX_KEY} characters, not starting with aliyun or acs:."
        )
    return key


def check_value(value: str) -> str:
    if len(value) > MAX_VALUE:
        raise errors.InvalidArgument(f"The tag value of at most {MAX_VALUE} characters is too long.")
    return value


def applied(document: str, changes: TagChanges) -> str:
    """The document after `changes` (removals first, then additions), its rules checked."""
    tags = {} if changes.remove_all else tag_map(document)
    for key in changes.remove:
        tags.pop(key, None)
    for key, value in changes.add:
        tags[check_key(key)] = check_value(value)
    if len(tags) > MAX_TAGS:
        raise errors.InvalidArgument(f"A resource has at most {MAX_TAGS} tags.")
    return tag_document(tags)


def has_tags(document: str, wanted: dict[str, str]) -> bool:
    """Whether a record's tags include every wanted one (a filter of ListQueue and ListTopic)."""
    tags = tag_map(document)
    return all(tags.get(key) == value for key, value in wanted.items())
