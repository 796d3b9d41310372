"""Parsing of client-supplied values into range-checked integers and MNS booleans."""

from __future__ import annotations

import json
import re

from mnsd.ground import errors, jsontext

# An integer as MNS reads one: ASCII digits, an optional minus sign, nothing else. (Python's int() also takes
# "1_0", "+5 ", surrounding blanks and other scripts' digits such as "٥": MNS refuses them all.)
_INTEGER = re.compile(r"-?[0-9]+")
# Longer than any bound a value is checked against: refused before it is converted.
_MAX_DIGITS = 19


def strict_int(text: str | None) -> int | None:
    """The integer the text spells as `-?[0-9]+` (ASCII), else None."""
    if text is None or len(text) > _MAX_DIGITS or not _INTEGER.fullmatch(text):
        return None
    return int(text)


def int_in_range(element: str, text: str | None, low: int, high: int, unit: str = "") -> int:
    value = strict_int(text)
    if value is None or not low <= value <= high:
        raise errors.out_of_range(element, low, high, unit)
    return value


def mns_bool(element: str, text: str | None) -> bool:
    value = (text or "").strip().lower()
    if value not in ("true", "false"):
        raise errors.InvalidArgument(f"The value of {element} should be True or False.")
    return value == "true"


def json_text(value: object) -> str | None:
    """A value of a JSON object as the text an XML element would hold (booleans `True`/`False`)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "True" if value else "False"
    return value if isinstance(value, str) else json.dumps(value)


def json_object(name: str, text: str, expected: str = "a JSON object") -> dict[str, object]:
    """A structured value given as JSON text (a DlqPolicy, a TenantRateLimitPolicy), refused unless an object."""
    try:
        given = jsontext.loads(text)
    except ValueError:
        given = None
    if not isinstance(given, dict):
        raise errors.InvalidArgument(f"The value of {name} should be {expected}.")
    return given
