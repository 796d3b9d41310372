"""DynamoDB expressions (condition, filter, key condition, update, projection), parsed once and compiled to closures.

Used by the DynamoDB simulator (`tests/support/simulator/dynamodb.py`). Values are DynamoDB JSON
(`{"S": ...}`, `{"N": ...}`, ...), as the low-level boto3 client speaks them. Semantics follow the
DynamoDB developer guide: a comparison with a missing attribute is false (`<>` true), comparisons
across types are false (`<>` true), `+`/`-` take numbers only, an update's right-hand sides read the
item as it was before the update, every `#name` and `:value` must be defined and every one given used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any

Value = dict[str, Any]  # one DynamoDB JSON value
Item = dict[str, Value]

_TOKEN = re.compile(
    r"\s*(?:(?P<name>#[A-Za-z0-9_]+)|(?P<value>:[A-Za-z0-9_]+)|(?P<num>\d+)"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<op><>|<=|>=|[=<>(),.\[\]+-]))"
)
_KEYWORDS = {"AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE"}
_COMPARATORS = {"=", "<>", "<", "<=", ">", ">="}


class ExpressionError(ValueError):
    """An invalid expression or a value it cannot apply to (DynamoDB's ValidationException)."""


@dataclass
class Context:
    names: dict[str, str]
    values: dict[str, Value]


def number(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:
        return Decimal(text)


def number_text(n: int | Decimal) -> str:
    if isinstance(n, Decimal):
        if n == n.to_integral_value():
            return str(int(n))
        return format(n.normalize(), "f")
    return str(n)


def scalar(value: Value) -> tuple[str, Any]:
    """A comparable form of a key-type value: (type, python value)."""
    ((kind, inner),) = value.items()
    if kind == "N":
        return kind, number(inner)
    return kind, inner


# --- tokens and parsing ----------------------------------------------------------------------------


@dataclass
class _Tokens:
    items: list[tuple[str, str]]
    pos: int = 0
    names: set[str] = field(default_factory=set)
    values: set[str] = field(default_factory=set)

    def peek(self) -> tuple[str, str]:
        return self.items[self.pos] if self.pos < len(self.items) else ("end", "")

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.pos += 1
        return token

    def keyword(self, word: str) -> bool:
        kind, text = self.peek()
        if kind == "ident" and text.upper() == word:
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> None:
        kind, got = self.take()
        if got != text:
            raise ExpressionError(f"Invalid expression: expected {text!r}, found {got!r}")


def _tokenize(text: str) -> _Tokens:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ExpressionError(f"Invalid expression: syntax error near {text[pos : pos + 10]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    result = _Tokens(tokens)
    result.names = {t for k, t in tokens if k == "name"}
    result.values = {t for k, t in tokens if k == "value"}
    return result


Path = tuple[str | int, ...]  # names (or #placeholders) and list indexes
Operand = Callable[[Item, Context], Value | None]
Condition = Callable[[Item, Context], bool]


def _path(tokens: _Tokens) -> Path:
    kind, text = tokens.take()
    if kind not in ("name", "ident") or (kind == "ident" and text.upper() in _KEYWORDS):
        raise ExpressionError(f"Invalid expression: expected an attribute, found {text!r}")
    parts: list[str | int] = [text]
    while tokens.peek()[1] in (".", "["):
        if tokens.take()[1] == ".":
            kind, text = tokens.take()
            if kind not in ("name", "ident"):
                raise ExpressionError("Invalid expression: bad document path")
            parts.append(text)
        else:
            kind, text = tokens.take()
            if kind != "num":
                raise ExpressionError("Invalid expression: bad list index")
            parts.append(int(text))
            tokens.expect("]")
    return tuple(parts)


def resolve(path: Path, context: Context) -> tuple[str | int, ...]:
    out: list[str | int] = []
    for part in path:
        if isinstance(part, str) and part.startswith("#"):
            if part not in context.names:
                raise ExpressionError(
                    f"An expression attribute name used in the document path is not defined; attribute name: {part}"
                )
            out.append(context.names[part])
        else:
            out.append(part)
    return tuple(out)


def get_path(item: Item, path: tuple[str | int, ...]) -> Value | None:
    value: Value | None = item.get(path[0]) if isinstance(path[0], str) else None
    for part in path[1:]:
        if value is None:
            return None
        if isinstance(part, int):
            inner = value.get("L")
            value = inner[part] if inner is not None and part < len(inner) else None
        else:
            inner_map = value.get("M")
            value = inner_map.get(part) if inner_map is not None else None
    return value


def _path_operand(path: Path) -> Operand:
    first = path[0]
    if len(path) == 1 and isinstance(first, str) and not first.startswith("#"):
        return lambda item, context: item.get(first)
    return lambda item, context: get_path(item, resolve(path, context))


def _value_operand(placeholder: str) -> Operand:
    def operand(item: Item, context: Context) -> Value | None:
        if placeholder not in context.values:
            raise ExpressionError(
                f"An expression attribute value used in expression is not defined; attribute value: {placeholder}"
            )
        return context.values[placeholder]

    return operand


def _size_of(value: Value | None) -> Value | None:
    if value is None:
        return None
    ((kind, inner),) = value.items()
    if kind == "S":
        return {"N": str(len(inner.encode("utf-8")))}
    if kind in ("B", "SS", "NS", "BS", "L", "M"):
        return {"N": str(len(inner))}
    raise ExpressionError("Invalid operand type for size()")


def _operand(tokens: _Tokens) -> Operand:
    kind, text = tokens.peek()
    if kind == "value":
        tokens.take()
        return _value_operand(text)
    if kind == "ident" and text == "size" and tokens.items[tokens.pos + 1 : tokens.pos + 2] == [("op", "(")]:
        tokens.take()
        tokens.expect("(")
        inner = _path_operand(_path(tokens))
        tokens.expect(")")
        return lambda item, context: _size_of(inner(item, context))
    return _path_operand(_path(tokens))


def _compare(op: str, left: Value | None, right: Value | None) -> bool:
    if left is None or right is None:
        return op == "<>"
    if op == "=":
        return _equal(left, right)
    if op == "<>":
        return not _equal(left, right)
    lk, lv = scalar(left)
    rk, rv = scalar(right)
    if lk != rk or lk not in ("S", "N", "B"):
        return False
    if op == "<":
        return bool(lv < rv)
    if op == "<=":
        return bool(lv <= rv)
    if op == ">":
        return bool(lv > rv)
    return bool(lv >= rv)


def _equal(left: Value, right: Value) -> bool:
    ((lk, lv),) = left.items()
    ((rk, rv),) = right.items()
    if lk != rk:
        return False
    if lk == "N":
        return number(lv) == number(rv)
    if lk in ("SS", "BS"):
        return set(lv) == set(rv)
    if lk == "NS":
        return {number(x) for x in lv} == {number(x) for x in rv}
    return bool(lv == rv)


def _begins_with(value: Value | None, prefix: Value | None) -> bool:
    if value is None or prefix is None:
        return False
    ((kind, inner),) = value.items()
    ((pkind, pinner),) = prefix.items()
    return kind == pkind and kind in ("S", "B") and inner.startswith(pinner)


def _contains(value: Value | None, operand: Value | None) -> bool:
    if value is None or operand is None:
        return False
    ((kind, inner),) = value.items()
    ((okind, oinner),) = operand.items()
    if kind == "S" and okind == "S" or kind == "B" and okind == "B":
        return bool(oinner in inner)
    if kind in ("SS", "NS", "BS") and okind == kind[0]:
        return bool(oinner in inner)
    if kind == "L":
        return any(_equal(element, operand) for element in inner)
    return False


def _function(tokens: _Tokens, name: str) -> Condition:
    tokens.expect("(")
    if name in ("attribute_exists", "attribute_not_exists"):
        target = _path_operand(_path(tokens))
        tokens.expect(")")
        if name == "attribute_exists":
            return lambda item, context: target(item, context) is not None
        return lambda item, context: target(item, context) is None
    first = _path_operand(_path(tokens))
    tokens.expect(",")
    second = _operand(tokens)
    tokens.expect(")")
    if name == "begins_with":
        return lambda item, context: _begins_with(first(item, context), second(item, context))
    if name == "contains":
        return lambda item, context: _contains(first(item, context), second(item, context))
    if name == "attribute_type":

        def attribute_type(item: Item, context: Context) -> bool:
            value, wanted = first(item, context), second(item, context)
            return value is not None and wanted is not None and next(iter(value)) == wanted.get("S")

        return attribute_type
    raise ExpressionError(f"Invalid function name; function: {name}")


_FUNCTIONS = {"attribute_exists", "attribute_not_exists", "begins_with", "contains", "attribute_type"}


def _primary(tokens: _Tokens) -> Condition:
    kind, text = tokens.peek()
    if text == "(":
        tokens.take()
        inner = _or(tokens)
        tokens.expect(")")
        return inner
    if kind == "ident" and text in _FUNCTIONS:
        tokens.take()
        return _function(tokens, text)
    left = _operand(tokens)
    if tokens.keyword("BETWEEN"):
        low = _operand(tokens)
        if not tokens.keyword("AND"):
            raise ExpressionError("Invalid expression: BETWEEN needs AND")
        high = _operand(tokens)
        return lambda item, context: (
            _compare(">=", left(item, context), low(item, context))
            and _compare("<=", left(item, context), high(item, context))
        )
    if tokens.keyword("IN"):
        tokens.expect("(")
        options = [_operand(tokens)]
        while tokens.peek()[1] == ",":
            tokens.take()
            options.append(_operand(tokens))
        tokens.expect(")")
        return lambda item, context: any(_compare("=", left(item, context), o(item, context)) for o in options)
    kind, op = tokens.take()
    if op not in _COMPARATORS:
        raise ExpressionError(f"Invalid expression: expected a comparator, found {op!r}")
    right = _operand(tokens)
    return lambda item, context: _compare(op, left(item, context), right(item, context))


def _not(tokens: _Tokens) -> Condition:
    if tokens.keyword("NOT"):
        inner = _not(tokens)
        return lambda item, context: not inner(item, context)
    return _primary(tokens)


def _joined(
    tokens: _Tokens, keyword: str, operand: Callable[[_Tokens], Condition], holds: Callable[[Iterable[bool]], bool]
) -> Condition:
    """Operands joined by `keyword` (AND, OR): one condition that `holds` (all, any) over theirs."""
    parts = [operand(tokens)]
    while tokens.keyword(keyword):
        parts.append(operand(tokens))
    if len(parts) == 1:
        return parts[0]
    return lambda item, context: holds(p(item, context) for p in parts)


def _and(tokens: _Tokens) -> Condition:
    return _joined(tokens, "AND", _not, all)


def _or(tokens: _Tokens) -> Condition:
    return _joined(tokens, "OR", _and, any)


@dataclass(frozen=True)
class Compiled:
    run: Any
    names: frozenset[str]
    values: frozenset[str]


@lru_cache(maxsize=512)
def condition(text: str) -> Compiled:
    tokens = _tokenize(text)
    run = _or(tokens)
    if tokens.peek()[0] != "end":
        raise ExpressionError(f"Invalid expression: unexpected {tokens.peek()[1]!r}")
    return Compiled(run, frozenset(tokens.names), frozenset(tokens.values))


# --- key conditions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyCondition:
    """`hash = :v [AND range <op> ...]`: the attribute paths and the placeholders, resolved per call."""

    hash_name: str
    hash_value: str
    range_name: str | None = None
    range_op: str | None = None  # =, <, <=, >, >=, BETWEEN, begins_with
    range_values: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()


def _key_part(tokens: _Tokens) -> tuple[str, str, tuple[str, ...]]:
    kind, text = tokens.peek()
    result: tuple[str, str, tuple[str, ...]]
    paren = text == "("
    if paren:
        tokens.take()
    if kind == "ident" and text == "begins_with":
        tokens.take()
        tokens.expect("(")
        name = tokens.take()[1]
        tokens.expect(",")
        value = tokens.take()[1]
        tokens.expect(")")
        result = (name, "begins_with", (value,))
    else:
        name = tokens.take()[1]
        if tokens.keyword("BETWEEN"):
            low = tokens.take()[1]
            if not tokens.keyword("AND"):
                raise ExpressionError("Invalid KeyConditionExpression: BETWEEN needs AND")
            result = (name, "BETWEEN", (low, tokens.take()[1]))
        else:
            op = tokens.take()[1]
            if op not in _COMPARATORS - {"<>"}:
                raise ExpressionError(f"Invalid operator used in KeyConditionExpression: {op}")
            result = (name, op, (tokens.take()[1],))
    if paren:
        tokens.expect(")")
    return result


def _unwrapped(text: str) -> str:
    """A key condition without parentheses around the whole of it (as PynamoDB's conditions serialise: DynamoDB
    accepts both)."""
    text = text.strip()
    depth = 0
    for position, character in enumerate(text):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth == 0:
            return _unwrapped(text[1:-1]) if position == len(text) - 1 and text[0] == "(" else text
    return text


@lru_cache(maxsize=256)
def key_condition(text: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    tokens = _tokenize(_unwrapped(text))
    parts = [_key_part(tokens)]
    while tokens.keyword("AND"):
        parts.append(_key_part(tokens))
    if tokens.peek()[0] != "end" or len(parts) > 2:
        raise ExpressionError("Invalid KeyConditionExpression")
    return tuple(parts)


# --- update expressions -------------------------------------------------------------------------------


def _update_value(tokens: _Tokens) -> Operand:
    left = _update_operand(tokens)
    kind, text = tokens.peek()
    if text in ("+", "-"):
        tokens.take()
        right = _update_operand(tokens)
        sign = 1 if text == "+" else -1

        def arithmetic(item: Item, context: Context) -> Value:
            a, b = _present(left(item, context)), _present(right(item, context))
            if "N" not in a or "N" not in b:
                raise ExpressionError("An operand in the update expression has an incorrect data type")
            return {"N": number_text(number(a["N"]) + sign * number(b["N"]))}

        return arithmetic
    return left


def _present(value: Value | None) -> Value:
    if value is None:
        raise ExpressionError("The provided expression refers to an attribute that does not exist in the item")
    return value


def _update_operand(tokens: _Tokens) -> Operand:
    kind, text = tokens.peek()
    if kind == "ident" and text in ("if_not_exists", "list_append"):
        tokens.take()
        tokens.expect("(")
        first = _update_value(tokens) if text == "list_append" else _path_operand(_path(tokens))
        tokens.expect(",")
        second = _update_value(tokens)
        tokens.expect(")")
        if text == "if_not_exists":

            def if_not_exists(item: Item, context: Context) -> Value | None:
                current = first(item, context)
                return current if current is not None else second(item, context)

            return if_not_exists

        def list_append(item: Item, context: Context) -> Value:
            a, b = _present(first(item, context)), _present(second(item, context))
            if "L" not in a or "L" not in b:
                raise ExpressionError("An operand in the update expression has an incorrect data type")
            return {"L": [*a["L"], *b["L"]]}

        return list_append
    if kind == "value":
        tokens.take()
        return _value_operand(text)
    return _path_operand(_path(tokens))


@dataclass(frozen=True)
class Update:
    sets: tuple[tuple[Path, Operand], ...]
    removes: tuple[Path, ...]
    adds: tuple[tuple[Path, Operand], ...]
    deletes: tuple[tuple[Path, Operand], ...]
    names: frozenset[str]
    values: frozenset[str]

    def paths(self, context: Context) -> list[tuple[str | int, ...]]:
        every = [p for p, _ in self.sets] + list(self.removes) + [p for p, _ in self.adds + self.deletes]
        return [resolve(p, context) for p in every]


@lru_cache(maxsize=256)
def update(text: str) -> Update:
    tokens = _tokenize(text)
    sets: list[tuple[Path, Operand]] = []
    removes: list[Path] = []
    adds: list[tuple[Path, Operand]] = []
    deletes: list[tuple[Path, Operand]] = []
    seen: set[str] = set()
    while tokens.peek()[0] != "end":
        clause = tokens.take()[1].upper()
        if clause in seen or clause not in ("SET", "REMOVE", "ADD", "DELETE"):
            raise ExpressionError(f"Invalid UpdateExpression: unexpected {clause!r}")
        seen.add(clause)
        while True:
            path = _path(tokens)
            if clause == "SET":
                tokens.expect("=")
                sets.append((path, _update_value(tokens)))
            elif clause == "REMOVE":
                removes.append(path)
            else:
                (adds if clause == "ADD" else deletes).append((path, _update_operand(tokens)))
            if tokens.peek()[1] != ",":
                break
            tokens.take()
    return Update(
        tuple(sets), tuple(removes), tuple(adds), tuple(deletes), frozenset(tokens.names), frozenset(tokens.values)
    )


def _set_path(item: Item, path: tuple[str | int, ...], value: Value | None) -> None:
    """Set (or with None remove) the value at `path`; a missing parent is an error, as in DynamoDB."""
    if len(path) == 1:
        name = str(path[0])
        if value is None:
            item.pop(name, None)
        else:
            item[name] = value
        return
    parent = get_path(item, path[:-1])
    last = path[-1]
    container = None if parent is None else parent.get("L" if isinstance(last, int) else "M")
    if container is None:
        raise ExpressionError("The document path provided in the update expression is invalid for update")
    if isinstance(last, int):
        _set_element(container, last, value)
    elif value is None:
        container.pop(last, None)
    else:
        container[last] = value


def _set_element(elements: list[Value], position: int, value: Value | None) -> None:
    if value is None:
        if position < len(elements):
            del elements[position]
    elif position < len(elements):
        elements[position] = value
    else:
        elements.append(value)


def _add(current: Value | None, operand: Value) -> Value:
    ((kind, inner),) = operand.items()
    if kind == "N":
        if current is not None and "N" not in current:
            raise ExpressionError("An operand in the update expression has an incorrect data type")
        base = number(current["N"]) if current is not None else 0
        return {"N": number_text(base + number(inner))}
    if kind in ("SS", "NS", "BS"):
        if current is not None and kind not in current:
            raise ExpressionError("An operand in the update expression has an incorrect data type")
        merged = list(current[kind]) if current is not None else []
        merged += [x for x in inner if x not in merged]
        return {kind: merged}
    raise ExpressionError("Incorrect operand type for operator or function; operator: ADD")


def apply_update(compiled: Update, item: Item, context: Context) -> Item:
    """The item after the update (a new dict; `item` is left as it was)."""
    computed = [(resolve(path, context), operand(item, context)) for path, operand in compiled.sets]
    # Top-level paths only replace whole attributes: the values left alone can be shared with `item`.
    top_level = all(len(path) == 1 for path in compiled.removes) and all(
        len(path) == 1 for path, _ in compiled.sets + compiled.adds + compiled.deletes
    )
    result = dict(item) if top_level else _copy_item(item)
    for path, value in computed:
        _set_path(result, path, _present(value))
    for path in compiled.removes:
        _set_path(result, resolve(path, context), None)
    for path, operand in compiled.adds:
        target = resolve(path, context)
        _set_path(result, target, _add(get_path(result, target), _present(operand(item, context))))
    for path, operand in compiled.deletes:
        target = resolve(path, context)
        current = get_path(result, target)
        removing = _present(operand(item, context))
        if current is not None:
            ((kind, inner),) = current.items()
            left = [x for x in inner if x not in removing.get(kind, [])]
            _set_path(result, target, {kind: left} if left else None)
    return result


# --- projection -----------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def projection(text: str) -> tuple[tuple[Path, ...], frozenset[str]]:
    tokens = _tokenize(text)
    paths = [_path(tokens)]
    while tokens.peek()[1] == ",":
        tokens.take()
        paths.append(_path(tokens))
    if tokens.peek()[0] != "end":
        raise ExpressionError("Invalid ProjectionExpression")
    return tuple(paths), frozenset(tokens.names)


def project(item: Item, paths: tuple[Path, ...], context: Context) -> Item:
    result: Item = {}
    for path in paths:
        resolved = resolve(path, context)
        name = str(resolved[0])
        if len(resolved) == 1:
            if name in item:
                result[name] = item[name]
        elif get_path(item, resolved) is not None:
            result[name] = item[name]  # nested projections keep the whole top-level attribute (simplified)
    return result


# --- copies ---------------------------------------------------------------------------------------


def copy_value(value: Value) -> Value:
    ((kind, inner),) = value.items()
    if kind == "S" or kind == "N":
        return {kind: inner}
    if kind == "M":
        return {"M": {k: copy_value(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [copy_value(v) for v in inner]}
    if kind in ("SS", "NS", "BS"):
        return {kind: list(inner)}
    return {kind: inner}


def _copy_item(item: Item) -> Item:
    return {name: copy_value(value) for name, value in item.items()}


copy_item = _copy_item
