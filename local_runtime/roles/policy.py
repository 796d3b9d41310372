"""IAM's evaluation of one identity policy, as AWS documents it: an explicit Deny wins, else an Allow, else the
request is implicitly denied. Statements are the synthesized template's, their intrinsics already resolved.

Only what the template uses is evaluated; a condition operator this module does not know fails loudly
(`UnknownCondition`) rather than allowing or denying by guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


class UnknownCondition(Exception):
    """A statement's condition uses an operator the evaluation does not implement."""


@dataclass(frozen=True)
class Request:
    """One authorization AWS would make: an action on a resource, with the request's condition keys (each a list
    of values: `dynamodb:LeadingKeys` has one per partition key the call names)."""

    action: str
    resource: str
    context: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def describe(self) -> str:
        keys = "".join(f" {key}={list(values)}" for key, values in sorted(self.context.items()))
        return f"{self.action} on {self.resource}{keys}"


@lru_cache(maxsize=4096)
def _pattern(glob: str, case_insensitive: bool) -> re.Pattern[str]:
    """IAM's wildcards: `*` any run of characters, `?` any one character; nothing else is special."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile("".join(parts) + r"\Z", re.IGNORECASE if case_insensitive else 0)


def like(glob: str, value: str, case_insensitive: bool = False) -> bool:
    return _pattern(glob, case_insensitive).match(value) is not None


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _string_test(operator: str) -> Any:
    tests = {
        "StringEquals": lambda want, have: want == have,
        "StringNotEquals": lambda want, have: want == have,
        "StringEqualsIgnoreCase": lambda want, have: want.lower() == have.lower(),
        "StringLike": lambda want, have: like(want, have),
        "StringNotLike": lambda want, have: like(want, have),
        "ArnEquals": lambda want, have: want == have,
        "ArnLike": lambda want, have: like(want, have),
        "ArnNotEquals": lambda want, have: want == have,
        "ArnNotLike": lambda want, have: like(want, have),
    }
    if operator not in tests:
        raise UnknownCondition(f"condition operator {operator!r} is not evaluated here")
    return tests[operator]


def condition_holds(operator: str, key: str, wanted: Sequence[str], context: Mapping[str, tuple[str, ...]]) -> bool:
    """One key of one operator, with IAM's semantics for multivalued keys (`ForAllValues:`: every value of the
    request matches some wanted value, and an absent key matches; `ForAnyValue:`: some value matches) and for
    absent keys (a positive operator fails, a negated one holds; `...IfExists` holds)."""
    qualifier, _, base = operator.rpartition(":")
    if qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise UnknownCondition(f"condition operator {operator!r} is not evaluated here")
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    negated = "Not" in base
    test = _string_test(base)
    values = context.get(key)
    if values is None:
        if qualifier == "ForAllValues":
            return True
        if qualifier == "ForAnyValue":
            return False
        return if_exists or negated
    matches = [any(test(str(want), have) for want in wanted) for have in values]
    if qualifier == "ForAllValues":
        return all(not m for m in matches) if negated else all(matches)
    if qualifier == "ForAnyValue":
        return any(not m for m in matches) if negated else any(matches)
    if len(values) != 1:
        raise UnknownCondition(f"{operator} on the multivalued key {key}: use ForAllValues or ForAnyValue")
    return not matches[0] if negated else matches[0]


def conditions_hold(conditions: Mapping[str, Mapping[str, Any]], context: Mapping[str, tuple[str, ...]]) -> bool:
    return all(
        condition_holds(operator, key, [str(v) for v in _listed(wanted)], context)
        for operator, keys in conditions.items()
        for key, wanted in keys.items()
    )


def _matches_any(patterns: Iterable[str], value: str, case_insensitive: bool = False) -> bool:
    return any(like(pattern, value, case_insensitive) for pattern in patterns)


def statement_applies(statement: Mapping[str, Any], request: Request) -> bool:
    """Whether `statement` covers `request`: its Action (or NotAction), Resource (or NotResource) and Condition."""
    if "Action" in statement:
        if not _matches_any(_listed(statement["Action"]), request.action, case_insensitive=True):
            return False
    elif _matches_any(_listed(statement["NotAction"]), request.action, case_insensitive=True):
        return False
    if "Resource" in statement:
        if not _matches_any(_listed(statement["Resource"]), request.resource):
            return False
    elif _matches_any(_listed(statement["NotResource"]), request.resource):
        return False
    return conditions_hold(statement.get("Condition", {}), request.context)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def decide(statements: Sequence[Mapping[str, Any]], request: Request) -> Decision:
    """AWS's answer to `request` under these statements (one identity policy, no boundary, no resource policy)."""
    applying = [s for s in statements if statement_applies(s, request)]
    if any(s.get("Effect") == "Deny" for s in applying):
        return Decision(False, "explicitly denied")
    if any(s.get("Effect") == "Allow" for s in applying):
        return Decision(True, "allowed")
    return Decision(False, "no identity-based policy allows the action")
