"""The Mns-open OpenAPI (2022-01-19), signed v1 (HMAC-SHA1) as the core SDK and Terraform sign it: the signature's
parameters in the query, the action's in a form body. The tool reads and writes queues', topics' and subscriptions'
configuration through it: one plane that carries every attribute, tags and dead-letter policies included."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from mnsclient.errors import ServiceError
from mnsclient.signing import Key, v1_signed
from mnsclient.transport import TIMEOUT_SECONDS, Transport

VERSION = "2022-01-19"
PAGE_SIZE = 50
FORM = "application/x-www-form-urlencoded"


class OpenApiClient:
    """Calls of one endpoint's Mns-open actions with one key (`region`: the RegionId sent, none when "")."""

    def __init__(self, endpoint: str, key: Key, region: str = "", timeout: float = TIMEOUT_SECONDS) -> None:
        self.key = key
        self.region = region
        self.transport = Transport(endpoint.rstrip("/"), timeout)

    def call(self, action: str, params: Mapping[str, Any] | None = None) -> Any:
        """The action's `Data` (None when it has none); a refusal raises `ServiceError`."""
        given = {k: _text(v) for k, v in (params or {}).items() if v is not None}
        query = {
            "Action": action,
            "Version": VERSION,
            "Format": "JSON",
            "AccessKeyId": self.key.key_id,
            "SignatureMethod": "HMAC-SHA1",
            "SignatureVersion": "1.0",
            "SignatureNonce": uuid.uuid4().hex,
            "Timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if self.region:
            query["RegionId"] = self.region
        if self.key.security_token:
            query["SecurityToken"] = self.key.security_token
        query["Signature"] = v1_signed(self.key, "POST", {**query, **given})
        body = urlencode(given).encode()
        headers = {
            "Content-Type": FORM,
            "Host": self.transport.netloc,
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
