"""What the tests of a message's history share: its answer's events read, and the life they drive a message through
(sent, received, given back, received again, deleted with rewind on, rewound, dead-lettered) as the history tells it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

NS = "{http://mns.aliyuncs.com/doc/v1}"
# The kinds of the life's events, in order.
LIFE = ["send", "receive", "change_visibility", "receive", "delete", "rewind", "dead_letter"]


def events(body: bytes) -> list[dict[str, str]]:
    """The `Event`s of a `MessageHistory` answer, each as {element: text}."""
    return [
        {child.tag[len(NS) :]: child.text or "" for child in event} for event in ET.fromstring(body).iter(NS + "Event")
    ]


def life(sender: str, receiver: str) -> list[tuple[str, str | None, str]]:
    """(kind, access key, dequeue count) of each event of the life: the key is told of sends, receives and visibility
    changes only."""
    keys = [sender, receiver, receiver, receiver, None, None, None]
    counts = ["0", "1", "1", "2", "2", "2", "2"]
    return list(zip(LIFE, keys, counts, strict=True))


def told(found: list[dict[str, str]]) -> list[tuple[str, str | None, str]]:
    """(kind, access key, dequeue count) of each event found."""
    return [(e["Kind"], e.get("AccessKeyId"), e["DequeueCount"]) for e in found]
