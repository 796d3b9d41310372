"""Models and the wire: records to items and back, conditions and updates to expression strings with their maps.

PynamoDB serialises a model (`Model.serialize`) and reads an item (`Model.from_raw_data`); what it cannot say is
said here once (docs/storage-models.md): an attribute the record holds as None is written as DynamoDB's NULL (as
the items written before have it: PynamoDB leaves a None out), and a TTL attribute is an integer of epoch seconds
in the records (PynamoDB's is a datetime).
"""

from __future__ import annotations

import calendar
import dataclasses
from datetime import UTC, datetime
from typing import Any

from pynamodb.attributes import Attribute, BooleanAttribute, NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.constants import NUMBER
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Value
from pynamodb.expressions.projection import create_projection_expression
from pynamodb.expressions.update import Action, Update
from pynamodb.models import Model

Item = dict[str, Any]  # an item in DynamoDB JSON ({"S": ...}, {"N": ...}, ...)
Record = dict[str, Any]  # an item's attributes by name, as Python values
NULL: Item = {"NULL": True}


class KeyedItem(Model):
    """The key every table of the engine has: `pk` (partition) and `sk` (sort), both text."""

    class Meta:
        table_name = "items"  # (the models are not bound to a table: the engine's client makes the calls)

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)


class Expiry(TTLAttribute):
    """The TTL attribute, given and read as epoch seconds (PynamoDB's takes a datetime or a timedelta)."""

    def _normalize(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, tz=UTC)
        return super()._normalize(value)


# A dataclass field's annotation -> the attribute that stores it.
_TYPED: dict[str, tuple[type[Attribute[Any]], bool]] = {
    "int": (NumberAttribute, False),
    "str": (UnicodeAttribute, False),
    "bool": (BooleanAttribute, False),
    "int | None": (NumberAttribute, True),
    "str | None": (UnicodeAttribute, True),
    "bool | None": (BooleanAttribute, True),
}


def fields_of(entity: type, leave: tuple[str, ...] = ()) -> dict[str, Attribute[Any]]:
    """The attributes storing a dataclass's fields as a record holds them (`dataclasses.asdict`): each under its
    field's name, typed by its annotation (None allowed where the field may be None); but those named in `leave`."""
    found: dict[str, Attribute[Any]] = {}
    for field in dataclasses.fields(entity):
        if field.name not in leave:
            kind, null = _TYPED[str(field.type)]
            found[field.name] = kind(null=null)
    return found


def model(called: str, base: type[Model], doc: str, /, **declared: Attribute[Any]) -> Any:
    """A model made of `base` and the attributes `declared` (of which `fields_of` gives a dataclass's)."""
    return type(called, (base,), {"__doc__": doc, "__module__": base.__module__, **declared})


def _python(value: Any) -> Any:
    if isinstance(value, datetime):  # (an `Expiry`)
        return calendar.timegm(value.utctimetuple())
    return value


def attributes(model: type[Model]) -> dict[str, Attribute[Any]]:
    """A model's attributes by their name on the wire."""
    return {attribute.attr_name: attribute for attribute in model.get_attributes().values()}


def item_of(model: type[Model], record: Record) -> Item:
    """The item storing `record` (every key of it an attribute of `model`, else ValueError): None values as NULL. (A
    record may leave attributes out: the meta table's port stores what it is given; `check` finds a missing one.)"""
    instance = model(**{name: value for name, value in record.items() if value is not None})
    item = instance.serialize(null_check=False)
    for name, value in record.items():
        if value is None:
            item[model.get_attributes()[name].attr_name] = NULL
    return item


def record_of(model: type[Model], item: Item, leave: tuple[str, ...] = ()) -> Record:
    """The attributes an item holds, as `model` reads them (NULL as None), but those named in `leave`."""
    instance = model.from_raw_data(item)
    return {
        name: _python(getattr(instance, name))
        for name, attribute in model.get_attributes().items()
        if attribute.attr_name in item and name not in leave
    }


def read(item: Item, attribute: Attribute[Any], default: Any = None) -> Any:
    """One attribute of an item (any table's: a stream image, a key too) as its model reads it (`default` when the
    item does not hold it, or holds NULL); a TTL in epoch seconds."""
    stored = item.get(attribute.attr_name)
    if stored is None or "NULL" in stored:
        return default
    value = attribute.get_value(stored)
    if attribute.attr_type == NUMBER and value.isdigit():
        return int(value)  # (an integer's text: what a number's `json.loads` and a TTL's seconds give, read cheaper)
    return _python(attribute.deserialize(value))


_KEY = (KeyedItem.pk.attr_name, KeyedItem.sk.attr_name)


def key_in(item: Item) -> Item:
    """The primary key an item of any table holds (`pk`, and `sk` where it has one), as it holds it."""
    return {name: item[name] for name in _KEY if name in item}


def key_of(model: type[Model], hash_key: Any, range_key: Any = None) -> Item:
    """An item's primary key."""
    names = [name for name in (model._hash_keyname, model._range_keyname) if name is not None]
    item = model(**dict(zip(names, (hash_key, range_key), strict=False))).serialize(null_check=False)
    return {name: item[name] for name in names}


class Expression:
    """Conditions, updates and key conditions serialised with one map of names and one of values (the request's)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # attribute name -> placeholder
        self.values: Item = {}

    def condition(self, condition: Condition) -> str:
        return str(condition.serialize(self._names, self.values))

    def update(self, *actions: Action) -> str:
        return str(Update(*actions).serialize(self._names, self.values))

    def projection(self, *read: Attribute[Any]) -> str:
        """The attributes a read returns."""
        return str(create_projection_expression(list(read), self._names))

    def arguments(self) -> Item:
        """The request's ExpressionAttributeNames and ExpressionAttributeValues (those it needs)."""
        found: Item = {}
        if self._names:
            found["ExpressionAttributeNames"] = {placeholder: name for name, placeholder in self._names.items()}
        if self.values:
            found["ExpressionAttributeValues"] = self.values
        return found


def set_value(attribute: Attribute[Any], value: Any) -> Action:
    """SET of one attribute: None as NULL (PynamoDB's own would serialise None through the attribute's type)."""
    return attribute.set(Value(None) if value is None else value)


def equals(attribute: Attribute[Any], value: Any) -> Condition:
    """The attribute holds `value`; None: it is absent."""
    return attribute.does_not_exist() if value is None else attribute == value
