"""DynamoDB's item-size rules, used to keep items small and to account capacity in benchmarks.

Sizes follow the DynamoDB developer guide: attribute names count, strings by UTF-8 length,
binaries by length, numbers about one byte per two significant digits plus one, booleans and
nulls one byte, maps and lists 3 bytes plus one per element plus their contents.
"""

from __future__ import annotations

import math
from typing import Any

KB = 1024


def _text_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _number_size(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def value_size(value: dict[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return _text_size(inner)
    if kind == "B":
        return len(inner)
    if kind == "N":
        return _number_size(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: item}) for item in inner)
    if kind == "L":
        return 3 + sum(1 + value_size(item) for item in inner)
    if kind == "M":
        return 3 + sum(1 + len(name.encode("utf-8")) + value_size(item) for name, item in inner.items())
    raise ValueError(f"unknown DynamoDB type {kind}")


def item_size(item: dict[str, dict[str, Any]]) -> int:
    total = 0
    for name, value in item.items():  # (the common scalar types inline: this runs on every write)
        total += _text_size(name)
        if "S" in value:
            total += _text_size(value["S"])
        elif "N" in value:
            total += _number_size(value["N"])
        else:
            total += value_size(value)
    return total


def write_units(size: int) -> int:
    return max(1, math.ceil(size / KB))


def read_units(size: int, consistent: bool = False) -> float:
    units = max(1, math.ceil(size / (4 * KB)))
    return float(units) if consistent else units / 2
