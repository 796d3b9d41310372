"""Whether an item is what its model declares: every attribute a declared one, of its declared DynamoDB type (NULL
only where it may be None), none required missing; a queue's receivers each a `ReceiverMap`, a topic message's
user properties each a [name, value, type] list of text."""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import Attribute
from pynamodb.models import Model

from mnsd.storage.dynamodb.items.meta import QueueItem, ReceiverMap, model_of
from mnsd.storage.dynamodb.items.topic import TopicMessageItem
from mnsd.storage.dynamodb.items.wire import Item, attributes


def _value_problems(where: str, attribute: Attribute[Any], value: Item) -> list[str]:
    (kind,) = value
    if kind == "NULL":
        return [] if attribute.null else [f"{where}: NULL where a value is required"]
    if kind != attribute.attr_type:
        return [f"{where}: {kind} where the model has {attribute.attr_type}"]
    return []


def _fields_problems(where: str, declared: dict[str, Attribute[Any]], item: Item) -> list[str]:
    found = [f"{where}.{name}: no such attribute" for name in item if name not in declared]
    found += [f"{where}.{name}: missing" for name, a in declared.items() if not a.null and name not in item]
    for name, value in item.items():
        if name in declared:
            found += _value_problems(f"{where}.{name}", declared[name], value)
    return found


def _receivers(value: Item) -> list[str]:
    declared = {a.attr_name: a for a in ReceiverMap.get_attributes().values()}
    found: list[str] = []
    for n, entry in enumerate(value.get("L", [])):
        if "M" not in entry:
            found.append(f"receivers[{n}]: not a map")
        else:
            found += _fields_problems(f"receivers[{n}]", declared, entry["M"])
    return found


def _properties(value: Item) -> list[str]:
    entries = value.get("L", [])
    good = all(len(e.get("L", ())) == 3 and all("S" in part for part in e["L"]) for e in entries)
    return [] if good else ["u: not [name, value, type] lists of text"]


def problems(model: type[Model], item: Item) -> list[str]:
    """What in `item` its model does not declare (nothing: it is one of the model's items)."""
    found = _fields_problems(model.__name__, attributes(model), item)
    if model is QueueItem and "L" in item.get("receivers", {}):
        found += _receivers(item["receivers"])
    if model is TopicMessageItem and "L" in item.get("u", {}):
        found += _properties(item["u"])
    return found


def meta_problems(item: Item) -> list[str]:
    """`problems` of a meta table's item, by the model of its scope."""
    return problems(model_of(item["pk"]["S"]), item)
