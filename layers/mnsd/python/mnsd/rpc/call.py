"""One OpenAPI call as its actions see it: the parameters (the query's and a form body's, merged), who calls, and on
which account's resources."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from mnsd.access.principal import Principal
from mnsd.access.signature_rpc import MissingParameter
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.ground.validation import json_object

if TYPE_CHECKING:
    from mnsd.services import Services

VERSION = "2022-01-19"
FORM = "application/x-www-form-urlencoded"


def _missing(name: str) -> errors.MnsError:
    return MissingParameter(
        f'The input parameter "{name}" that is mandatory for processing this request is not supplied.'
    )


def request_params(request: HttpRequest, read_body: bool = True) -> dict[str, str]:
    """The query's parameters and a form body's (unless not `read_body`), merged (names exactly as sent; the query's
    first where both are)."""
    params: dict[str, str] = {}
    content_type = (request.header("content-type") or "").split(";")[0].strip().lower()
    form = request.body.decode("utf-8", "replace") if read_body and content_type == FORM and request.body else ""
    for key, value in [*parse_qsl(request.raw_query, keep_blank_values=True), *parse_qsl(form, keep_blank_values=True)]:
        params.setdefault(key, value)
    return params


@dataclass
class RpcCall:
    request: HttpRequest
    params: dict[str, str]
    action: str
    principal: Principal | None
    owner: str  # the account whose resources the call is on: the host's, else the caller's
    services: Services

    def text(self, name: str) -> str | None:
        return self.params.get(name)

    def required(self, name: str) -> str:
        value = self.params.get(name)
        if value is None or not value.strip():
            raise _missing(name)
        return value

    def flag(self, name: str) -> str | None:
        """A boolean as given, in any case (`True`, `true`), checked by the domain where it is read."""
        return self.params.get(name)

    def numbered(self, prefix: str) -> list[str]:
        """`Prefix.1`, `Prefix.2`, ... in their numbers' order (ResourceId.N, TagKey.N)."""
        found = []
        for key, value in self.params.items():
            head, dot, index = key.rpartition(".")
            if head == prefix and dot and index.isdigit():
                found.append((int(index), value))
        return [value for _, value in sorted(found)]

    def tags(self, prefix: str = "Tag") -> list[tuple[str, str]]:
        """`Tag.N.Key` / `Tag.N.Value` pairs in their numbers' order (a key without a value has the value "")."""
        pattern = re.compile(rf"{re.escape(prefix)}\.(\d+)\.(Key|Value)\Z")
        entries: dict[int, dict[str, str]] = {}
        for key, value in self.params.items():
            found = pattern.match(key)
            if found:
                entries.setdefault(int(found[1]), {})[found[2]] = value
        return [(e["Key"], e.get("Value", "")) for _, e in sorted(entries.items()) if "Key" in e]

    def json_object(self, name: str) -> dict[str, object] | None:
        """A structured parameter the SDK sends as a JSON string (`DlqPolicy`, `TenantRateLimitPolicy`)."""
        text = self.params.get(name)
        return None if text is None or not text.strip() else json_object(name, text)

    def endpoint(self) -> str:
        """The base URL the client called (for QueueUrl and SubscriptionURL)."""
        host = self.request.header("host") or f"{self.owner}.mns.{self.services.settings.region}.aliyuncs.com"
        scheme = self.request.header("x-forwarded-proto") or "http"
        return f"{scheme}://{host}"
