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
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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
