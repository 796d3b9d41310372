"""Request signers as Alibaba's clients sign, written apart from the server's verifier (`mnsd.access`).

`V4Signer` follows the Java SDK 2.0.0's `MNSV4Signer` step by step (a resource path that may carry a query,
parameters, headers, the request time) and its `HttpUtil.urlEncode` (`java.net.URLEncoder`, then `+` -> `%20`,
`*` -> `%2A`, `%7E` -> `~`, and `%2F` -> `/` in a path); `tests/unit/test_signers.py` holds it to the vectors of
the SDK's `MNSV4SignerTest`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass, field
from datetime import UTC, datetime

_URLENCODER_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


def java_url_encode(value: str, keep_slashes: bool) -> str:
    """`HttpUtil.urlEncode(value, ignoreSlashes)` of the Java SDK."""
    out = []
    for byte in value.encode("utf-8"):
        if byte in _URLENCODER_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    encoded = "".join(out).replace("+", "%20").replace("*", "%2A").replace("%7E", "~")
    return encoded.replace("%2F", "/") if keep_slashes else encoded


def _hmac256(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


@dataclass
class V4Request:
    """What the Java SDK's signer reads of a `RequestMessage`."""

    method: str
    resource_path: str
    time: datetime
    parameters: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class V4Signer:
    algorithm: str = "MNS4-HMAC-SHA256"
    prefix: str = "aliyun_v4"
    terminator: str = "aliyun_v4_request"

    @classmethod
    def apsara(cls) -> V4Signer:
        return cls("APSARA-MNS4-HMAC-SHA256", "apsara_v4", "apsara_v4_request")

    def authorization(self, key_id: str, secret: str, request: V4Request, region: str) -> str:
        day = request.time.astimezone(UTC).strftime("%Y%m%d")
        signature = self.build_signature(self.signing_key(secret, day, region), self.content_to_sign(request, region))
        return f"{self.algorithm} Credential={key_id}/{day}/{region}/mns/{self.terminator},Signature={signature}"

    def signing_key(self, secret: str, day: str, region: str) -> bytes:
        key = _hmac256((self.prefix + secret).encode("utf-8"), day)
        for word in (region, "mns", self.terminator):
            key = _hmac256(key, word)
        return key

    @staticmethod
    def build_signature(signing_key: bytes, content: str) -> str:
        return hmac.new(signing_key, content.encode("utf-8"), hashlib.sha256).hexdigest()

    def content_to_sign(self, request: V4Request, region: str) -> str:
        moment = request.time.astimezone(UTC)
        scope = f"{moment:%Y%m%d}/{region}/mns/{self.terminator}"
        return f"{self.algorithm}\n{moment:%Y%m%dT%H%M%SZ}\n{scope}\n{self.canonical_request(request)}"

    @staticmethod
    def canonical_request(request: V4Request) -> str:
        path, _, query = request.resource_path.partition("?")
        parameters = dict(request.parameters)
        for pair in query.split("&") if query else ():
            name, equals, value = pair.partition("=")
            if name:
                parameters[name] = value if equals else ""
        if not path.startswith("/"):
            path = "/" + path
        ordered = sorted(
            (java_url_encode(name.lower().strip(), False), java_url_encode(value.strip(), False))
            for name, value in parameters.items()
        )
        canonical_query = "&".join(f"{name}={value}" if value else name for name, value in ordered)
        signed = sorted(
            (name.lower(), value)
            for name, value in request.headers.items()
            if name.lower() in ("content-type", "content-md5") or name.lower().startswith("x-mns-")
        )
        headers = "".join(f"{name}:{value.strip()}\n" for name, value in signed)
        return f"{request.method}\n{java_url_encode(path, True)}\n{canonical_query}\n{headers}\n"


def v2_signature(secret: str, method: str, md5: str, content_type: str, date: str, headers: dict, resource: str) -> str:
    """`Authorization: MNS KeyId:{this}`: base64 HMAC-SHA1 as the SDKs compute it."""
    mns = sorted((k.lower().strip(), str(v).strip()) for k, v in headers.items() if k.lower().startswith("x-mns-"))
    canon = "".join(f"{k}:{v}\n" for k, v in mns)
    to_sign = f"{method}\n{md5}\n{content_type}\n{date}\n{canon}{resource}"
    return base64.b64encode(hmac.new(secret.encode(), to_sign.encode(), hashlib.sha1).digest()).decode()


def openapi_v1_query(
    key: tuple[str, str], action: str, params: dict[str, str], leave_out: tuple[str, ...] = (), **given: str
) -> dict[str, str]:
    """The query of a Mns-open OpenAPI call signed v1 by the core SDK's own composer (`aliyunsdkcore`), its
    parameters `params` in the form body; `given` replaces or adds query parameters before signing (`Timestamp`,
    `SignatureNonce`, `SecurityToken`), and the parameters named in `leave_out` are neither sent nor signed."""
    import uuid

    from aliyunsdkcore.auth.composer import rpc_signature_composer

    query = {"Action": action, "Version": "2022-01-19", "Format": "JSON", "AccessKeyId": key[0]}
    query.update(SignatureMethod="HMAC-SHA1", SignatureVersion="1.0", SignatureNonce=uuid.uuid4().hex)
    query.update({"Timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), **given})
    for name in leave_out:
        query.pop(name, None)
    text = rpc_signature_composer.__compose_string_to_sign("POST", {**query, **params})
    query["Signature"] = rpc_signature_composer.__get_signature(text, key[1])
    return query


def openapi_acs3_headers(
    key: tuple[str, str],
    host: str,
    action: str,
    query: dict[str, str],
    body: bytes = b"",
    leave_out: tuple[str, ...] = (),
    **given: str,
) -> dict:
    """The headers of a Mns-open OpenAPI call signed ACS3-HMAC-SHA256 by the Tea client's own `get_authorization`
    (bodiless unless `body`); `given` headers replace or add to them before signing (`x-acs-date`), and those named
    in `leave_out` are neither signed nor sent (a test adds them back unsigned)."""
    import uuid
    from types import SimpleNamespace

    from alibabacloud_tea_openapi.utils import Utils

    headers = {"host": host, "x-acs-action": action, "x-acs-version": "2022-01-19", "accept": "application/json"}
    headers.update(
        {"x-acs-date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "x-acs-signature-nonce": uuid.uuid4().hex}
    )
    headers.update({"x-acs-content-sha256": hashlib.sha256(body).hexdigest(), **given})
    for name in leave_out:
        headers.pop(name, None)
    signed = SimpleNamespace(method="POST", pathname="/", query=query, headers=headers)
    payload = headers["x-acs-content-sha256"]
    return {**headers, "Authorization": Utils.get_authorization(signed, "ACS3-HMAC-SHA256", payload, key[0], key[1])}
