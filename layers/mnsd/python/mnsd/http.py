"""Transport-neutral request and response, built from API Gateway events (or the local server)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str
    raw_query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""
    path_params: dict[str, str] = field(default_factory=dict)

    @property
    def raw_uri(self) -> str:
        """The resource exactly as the client sent it: the CanonicalizedResource of the signature."""
        return f"{self.path}?{self.raw_query}" if self.raw_query else self.path

    def query(self, name: str) -> str | None:
        """A query parameter by case-insensitive name (the Node SDK spells them in camelCase)."""
        wanted = name.lower()
        for key, value in parse_qsl(self.raw_query, keep_blank_values=True):
            if key.lower() == wanted:
                return value
        return None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class HttpResponse:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
