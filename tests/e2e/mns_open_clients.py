"""Clients of the Mns-open OpenAPI as users run them, from PyPI: the Tea SDK (`alibabacloud-mns-open20220119`, ACS3 by
default, v1 with `signature_algorithm="v2"`), the core SDK (`aliyun-python-sdk-core` with `aliyun-python-sdk-mns-open`'s
requests, their parameters sent as a form body, as Terraform sends them), and raw signed requests for the refusals."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode

from alibabacloud_mns_open20220119.client import Client as MnsOpen
from alibabacloud_tea_openapi import utils_models
from aliyunsdkcore.acs_exception.exceptions import ServerException
from aliyunsdkcore.client import AcsClient
from aliyunsdkcore.request import CommonRequest, RpcRequest

from tests.support.signers import openapi_acs3_headers, openapi_v1_query

VERSION = "2022-01-19"


def tea_client(endpoint: str, key_id: str, secret: str, *, v1: bool = False, token: str | None = None) -> MnsOpen:
    """The Mns-open Tea SDK pointed at a local endpoint (`http://127.0.0.1:port`): ACS3, or v1 (HMAC-SHA1)."""
    config = utils_models.Config(
        access_key_id=key_id,
        access_key_secret=secret,
        security_token=token,
        endpoint=endpoint.split("://", 1)[1],
        protocol="http",
        region_id="cn-hangzhou",
        signature_algorithm="v2" if v1 else None,
        read_timeout=30_000,  # ms: a loaded test machine's first calls can be slow
        connect_timeout=10_000,
    )
    return MnsOpen(config)


class CoreClient:
    """The core SDK (`AcsClient`) sending each request's parameters as a form body (Terraform's way), signed v1."""

    def __init__(self, endpoint: str, key_id: str, secret: str) -> None:
        self.host = endpoint.split("://", 1)[1]
        self.client = AcsClient(key_id, secret, "cn-hangzhou", auto_retry=False, timeout=30, connect_timeout=10)

    def send(self, request: RpcRequest) -> dict[str, Any]:
        """A generated request (`aliyunsdkmns_open.request.v20220119`), its parameters moved into the body."""
        request.set_endpoint(self.host)
        request.set_protocol_type("http")
        request.set_method("POST")
        params = {k: str(v) for k, v in (request.get_query_params() or {}).items()}
        request.set_query_params({})
        request.set_body_params({**params, **{k: str(v) for k, v in (request.get_body_params() or {}).items()}})
        return json.loads(self.client.do_action_with_exception(request))

    def call(self, action: str, **params: Any) -> dict[str, Any]:
        """Any action (TagResources, the endpoint actions: not among the generated requests), as a CommonRequest."""
        request = CommonRequest(domain=self.host, version=VERSION, action_name=action, product="Mns-open")
        request.set_protocol_type("http")
        request.set_method("POST")
        for key, value in params.items():
            request.add_body_params(key, str(value))
        return json.loads(self.client.do_action_with_exception(request))


def core_error(call: Any) -> tuple[str, int]:
    """The error code and HTTP status a core SDK call ends with."""
    try:
        call()
    except ServerException as error:
        return error.get_error_code(), error.get_http_status()
    raise AssertionError("the call was not refused")


def tea_error(call: Any) -> tuple[str, int]:
    """The error code and HTTP status a Tea SDK call ends with."""
    try:
        call()
    except Exception as error:  # the Tea SDK's ClientException / ServerException
        code = getattr(error, "code", None)
        if code is None:
            raise
        return str(code), int(getattr(error, "status_code", 0) or 0)
    raise AssertionError("the call was not refused")


def post(endpoint: str, query: dict[str, str], body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    url = f"{endpoint}/?{urlencode(query)}" if query else f"{endpoint}/"
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def v1_call(
    endpoint: str, key_id: str, secret: str, action: str, params: dict[str, str], **given: str
) -> tuple[int, dict[str, Any]]:
    """A v1-signed POST, the signature's parameters in the query and the action's in a form body (as Terraform sends
    them); `given` query parameters (`Timestamp`, `SignatureNonce`, `SecurityToken`) replace the signer's."""
    query = openapi_v1_query((key_id, secret), action, params, **given)
    return post(endpoint, query, urlencode(params).encode(), {"Content-Type": "application/x-www-form-urlencoded"})


def acs3_headers(endpoint: str, key_id: str, secret: str, action: str, query: dict[str, str]) -> dict[str, str]:
    """ACS3-HMAC-SHA256 headers for a bodiless POST, signed by the Tea client's own `get_authorization`."""
    return openapi_acs3_headers((key_id, secret), endpoint.split("://", 1)[1], action, query)
