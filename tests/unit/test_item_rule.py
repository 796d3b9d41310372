"""The items rule: no module of the layer outside the DynamoDB engine's items room (`mnsd/storage/dynamodb/items/`)
builds an attribute's type descriptor or an expression for DynamoDB. Items are declared, serialised and turned into
expressions by their models there (docs/storage-models.md); elsewhere a module names model attributes and hands
the room's requests to its client.

What counts as building one, in a module's code (its docstrings aside):
- a type descriptor: a dict literal keyed by one of DynamoDB's types (`{"S": ...}`, `{"N": ...}`), or one read by
  it (`item["S"]`, `value.get("N")`);
- an expression argument given in place: `UpdateExpression=`, `ConditionExpression=`, `KeyConditionExpression=`,
  `FilterExpression=`, `ProjectionExpression=`, `ExpressionAttributeNames=`, `ExpressionAttributeValues=` (as a
  keyword or a request's key) whose value is anything but a name or what the items room's `Expression` serialised
  (`.condition(...)`, `.update(...)`, `.projection(...)`);
- an expression string: a literal (or an f-string's text) with a DynamoDB function (`attribute_exists(`,
  `if_not_exists(`, `begins_with(`, ...), an update clause (`SET x`, `REMOVE x`), or a comparison with a
  placeholder (`#n = :v`, `x <= :now`).

The modules not converted yet are allowed, each by name, and the allowance shrinks as they are: it fails when a
module builds one that is not allowed, and when an allowed one no longer does (take it off).

Nor does a module outside the room name an item's attribute itself (`names_found`): it reads an item through its
model (`read(image, LeaseItem.v)`, the room's readers). The names are those the room's models declare (each
attribute's `attr_name`: `v`, `t3`, `pk`, `queue_id`, ...), and naming one is, in a module's code:
- using one of the room's constants that is a name (`layout.MOVED_ATTRIBUTE`, `PARTITION_KEY`), wherever it is used
  (a collection of names, `placement.FIELDS`, picks a record's fields: not an item's);
- making one at run time: an f-string, a `str.format` or `%` template or a concatenation that spells a name with its
  fields read as numbers (the names made at run time are numbered: `f"t{n}"`, `"v{}".format(n)`, `"r" + str(n)`);
- handing one, as a literal, to a function of the room (`images.number(image, "e")`);
- looking one up, as a literal (`image["v"]`, `image.get("v")`, `"y" in image`), in an item: a value the same function
  hands to the room's functions, or an item of DynamoDB's answers and stream records (`NewImage`, `OldImage`, `Item`,
  `Items`, `Key`, `Attributes`, ...) or a name bound from one. A record (a model's reading of an item, by its
  attributes' names, which the model checks: `record_of`) is no item: looking its fields up is not naming one.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pynamodb.models import Model

import mnsd.storage.dynamodb.items as items_room

LAYER = Path(__file__).resolve().parents[2] / "layers" / "mnsd" / "python"
ITEMS = Path("mnsd/storage/dynamodb/items")

# Modules still building them, each until its items are models.
ALLOWED = {
    # Not an item's writer: DynamoDB's size of any item, by each attribute's type (what a write is billed).
    "mnsd/storage/capacity.py",
}

TYPES = {"S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"}
ARGUMENTS = {
    "UpdateExpression",
    "ConditionExpression",
    "KeyConditionExpression",
    "FilterExpression",
    "ProjectionExpression",
    "ExpressionAttributeNames",
    "ExpressionAttributeValues",
}
SERIALISED = {"condition", "update", "projection"}  # `items.wire.Expression`'s
EXPRESSION = re.compile(
    r"\b(attribute_exists|attribute_not_exists|attribute_type|if_not_exists|begins_with|list_append|size)\("
    r"|^\s*SET\s+[#\w.\[\]]+\s*="
    r"|^\s*REMOVE\s+[#\w]+\s*(,|$|\s(SET|ADD|DELETE)\b)"
    r"|^\s*(ADD|DELETE)\s+[#\w]+\s+:"
    r"|(=|<>|<=|>=|<|>)\s*:\w"
    r"|\bBETWEEN\s+:\w"
)
FIELD = "x"  # what an f-string's replacement field reads as (`f"SET {name} = :v"`: "SET x = :v")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _given_in_place(value: ast.expr) -> bool:
    """An expression argument not passed on as a name or as the items room's serialisation."""
    if isinstance(value, ast.Name):
        return False
    serialised = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SERIALISED
    return not serialised


def _constant(node: ast.expr | None, among: set[str]) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in among else None


def _dict(node: ast.Dict) -> list[str]:
    found = []
    for key, value in zip(node.keys, node.values, strict=True):
        if (kind := _constant(key, TYPES)) is not None:
            found.append(f"type descriptor {kind!r}")
        if (argument := _constant(key, ARGUMENTS)) is not None and _given_in_place(value):
            found.append(f"{argument} given in place")
    return found


def _call(node: ast.Call) -> list[str]:
    found = []
    if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        if (kind := _constant(node.args[0], TYPES)) is not None:
            found.append(f"type descriptor {kind!r} read")
    return found + [
        f"{keyword.arg}= given in place"
        for keyword in node.keywords
        if keyword.arg in ARGUMENTS and _given_in_place(keyword.value)
    ]


def _text(node: ast.AST, left: set[int]) -> str | None:
    """A string's text (an f-string's with each field as `FIELD`), None for any other node and those `left`."""
    if isinstance(node, ast.JoinedStr):
        return "".join(str(part.value) if isinstance(part, ast.Constant) else FIELD for part in node.values)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in left:
        return node.value
    return None


def findings(source: str) -> list[str]:
    """What a module's code builds for DynamoDB (line: what)."""
    tree = ast.parse(source)
    parts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    left = _docstrings(tree) | parts
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Dict):
            found += [f"{line}: {what}" for what in _dict(node)]
        elif isinstance(node, ast.Subscript) and (kind := _constant(node.slice, TYPES)) is not None:
            found.append(f"{line}: type descriptor {kind!r} read")
        elif isinstance(node, ast.Call):
            found += [f"{line}: {what}" for what in _call(node)]
        elif (text := _text(node, left)) is not None and EXPRESSION.search(text):
            found.append(f"{line}: expression string {text[:40]!r}")
    return sorted(set(found), key=lambda f: int(f.split(":")[0]))


def _modules() -> dict[str, list[str]]:
    """What each module of the layer outside the items room builds (those that build nothing left out)."""
    built = {}
    for path in sorted(LAYER.rglob("*.py")):
        relative = path.relative_to(LAYER)
        if relative.is_relative_to(ITEMS):
            continue
        found = findings(path.read_text())
        if found:
            built[relative.as_posix()] = found
    return built


def test_no_module_outside_the_items_room_builds_a_type_descriptor_or_an_expression_but_those_allowed() -> None:
    built = _modules()
    assert {module: found for module, found in built.items() if module not in ALLOWED} == {}
    assert sorted(ALLOWED - set(built)) == [], "no longer building any: take them off ALLOWED"


@pytest.mark.parametrize(
    "code",
    [
        'item = {"pk": {"S": key}}',
        'n = int(item["n"]["N"])',
        'flag = value.get("BOOL")',
        'client.update_item(Key=key, UpdateExpression="SET n = n + :one")',
        'client.query(KeyConditionExpression=f"pk = :p AND {condition}")',
        'request = {"ExpressionAttributeValues": {":one": one}}',
        "client.put_item(Item=item, ConditionExpression=' AND '.join(held))",
        'condition = "attribute_not_exists(pk)"',
        'update = f"SET {name} = :held"',
        'gone = "REMOVE o, h"',
        'held = f"c = :c AND x > :now_s"',
        'span = "sk BETWEEN :g AND :s"',
    ],
)
def test_the_rule_finds_a_descriptor_an_expression_argument_or_an_expression_string(code: str) -> None:
    assert findings(code) != []


@pytest.mark.parametrize(
    "code",
    [
        '"""SET n = :n, attribute_exists(n): said in a docstring."""',
        "client.update_item(Key=key, UpdateExpression=expression.update(*actions), **expression.arguments())",
        "client.query(KeyConditionExpression=condition, Limit=10)",
        'request = {"KeyConditionExpression": read.condition(keys)}',
        "client.update_item(**update_request(table, key, [GroupItem.q.set(GroupItem.q - 1)], GroupItem.q.exists()))",
        'raise ValueError(f"no attribute {name} in the records of {scope!r}")',
        'sql = "UPDATE messages SET visible_at = ? WHERE id = ?"',
        'connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER")',
        'reason = "a group held (c = 2) until its run is deleted"',
    ],
)
def test_the_rule_leaves_model_expressions_docstrings_and_prose(code: str) -> None:
    assert findings(code) == []


# --- naming an item's attribute ---------------------------------------------------------------------

ROOM = items_room.__name__
# Where DynamoDB's answers and stream records hold items (`Items`: a list of them).
ENVELOPES = {
    "NewImage",
    "OldImage",
    "Item",
    "Items",
    "Key",
    "Keys",
    "Attributes",
    "LastEvaluatedKey",
    "ExclusiveStartKey",
}
LOOKUPS = {"get", "pop", "setdefault"}


def _room() -> dict[str, ModuleType]:
    return {
        f"{ROOM}.{info.name}": importlib.import_module(f"{ROOM}.{info.name}")
        for info in pkgutil.iter_modules(items_room.__path__)
    }


def _names(room: dict[str, ModuleType]) -> frozenset[str]:
    """Every attribute name the room's models declare (their `attr_name`s)."""
    models = {
        value
        for module in room.values()
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Model) and value.__module__.startswith(ROOM)
    }
    return frozenset(attribute.attr_name for model in models for attribute in model.get_attributes().values())


ROOM_MODULES = _room()
NAMES = _names(ROOM_MODULES)


class _Imports:
    """What a module takes from the room: its modules (by local name) and its objects (by local name)."""

    def __init__(self, tree: ast.Module) -> None:
        self.modules: dict[str, ModuleType] = {}
        self.objects: dict[str, Any] = {}
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):  # (an import inside a function too: the stream functions import lazily)
            if isinstance(node, ast.ImportFrom) and node.module is not None and node.module.startswith(ROOM):
                for alias in node.names:
                    local = alias.asname or alias.name
                    if f"{node.module}.{alias.name}" in ROOM_MODULES:
                        self.modules[local] = ROOM_MODULES[f"{node.module}.{alias.name}"]
                    elif node.module in ROOM_MODULES and hasattr(ROOM_MODULES[node.module], alias.name):
                        self.objects[local] = getattr(ROOM_MODULES[node.module], alias.name)
            elif id(node) in top and isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                found = self.resolve(node.value)  # (`_number = images.number`)
                if found is not None:
                    self.objects[node.targets[0].id] = found[1]

    def resolve(self, node: ast.expr) -> tuple[str, Any] | None:
        """The room's object an expression names (`layout.MOVED_ATTRIBUTE`, an imported `read`), with its spelling."""
        if isinstance(node, ast.Name) and node.id in self.objects:
            return node.id, self.objects[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.modules:
            module = self.modules[node.value.id]
            if hasattr(module, node.attr):
                return f"{node.value.id}.{node.attr}", getattr(module, node.attr)
        return None


def _template(parts: list[str | None]) -> re.Pattern[str] | None:
    """A name made of literal text and fields (None: a field), when it has both: each field read as a number (the names
    made at run time are numbered: a pack's entry n's `t{n}`)."""
    if not any(parts) or None not in parts:
        return None
    return re.compile("".join(r"\d+" if part is None else re.escape(part) for part in parts))


def _made(node: ast.AST, specs: set[int]) -> re.Pattern[str] | None:
    """What an f-string, a format or a concatenation makes, as a pattern of its text."""
    if isinstance(node, ast.JoinedStr) and id(node) not in specs:
        return _template([str(p.value) if isinstance(p, ast.Constant) else None for p in node.values])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        if isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
            pieces = re.split(r"(\{[^{}]*\})", node.func.value.value)
            return _template([None if piece.startswith("{") else piece for piece in pieces if piece])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            pieces = re.split(r"(%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z])", node.left.value)
            return _template([None if piece.startswith("%") else piece for piece in pieces if piece])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        sides = [
            side.value if isinstance(side, ast.Constant) and isinstance(side.value, str) else None
            for side in (node.left, node.right)
        ]
        return _template(sides)
    return None


def _lookup(node: ast.AST) -> tuple[ast.expr, str] | None:
    """A literal key looked up in a value: `value["k"]`, `value.get("k")`, `"k" in value`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.value, node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOOKUPS and node.args:
        key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return node.func.value, key.value
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
        if isinstance(node.ops[0], ast.In | ast.NotIn):
            return node.comparators[0], node.left.value
    return None


def _from_envelope(node: ast.expr) -> bool:
    """An item of DynamoDB's answers or stream records: `change["NewImage"]`, `response.get("Items")[0]`."""
    found = _lookup(node)
    if found is not None and found[1] in ENVELOPES:
        return True
    return isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant) and _from_envelope(node.value)


def _bound(target: ast.expr, value: ast.expr) -> Iterator[str]:
    """The names an assignment binds to (a part of) a value taken from DynamoDB's answers or stream records."""
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        for each, given in zip(target.elts, value.elts, strict=True):
            yield from _bound(each, given)
    elif any(isinstance(part, ast.expr) and _from_envelope(part) for part in ast.walk(value)):
        yield from (name.id for name in ast.walk(target) if isinstance(name, ast.Name))


def _items_in(scope: ast.AST, imports: _Imports) -> set[str]:
    """The values a function (or a module's top) treats as items, each as its code spells it (`_plain`)."""
    found: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and imports.resolve(node.func) is not None:
            found |= {_plain(arg) for arg in [*node.args, *(k.value for k in node.keywords)]}
        elif isinstance(node, ast.Assign):
            found |= {_plain(ast.Name(id=name)) for target in node.targets for name in _bound(target, node.value)}
        elif isinstance(node, ast.For | ast.comprehension):
            found |= {_plain(ast.Name(id=name)) for name in _bound(node.target, node.iter)}
    return found


def _plain(node: ast.expr) -> str:
    """An expression as `ast.dump` spells it, its names' contexts dropped (a name read is the name bound)."""
    return ast.dump(node).replace(", ctx=Load()", "").replace(", ctx=Store()", "")


def _named_in_place(node: ast.AST, imports: _Imports, specs: set[int]) -> list[str]:
    """What one node names: one of the room's names, a name made at run time, a name handed to the room."""
    found = []
    if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
        named = imports.resolve(node)
        if named is not None and isinstance(named[1], str) and named[1] in NAMES:
            found.append(f"the room's name {named[0]} ({named[1]!r})")
    if (made := _made(node, specs)) is not None and any(made.fullmatch(name) for name in NAMES):
        found.append(f"a name made at run time ({made.pattern!r})")
    if isinstance(node, ast.Call) and imports.resolve(node.func) is not None:
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Constant) and arg.value in NAMES:
                found.append(f"the name {arg.value!r} handed to the room")
    return found


def _looked_up(scope: ast.AST, imports: _Imports) -> Iterator[str]:
    """The names a function (or a module's top) looks up in its items."""
    items = _items_in(scope, imports)
    for node in ast.walk(scope):
        looked = _lookup(node)
        if looked is not None and looked[1] in NAMES and (_plain(looked[0]) in items or _from_envelope(looked[0])):
            yield f"{getattr(node, 'lineno', 0)}: the name {looked[1]!r} looked up in an item"


def names_found(source: str) -> list[str]:
    """Where a module's code names an item's attribute itself (line: what)."""
    tree = ast.parse(source)
    imports = _Imports(tree)
    specs = {id(n.format_spec) for n in ast.walk(tree) if isinstance(n, ast.FormattedValue) and n.format_spec}
    found = {
        f"{getattr(node, 'lineno', 0)}: {what}"
        for node in ast.walk(tree)
        for what in _named_in_place(node, imports, specs)
    }
    if imports.modules or imports.objects or any(envelope in source for envelope in ENVELOPES):  # (it may hold items)
        scopes = [
            tree,
            *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)),
        ]
        found |= {what for scope in scopes for what in _looked_up(scope, imports)}
    return sorted(found, key=lambda f: int(f.split(":")[0]))


def _named() -> dict[str, list[str]]:
    """Where each module of the layer outside the items room names an item's attribute (those that name none left
    out)."""
    named = {}
    for path in sorted(LAYER.rglob("*.py")):
        relative = path.relative_to(LAYER)
        if not relative.is_relative_to(ITEMS) and (found := names_found(path.read_text())):
            named[relative.as_posix()] = found
    return named


def test_no_module_outside_the_items_room_names_an_items_attribute() -> None:
    assert _named() == {}


def test_the_names_are_the_models() -> None:
    assert {"pk", "sk", "v", "r", "d", "f", "t", "l", "y0", "t15", "queue_id", "stripes"} <= NAMES
    assert {"NewImage", "dynamodb", "eventName", "S", "N"}.isdisjoint(NAMES)


_READERS = """
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.items.layout import PARTITION_KEY
from mnsd.storage.dynamodb.items.leases import read
"""


@pytest.mark.parametrize(
    "code",
    [
        "if layout.MOVED_ATTRIBUTE in old: pass",
        "key = {PARTITION_KEY: item[PARTITION_KEY]}",
        "key = {layout.PARTITION_KEY: partition}",
        'moved = f"t{n}"',
        'moved = "t{}".format(n)',
        'moved = "t%d" % n',
        'moved = "v" + str(n)',
        'count = layout.read(image, "d")',
        'count = read(image, "d")',
        'def size(image):\n    return image["y"] if layout.body_of(image) is None else 0',
        'def logged(image):\n    return "l" in image and layout.is_lease(image)',
        'def enqueued(record):\n    return record["dynamodb"]["NewImage"]["e"]',
        'def moved(change):\n    new = change.get("NewImage") or {}\n    return new.get("t")',
        'def first(response):\n    return [item["sk"] for item in response["Items"]]',
        'def lazily(image):\n    from mnsd.storage.dynamodb.items.leases import read\n    return read(image, "v")',
    ],
)
def test_the_rule_finds_an_attribute_named(code: str) -> None:
    assert names_found(_READERS + code) != []


@pytest.mark.parametrize(
    "code",
    [
        "count = read(image, LeaseItem.d)",
        "moved = layout.is_moved(new)",
        'def of(item):\n    record = record_of(TopicMessageItem, item)\n    return record["a"], record.get("ml")',
        'change = record["dynamodb"]\nname = record["eventName"]',
        'def events(record):\n    return {"queue_id": record.queue_id, "time": 1}',
        'stem = f"{queue_id}#{stripe}"',
        'label = f"queue {name}"',
        'def stripes(record):\n    return int(record.get("stripes", 1))',
    ],
)
def test_the_rule_leaves_models_records_and_the_streams_envelope(code: str) -> None:
    assert names_found(_READERS + code) == []
