"""Transport-neutral request and response, built from API Gateway events (or the local server)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import parse_qsl


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str
    raw_query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""
    path_params: dict[str, str] = field(default_factory=dict)
    # When the request reached the API (epoch seconds; API Gateway's `requestContext.timeEpoch`): the
    # platform's 30 s integration timeout counts from then, not from when the function started.
    received_at: float | None = None

    @property
    def raw_uri(self) -> str:
        """The resource exactly as the client sent it: the CanonicalizedResource of the signature."""
        return f"{self.path}?{self.raw_query}" if self.raw_query else self.path

    @cached_property
    def _query(self) -> dict[str, str]:
        parsed: dict[str, str] = {}
        for key, value in parse_qsl(self.raw_query, keep_blank_values=True):
            parsed.setdefault(key.lower(), value)
        return parsed

    def query(self, name: str) -> str | None:
        """A query parameter by case-insensitive name (the Node SDK spells them in camelCase)."""
        return self._query.get(name.lower())

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class HttpResponse:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
