"""RAM policies: `{"Version": "1", "Statement": [{"Effect", "Action", "Resource"[, "Principal"]}]}`.

`*` in an action, resource or principal matches any run of characters and `?` any one character;
actions match regardless of case (`mns:sendmessage` is `mns:SendMessage`), resources exactly. An explicit
Deny wins over any Allow; nothing is allowed unless a statement allows it.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mnsd.ground import errors, jsontext

MAX_POLICY_BYTES = 6144  # RAM's limit on one policy document
ALLOW, DENY = "Allow", "Deny"
# A resource policy's principals: an account's root (`acs:ram::{account}:root`, every key of that account).
ROOT_PRINCIPAL = "acs:ram::{account}:root"


def grant_document(account: str, actions: Iterable[str], resources: Iterable[str]) -> dict[str, Any]:
    """A resource policy (RAM's shape) allowing another account's root `actions` on `resources`."""
    statement = {
        "Effect": ALLOW,
        "Principal": {"RAM": [ROOT_PRINCIPAL.format(account=account)]},
        "Action": list(actions),
        "Resource": list(resources),
    }
    return {"Version": "1", "Statement": [statement]}


class PolicyError(ValueError):
    """A policy document that does not parse or breaks the RAM shape (the message says where)."""


class Decision(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"  # an explicit Deny
    NONE = "none"  # no statement speaks of it: refused unless something else allows it


@lru_cache(maxsize=4096)
def _pattern(text: str, ignore_case: bool) -> re.Pattern[str]:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)
    return re.compile(regex + r"\Z", re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def matches(patterns: Iterable[str], value: str, ignore_case: bool = False) -> bool:
    return any(_pattern(pattern, ignore_case).match(value) for pattern in patterns)


@dataclass(frozen=True)
class Statement:
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    principals: tuple[str, ...] = ()  # resource policies only: whom the statement speaks of

    def applies(self, action: str, resource: str, principal: str | None) -> bool:
        if principal is not None and not matches(self.principals, principal):
            return False
        return matches(self.actions, action, ignore_case=True) and matches(self.resources, resource)


def _strings(statement: dict[str, Any], name: str, where: str) -> tuple[str, ...]:
    value = statement.get(name)
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise PolicyError(f"{where}: {name} must be a non-empty string or list of strings")
    return tuple(values)


def _principals(statement: dict[str, Any], where: str) -> tuple[str, ...]:
    """`"Principal": {"RAM": [...]}` (RAM's resource-policy shape), a list, or `"*"`; bare account ids become roots."""
    given = statement.get("Principal")
    if isinstance(given, dict):
        if set(given) != {"RAM"}:
            raise PolicyError(f"{where}: Principal takes only RAM principals")
        given = given["RAM"]
    values = _strings({"Principal": given}, "Principal", where)
    return tuple(ROOT_PRINCIPAL.format(account=v) if v.isdigit() else v for v in values)


def _statement(given: Any, index: int, resource_policy: bool) -> Statement:
    where = f"Statement {index + 1}"
    if not isinstance(given, dict):
        raise PolicyError(f"{where} must be an object")
    known = {"Effect", "Action", "Resource", "Principal", "Sid", "Condition"}
    if unknown := set(given) - known:
        raise PolicyError(f"{where}: unknown element {sorted(unknown)[0]}")
    if "Condition" in given:
        raise PolicyError(f"{where}: Condition is not supported")
    effect = given.get("Effect")
    if effect not in (ALLOW, DENY):
        raise PolicyError(f"{where}: Effect must be Allow or Deny")
    if resource_policy != ("Principal" in given):
        raise PolicyError(f"{where}: Principal is {'required' if resource_policy else 'only for resource policies'}")
    principals = _principals(given, where) if resource_policy else ()
    return Statement(effect, _strings(given, "Action", where), _strings(given, "Resource", where), principals)


@dataclass(frozen=True)
class Policy:
    statements: tuple[Statement, ...]
    document: str  # the JSON it was read from, as given (shown back to administrators)

    @classmethod
    def parse(cls, document: str | dict[str, Any], resource_policy: bool = False) -> Policy:
        text = document if isinstance(document, str) else json.dumps(document, separators=(",", ":"))
        if len(text.encode("utf-8")) > MAX_POLICY_BYTES:
            raise PolicyError(f"a policy is at most {MAX_POLICY_BYTES} bytes")
        try:
            parsed = jsontext.loads(text)
        except ValueError as exc:
            raise PolicyError(f"not JSON: {exc}") from exc
        if not isinstance(parsed, dict) or parsed.get("Version") != "1":
            raise PolicyError('a policy is an object with "Version": "1"')
        statements = parsed.get("Statement")
        if not isinstance(statements, list):
            raise PolicyError("Statement must be a list")
        return cls(tuple(_statement(s, i, resource_policy) for i, s in enumerate(statements)), text)

    def decide(self, action: str, resource: str, principal: str | None = None) -> Decision:
        applying = [s.effect for s in self.statements if s.applies(action, resource, principal)]
        if DENY in applying:
            return Decision.DENY
        return Decision.ALLOW if applying else Decision.NONE


def resource_policy_document(text: str) -> str:
    """A queue's or topic's `Policy` as a request gives it, checked (InvalidArgument otherwise); "" removes it."""
    if not text.strip():
        return ""
    try:
        return Policy.parse(text.strip(), resource_policy=True).document
    except PolicyError as exc:
        raise errors.InvalidArgument(f"The value of Policy is invalid: {exc}.") from exc
