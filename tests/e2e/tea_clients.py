"""Alibaba's Tea clients as a user makes them, around the published gateway's one bug.

`alibabacloud-gateway-mns` 0.0.3's constructor fails on its own generated code (`undefined._sign_prefix = ...`, a
NameError), and every Tea SDK of MNS makes one in its own constructor (the SMQProxy SDK's `Client.__init__` among
them). The gateway is made here as that constructor means to make it, and an SDK client as its constructor does,
with that gateway: the requests are the SDK's and the gateway's own, unchanged.
"""

from __future__ import annotations

from alibabacloud_gateway_mns.client import Client as MnsGateway
from alibabacloud_gateway_spi.client import Client as SpiClient
from alibabacloud_smqproxy20260409.client import Client as SmqProxy
from alibabacloud_tea_openapi.client import Client as OpenApiClient
from alibabacloud_tea_openapi.utils_models import Config, OpenApiRequest, Params
from darabonba.runtime import RuntimeOptions


def gateway() -> MnsGateway:
    """The gateway with the three words its constructor sets."""
    made = MnsGateway.__new__(MnsGateway)
    SpiClient.__init__(made)
    made._sign_prefix, made._sign_suffix, made._auth_prefix = "aliyun_v4", "aliyun_v4_request", "MNS4-HMAC-SHA256"
    return made


def config(endpoint: str, key_id: str, secret: str, region: str = "cn-hangzhou", token: str | None = None) -> Config:
    """A Tea client's configuration for our endpoint (`http://host:port`), with a security token if given."""
    host = endpoint.split("://", 1)[1]
    return Config(
        access_key_id=key_id,
        access_key_secret=secret,
        security_token=token,
        endpoint=host,
        region_id=region,
        protocol="http",
    )


def smqproxy(
    endpoint: str, key_id: str, secret: str, region: str = "cn-hangzhou", token: str | None = None
) -> SmqProxy:
    """The SMQProxy SDK's client (`alibabacloud-smqproxy20260409`), as its constructor makes it."""
    client = SmqProxy.__new__(SmqProxy)
    OpenApiClient.__init__(client, config(endpoint, key_id, secret, region, token))
    client._product_id = "SMQProxy"
    client._spi = gateway()
    client._endpoint_rule = "regional"
    return client


def params(action: str, version: str, method: str, path: str, body: str, answer: str) -> Params:
    """What a Tea SDK names of an ROA operation of MNS: its action, API version, method, path and body formats."""
    return Params(
        action=action,
        version=version,
        protocol="HTTP",
        pathname=path,
        method=method,
        auth_type="AK",
        style="ROA",
        req_body_type=body,
        body_type=answer,
    )


def smqproxy_call(client: SmqProxy, action: str, method: str, path: str, query: dict[str, str]) -> dict:
    """An SMQProxy 2026-04-09 operation the Python SDK 1.0.5 has no method for (ReceiveMessage, PeekMessage,
    DeleteMessage: the Java SDK of the same API has them), made as the SDK makes its own: the same `execute`,
    parameters and gateway, its answer as the Tea runtime reads it (`{"statusCode", "headers", "body"}`)."""
    request = OpenApiRequest(headers={}, query=query)
    return client.execute(params(action, "2026-04-09", method, path, "json", "json"), request, RuntimeOptions())
