"""Parsing of client-supplied values into range-checked integers and MNS booleans."""

from __future__ import annotations

from mnsd import errors


def int_in_range(element: str, text: str | None, low: int, high: int, unit: str = "") -> int:
    try:
        value = int((text or "").strip())
    except ValueError:
        raise errors.out_of_range(element, low, high, unit) from None
    if not low <= value <= high:
        raise errors.out_of_range(element, low, high, unit)
    return value


def mns_bool(element: str, text: str | None) -> bool:
    value = (text or "").strip().lower()
    if value not in ("true", "false"):
        raise errors.InvalidArgument(f"The value of {element} should be True or False.")
    return value == "true"
