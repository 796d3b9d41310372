"""An item's attributes read where no model reads it whole: a stream image of the message table (whose leases, packs
and bodies `changes` reads attribute by attribute), a key's text. Each by its DynamoDB type, here once."""

from __future__ import annotations

from typing import Any

Item = dict[str, Any]  # an item in DynamoDB JSON
# DynamoDB's type descriptors (PynamoDB's `constants`; not imported: a function reading a stream loads no model).
STRING, NUMBER = "S", "N"


def text(item: Item, name: str) -> str | None:
    """A text attribute's value (None: the item has none)."""
    return str(item[name][STRING]) if name in item else None


def number(item: Item, name: str) -> int | None:
    """A number attribute's value, an integer (None: the item has none)."""
    return int(item[name][NUMBER]) if name in item else None


def key_text(item: Item, name: str) -> str:
    """A text attribute the item has (a key, a mark it was read for)."""
    return str(item[name][STRING])
