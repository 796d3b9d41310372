"""Queries read the same way on every table of the engine."""

from __future__ import annotations

from typing import Any


def count(client: Any, **query: Any) -> int:
    """How many items a Query (`query`: its parameters, a FilterExpression applied) matches, every page read."""
    total, start = 0, None
    while True:
        page: dict[str, Any] = {"ExclusiveStartKey": start} if start else {}
        response = client.query(Select="COUNT", **query, **page)
        total += response["Count"]
        start = response.get("LastEvaluatedKey")
        if not start:
            return total
