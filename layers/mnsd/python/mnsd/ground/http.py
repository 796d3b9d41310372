"""Transport-neutral request and response, built from API Gateway events (or the local server)."""

from __future__ import annotations

import ipaddress
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
    # The client's address as the front end saw it (API Gateway's `requestContext.http.sourceIp`): the account's
    # endpoint allow-list (`mnsd.control.endpoint_acl`) is checked against it.
    source_ip: str | None = None

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

    def host_account(self) -> str | None:
        """The account whose resources a call is on, when the host names one: MNS hosts start with the account id
        (`{AccountId}.mns.{region}.aliyuncs.com`), and so do ours (`{AccountId}.{domain}`, `{AccountId}.mns.localhost`).
        An IP address names none."""
        host = self.header("host") or ""
        name = host if host.endswith("]") else host.rpartition(":")[0] or host
        label, dot, _ = name.partition(".")
        if not dot or not label.isdigit() or _is_address(name):
            return None
        return label


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass
class HttpResponse:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
