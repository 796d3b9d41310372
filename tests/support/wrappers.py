"""Stand-ins that wrap a real object (a DynamoDB client, a meta table) and change or count a few of its calls."""

from __future__ import annotations

from typing import Any


class Wrapping:
    """Passes every attribute through to `inner` but those a subclass defines."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
