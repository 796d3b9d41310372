"""The OpenAPI (RPC style) request signatures of the Mns-open control plane, and their refusals with the codes
Alibaba Cloud's API gateway answers (`SignatureDoesNotMatch`, `InvalidAccessKeyId.NotFound`, `SignatureNonceUsed`,
`InvalidTimeStamp.Expired`, ...).

- **ACS3-HMAC-SHA256** (the Tea SDKs' default): `Authorization: ACS3-HMAC-SHA256 Credential={KeyId},
  SignedHeaders={h1;h2},Signature={hex}`. Canonical request: the method, the path, the query (names and values
  percent-encoded as RFC 3986, sorted by name, `name=value` joined by `&`), the signed headers (`name:value` lines,
  names lower-cased and sorted, values trimmed), the signed header names, and `x-acs-content-sha256` (the hex
  SHA-256 of the body, checked against the body). String to sign: the algorithm and the hex SHA-256 of the canonical
  request, one per line; the signature is the hex HMAC-SHA256 of it keyed by the secret. Every header named in
  `SignedHeaders` is signed, and `x-acs-date`, `x-acs-signature-nonce` and `x-acs-content-sha256` must be among them.
  Temporary credentials: `x-acs-security-token`.
- **v1 (HMAC-SHA1)**: `AccessKeyId`, `Signature`, `SignatureMethod`, `SignatureNonce`, `Timestamp` among the
  parameters; the string to sign is `{METHOD}&%2F&` and the percent-encoded, name-sorted `name=value&...` of every
  parameter but `Signature`, the query's and the form body's merged; the signature is base64 HMAC-SHA1 keyed by
  `secret + "&"`. Temporary credentials: the parameter `SecurityToken`.

Both: the request time within 15 minutes of now, and a nonce used once by a key within that window.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import parse_qsl, quote

from mnsd.access.authentication import access_key, temporary_key
from mnsd.access.keys import KeyStore
from mnsd.access.principal import Principal
from mnsd.access.signature_match import matches
from mnsd.access.tokens import SecurityTokens
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest

ACS3 = "ACS3-HMAC-SHA256"
WINDOW_SECONDS = 15 * 60
_ACS3_REQUIRED = ("x-acs-date", "x-acs-signature-nonce", "x-acs-content-sha256")
_ACS3_AUTHORIZATION = re.compile(
    r"ACS3-HMAC-SHA256\s+Credential=(?P<key>[^,\s]+)\s*,\s*SignedHeaders=(?P<headers>[^,\s]+)\s*,\s*"
    r"Signature=(?P<signature>[0-9a-fA-F]+)\s*\Z"
)


# The refusals, by the code Alibaba Cloud's API gateway answers with.
_REFUSALS = {
    "SignatureDoesNotMatch": (400, "Specified signature is not matched with our calculation."),
    "IncompleteSignature": (400, "The request signature does not conform to Aliyun standards."),
    "InvalidAccessKeyId.NotFound": (404, "Specified access key is not found."),
    "SignatureNonceUsed": (400, "Specified signature nonce was used already."),
    "InvalidTimeStamp.Expired": (400, "Specified time stamp or date value is expired."),
    "InvalidTimeStamp.Format": (400, "Specified time stamp or date value is not well formatted."),
    "MissingParameter": (400, "A mandatory parameter is not supplied."),
    "InvalidParameter.SignatureMethod": (400, "Specified signature method is not supported: use HMAC-SHA1."),
    "InvalidSecurityToken.Expired": (400, "Specified SecurityToken is expired."),
    "InvalidSecurityToken.Malformed": (400, "Specified SecurityToken is malformed."),
    "InvalidSecurityToken.MismatchWithAccessKey": (400, "Specified SecurityToken mismatch with the AccessKey."),
}
REFUSED = {code: errors.openapi_error(code, status, message) for code, (status, message) in _REFUSALS.items()}
SignatureDoesNotMatch = REFUSED["SignatureDoesNotMatch"]
MissingParameter = REFUSED["MissingParameter"]

# What the shared key and token checks raise, as the OpenAPI names it.
_OPENAPI_CODES: dict[str, type[errors.MnsError]] = {
    "InvalidAccessKeyId": REFUSED["InvalidAccessKeyId.NotFound"],
    "SecurityTokenExpired": REFUSED["InvalidSecurityToken.Expired"],
    "InvalidSecurityToken": REFUSED["InvalidSecurityToken.Malformed"],
    "AccessKeyIdAndSecurityTokenNotMatch": REFUSED["InvalidSecurityToken.MismatchWithAccessKey"],
}


class Nonces(Protocol):
    def first_use(self, key: str, expires: int) -> bool: ...


def percent_encode(text: str) -> str:
    """RFC 3986: every byte but the unreserved characters (`A-Za-z0-9-_.~`) as `%XX`."""
    return quote(text, safe="~")


def is_rpc_request(request: HttpRequest, params: Mapping[str, str]) -> bool:
    """Whether a request is an OpenAPI call: an action named, or an OpenAPI signature."""
    authorization = request.header("authorization") or ""
    return bool(
        request.header("x-acs-action") or "Action" in params or "Signature" in params or authorization.startswith(ACS3)
    )


def _is_acs3(request: HttpRequest) -> bool:
    """Whether the request says it is signed ACS3 (else it is read as v1)."""
    return (request.header("authorization") or "").startswith("ACS3")


def _time(text: str | None, name: str) -> datetime:
    if not text:
        raise MissingParameter(
            f'The input parameter "{name}" that is mandatory for processing this request is not supplied.'
        )
    for layout in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise REFUSED["InvalidTimeStamp.Format"]()


def _canonical_query(raw_query: str) -> str:
    pairs = sorted((percent_encode(k), percent_encode(v)) for k, v in parse_qsl(raw_query, keep_blank_values=True))
    return "&".join(f"{k}={v}" for k, v in pairs)


def acs3_string_to_sign(request: HttpRequest, signed_headers: list[str], payload_hash: str) -> str:
    headers = "".join(f"{name}:{(request.header(name) or '').strip()}\n" for name in signed_headers)
    canonical = "\n".join(
        (
            request.method.upper(),
            request.path or "/",
            _canonical_query(request.raw_query),
            headers,
            ";".join(signed_headers),
            payload_hash,
        )
    )
    return f"{ACS3}\n{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"


def acs3_signature(secret: str, string_to_sign: str) -> str:
    return hmac.new(secret.encode("utf-8"), string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def v1_string_to_sign(method: str, params: Mapping[str, str]) -> str:
    pairs = sorted((percent_encode(k), percent_encode(v)) for k, v in params.items() if k != "Signature")
    return f"{method.upper()}&%2F&" + percent_encode("&".join(f"{k}={v}" for k, v in pairs))


def v1_signature(secret: str, string_to_sign: str) -> str:
    digest = hmac.new(f"{secret}&".encode(), string_to_sign.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


class _Check(Protocol):
    def __call__(self, secret: str) -> bool: ...


def _acs3(request: HttpRequest) -> tuple[str, str | None, str, datetime, _Check]:
    found = _ACS3_AUTHORIZATION.match(request.header("authorization") or "")
    if found is None:
        raise REFUSED["IncompleteSignature"]()
    signed = found["headers"].lower().split(";")
    if signed != sorted(signed) or any(name not in signed for name in _ACS3_REQUIRED):
        raise REFUSED["IncompleteSignature"](f"SignedHeaders must be sorted and name {', '.join(_ACS3_REQUIRED)}.")
    payload_hash = (request.header("x-acs-content-sha256") or "").lower()
    if payload_hash != hashlib.sha256(request.body).hexdigest():
        raise SignatureDoesNotMatch("The request body does not match its x-acs-content-sha256.")
    unsigned = [name for name in _acs3_must_sign(request) if name not in signed]
    if unsigned:
        raise REFUSED["IncompleteSignature"](
            f"SignedHeaders must name every common header the request carries: {', '.join(unsigned)} is not signed."
        )
    time = _time(request.header("x-acs-date"), "x-acs-date")
    nonce = request.header("x-acs-signature-nonce") or ""
    text = acs3_string_to_sign(request, signed, payload_hash)

    def check(secret: str) -> bool:
        return matches(acs3_signature(secret, text), found["signature"].lower())

    return found["key"], request.header("x-acs-security-token"), nonce, time, check


def _acs3_must_sign(request: HttpRequest) -> list[str]:
    """What an ACS3 signature must cover of this request (Alibaba's V3 rule: every common header present but
    Authorization): `host`, which names the account; every `x-acs-*` header (the action, the version, the
    credentials); and the Content-Type of a body, which decides whether the body's parameters are read."""
    names = ["host", *(name for name in request.headers if name.startswith("x-acs-"))]
    if request.body and request.header("content-type") is not None:
        names.append("content-type")
    return names


def requested(request: HttpRequest, params: Mapping[str, str]) -> tuple[str, str | None]:
    """The action and the API version a request names, as its signature covers them, or its refusal.

    ACS3 signs the `x-acs-action` and `x-acs-version` headers (`_acs3` refuses them unsigned) and the query and body
    where `Action` and `Version` may come too; v1 signs the parameters only, so there the headers (which the SDKs
    send beside them) are read only to refuse one that says otherwise. Named twice, differently: refused."""
    acs3 = _is_acs3(request)
    named = []
    for header, param in (("x-acs-action", "Action"), ("x-acs-version", "Version")):
        said, signed = request.header(header), params.get(param)
        if said is not None and signed is not None and said != signed:
            raise SignatureDoesNotMatch(f"The {header} header names {said!r}; the {param} parameter names {signed!r}.")
        named.append(signed if signed is not None or not acs3 else said)
    action, version = named
    if not action:
        raise MissingParameter(
            'The input parameter "Action" that is mandatory for processing this request is not supplied.'
        )
    return action, version


def _v1(request: HttpRequest, params: Mapping[str, str]) -> tuple[str, str | None, str, datetime, _Check]:
    for name in ("AccessKeyId", "Signature", "SignatureNonce", "Timestamp"):
        if not params.get(name):
            raise MissingParameter(
                f'The input parameter "{name}" that is mandatory for processing this request is not supplied.'
            )
    if params.get("SignatureMethod", "HMAC-SHA1") != "HMAC-SHA1":
        raise REFUSED["InvalidParameter.SignatureMethod"]()
    time = _time(params["Timestamp"], "Timestamp")
    text = v1_string_to_sign(request.method, params)

    def check(secret: str) -> bool:
        return matches(v1_signature(secret, text), params["Signature"])

    return params["AccessKeyId"], params.get("SecurityToken"), params["SignatureNonce"], time, check


def authenticate_rpc(
    request: HttpRequest,
    params: Mapping[str, str],
    keys: KeyStore,
    now: float,
    tokens: SecurityTokens | None,
    nonces: Nonces,
) -> Principal:
    """Who signed an OpenAPI request (either signature), with the key store, tokens and policies of the XML plane;
    or the OpenAPI's refusal."""
    key_id, token, nonce, time, check = _acs3(request) if _is_acs3(request) else _v1(request, params)
    try:
        secret, principal = temporary_key(key_id, token, keys, tokens, now) if token else access_key(key_id, keys)
    except errors.MnsError as error:
        raise _OPENAPI_CODES.get(error.code, type(error))(
            None if error.code in _OPENAPI_CODES else error.message
        ) from error
    if not check(secret):
        raise SignatureDoesNotMatch()
    if abs(now - time.timestamp()) > WINDOW_SECONDS:
        raise REFUSED["InvalidTimeStamp.Expired"]()
    if not nonce:
        raise MissingParameter(
            'The input parameter "SignatureNonce" that is mandatory for processing this request is not supplied.'
        )
    if not nonces.first_use(f"{key_id}:{nonce}", int(now) + 2 * WINDOW_SECONDS):
        raise REFUSED["SignatureNonceUsed"]()
    return principal
