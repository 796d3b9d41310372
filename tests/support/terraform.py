"""The Terraform provider's calls (`aliyun/alicloud`, `alicloud_message_service_*`): v1 signatures, every parameter in
a form body with `RegionId` and `ClientToken` beside them, the Describe functions' not-found codes."""

from __future__ import annotations

import uuid
from typing import Any

from tests.e2e.mns_open_clients import v1_call
from tests.support.servers import ACCOUNT_A

KEY, SECRET = ACCOUNT_A[1], ACCOUNT_A[2]


class Provider:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.calls: list[str] = []

    def rpc(self, action: str, **params: Any) -> tuple[int, dict[str, Any]]:
        """`client.RpcPost("Mns-open", "2022-01-19", action, query, request, true)`."""
        self.calls.append(action)
        form = {key: go_text(value) for key, value in params.items()}
        form.update(RegionId="cn-hangzhou", ClientToken=uuid.uuid4().hex)
        return v1_call(self.endpoint, KEY, SECRET, action, form)

    def ok(self, action: str, **params: Any) -> dict[str, Any]:
        status, body = self.rpc(action, **params)
        assert status == 200 and body["Success"] is True, (action, status, body)
        return body

    def describe(self, action: str, gone: tuple[str, ...], **params: Any) -> dict[str, Any] | None:
        """A Describe function: the answer's Data, or None where the provider would find the resource gone."""
        status, body = self.rpc(action, **params)
        if status != 200:
            assert body["Code"] in gone, (action, status, body)
            return None
        return body["Data"]


def go_text(value: Any) -> str:
    """How the Go SDK writes a form value: booleans `true`/`false`, numbers in decimal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
