"""Requests signed as Alibaba's SDKs sign them, by the service's own implementation of each signature (the layer's
`mnsd.access`, which checks them): V2 (`MNS KeyId:Signature`, HMAC-SHA1 over the method, Content-MD5, Content-Type,
Date, the `x-mns-*` headers and the resource as sent) for the XML API, v1 (HMAC-SHA1 over the sorted parameters) for
the Mns-open OpenAPI."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from mnsd.access.authentication import sign, string_to_sign
from mnsd.access.signature_rpc import v1_signature, v1_string_to_sign
from mnsd.ground.http import HttpRequest


@dataclass(frozen=True)
class Key:
    """An access key, or temporary credentials (its `security_token` sent beside the signature). Never in a repr."""

    key_id: str
    secret: str = field(repr=False)
    security_token: str = field(default="", repr=False)


def content_md5(body: bytes) -> str:
    """Base64 of the body's hex MD5, as the SDKs send it."""
    return base64.b64encode(hashlib.md5(body).hexdigest().encode("ascii")).decode("ascii")


def v2_headers(
    key: Key, method: str, resource: str, date: str, content_type: str, body: bytes, mns: Mapping[str, str]
) -> dict[str, str]:
    """The headers of a V2-signed request for `resource` (its path and query as sent): `mns` (the `x-mns-*` ones,
    names in lower case), Date, the body's Content-Type and Content-MD5, the token and Authorization."""
    sent = {**mns, "Date": date}
    if body:
        sent.update({"Content-Type": content_type, "Content-MD5": content_md5(body)})
    path, _, query = resource.partition("?")
    signed = HttpRequest(method, path, query, {name.lower(): value for name, value in sent.items()}, body)
    if key.security_token:
        sent["security-token"] = key.security_token
    sent["Authorization"] = f"MNS {key.key_id}:{sign(key.secret, string_to_sign(signed, date))}"
    return sent


def v1_signed(key: Key, method: str, params: Mapping[str, str]) -> str:
    """The `Signature` parameter of an OpenAPI call with `params` (the query's and the form body's together)."""
    return v1_signature(key.secret, v1_string_to_sign(method, params))
