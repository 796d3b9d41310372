"""The Mns-open OpenAPI (2022-01-19), signed v1 (HMAC-SHA1) as the core SDK and Terraform sign it: the signature's
parameters in the query, the action's in a form body. The tool reads and writes queues', topics' and subscriptions'
configuration through it: one plane that carries every attribute, tags and dead-letter policies included."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from migrate.credentials import Side
from migrate.errors import ServiceError
from migrate.transport import Transport

VERSION = "2022-01-19"
PAGE_SIZE = 50
FORM = "application/x-www-form-urlencoded"


def _encode(text: str) -> str:
    return quote(text, safe="~")


def sign_v1(secret: str, method: str, params: Mapping[str, str]) -> str:
    canonical = "&".join(f"{_encode(k)}={_encode(v)}" for k, v in sorted(params.items()))
    text = f"{method}&%2F&{_encode(canonical)}"
    return base64.b64encode(hmac.new(f"{secret}&".encode(), text.encode(), hashlib.sha1).digest()).decode()


class OpenApi:
    def __init__(self, side: Side) -> None:
        self.side = side
        self.transport = Transport(side.openapi_endpoint)

    def call(self, action: str, params: Mapping[str, Any] | None = None) -> Any:
        """The action's `Data` (None when it has none); a refusal raises `ServiceError`."""
        given = {k: _text(v) for k, v in (params or {}).items() if v is not None}
        query = {
            "Action": action,
            "Version": VERSION,
            "Format": "JSON",
            "AccessKeyId": self.side.access_key_id,
            "SignatureMethod": "HMAC-SHA1",
            "SignatureVersion": "1.0",
            "SignatureNonce": uuid.uuid4().hex,
            "Timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if self.side.region:
            query["RegionId"] = self.side.region
        if self.side.security_token:
            query["SecurityToken"] = self.side.security_token
        query["Signature"] = sign_v1(self.side.access_key_secret, "POST", {**query, **given})
        body = urlencode(given).encode()
        headers = {
            "Content-Type": FORM,
            "Host": urlsplit(self.side.openapi_endpoint).netloc,
            "Accept": "application/json",
        }
        reply = self.transport.request("POST", "/?" + urlencode(query), body, headers)
        try:
            answer = json.loads(reply.body) if reply.body.strip() else {}
        except ValueError:
            text = reply.body[:200].decode("utf-8", "replace")
            raise ServiceError(reply.status, f"HTTP{reply.status}", text) from None
        failed = reply.status >= 300 or answer.get("Success") is False
        if failed or not isinstance(answer, dict):
            code = str(answer.get("Code") or f"HTTP{reply.status}")
            raise ServiceError(reply.status, code, str(answer.get("Message") or ""), str(answer.get("RequestId") or ""))
        return answer.get("Data")

    def pages(self, action: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every entry of a paged list action (`PageNum` from 1, `PageSize` 50), in the order answered."""
        entries: list[dict[str, Any]] = []
        page = 1
        while True:
            data = self.call(action, {**(params or {}), "PageNum": page, "PageSize": PAGE_SIZE}) or {}
            found = data.get("PageData") or []
            entries.extend(found)
            if not found or page >= int(data.get("Pages") or 0):
                return entries
            page += 1


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
