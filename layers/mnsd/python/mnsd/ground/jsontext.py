"""The one reader of JSON a request carries (a JSON-plane body, a DirectMail attribute, a DlqPolicy, a policy
document, ...): its nesting bounded before it is parsed, so no document, however deep, reaches Python's recursion
limit (`RecursionError` is not a `ValueError`, and would answer 500).

`loads` raises `ValueError` for anything it refuses (callers that already catch a bad document keep doing so);
`parse_json` answers `InvalidArgument` naming what was read.
"""

from __future__ import annotations

import re
from json import detect_encoding
from json import loads as _loads
from typing import Any

from mnsd.ground import errors

# Deeper than any document MNS defines (a JSON-plane batch is four levels deep, a policy five).
MAX_DEPTH = 32
# What counts for depth: a string (skipped whole, its brackets are text) or a bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_OPENING = frozenset("[{")


class TooDeep(ValueError):
    """A document nested deeper than `MAX_DEPTH`."""


def depth(text: str) -> int:
    """How deep the document's arrays and objects nest (a malformed document's: what its brackets say)."""
    deepest = level = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in _OPENING:
            level += 1
            deepest = max(deepest, level)
        elif mark in "]}":
            level -= 1
    return deepest


def loads(document: str | bytes) -> Any:
    """The document's value; `ValueError` when it is not JSON, not in a JSON encoding or nested deeper than
    `MAX_DEPTH`."""
    text = document.decode(detect_encoding(document)) if isinstance(document, bytes) else document
    brackets = text.count("[") + text.count("{")  # (no deeper than this: most documents need no scan)
    if brackets > MAX_DEPTH and depth(text) > MAX_DEPTH:
        raise TooDeep(f"nested deeper than {MAX_DEPTH} levels")
    return _loads(text)


def parse_json(document: str | bytes, what: str) -> Any:
    """The value of the JSON `what` (e.g. "The JSON you provided"), else `InvalidArgument` saying why."""
    try:
        return loads(document)
    except TooDeep:
        raise errors.InvalidArgument(f"{what} is nested deeper than {MAX_DEPTH} levels.") from None
    except ValueError:
        raise errors.InvalidArgument(f"{what} was not well-formed.") from None
