"""Request authentication: the MNS signature, V2 (HMAC-SHA1, `MNS KeyId:Signature`) or V4 (MNS4-HMAC-SHA256,
`mnsd.access.signature_v4`), of a long-term key or of temporary credentials; the date window and Content-MD5."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from mnsd.access import signature_v4
from mnsd.access.keys import KeyStore
from mnsd.access.principal import Principal
from mnsd.access.signature_match import matches
from mnsd.access.tokens import SecurityTokens
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest

CLOCK_SKEW_SECONDS = 15 * 60


def string_to_sign(request: HttpRequest, date: str) -> str:
    mns_headers = "".join(
        f"{name}:{value}\n" for name, value in sorted(request.headers.items()) if name.startswith("x-mns-")
    )
    return "\n".join(
        (
            request.method.upper(),
            request.header("content-md5") or "",
            request.header("content-type") or "",
            date,
            mns_headers + request.raw_uri,
        )
    )


def sign(secret: str, text: str) -> str:
    digest = hmac.new(secret.encode("utf-8"), text.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


@dataclass(frozen=True)
class RequestDate:
    """The request's date as sent (`x-mns-date`, else `Date`) and as a time."""

    text: str
    time: datetime  # UTC

    @classmethod
    def of(cls, request: HttpRequest) -> RequestDate:
        date = request.header("x-mns-date") or request.header("date")
        if not date:
            raise errors.MissingDateHeader()
        try:
            parsed = parsedate_to_datetime(date)
        except (TypeError, ValueError) as exc:
            raise errors.InvalidDateHeader() from exc
        if parsed.tzinfo is None:
            raise errors.InvalidDateHeader()
        return cls(date, parsed.astimezone(UTC))


@dataclass(frozen=True)
class V2Credential:
    """`Authorization: MNS KeyId:Signature`: base64 HMAC-SHA1 of `string_to_sign`."""

    key_id: str
    signature: str

    def matches(self, secret: str, request: HttpRequest, date: RequestDate) -> bool:
        return matches(sign(secret, string_to_sign(request, date.text)), self.signature)


def _credential(request: HttpRequest) -> V2Credential | signature_v4.V4Credential:
    """The key id and signature the Authorization header names, in either scheme."""
    authorization = request.header("authorization")
    if not authorization:
        raise errors.MissingAuthorizationHeader()
    v4 = signature_v4.parse(authorization)
    if v4 is not None:
        return v4
    scheme, _, credential = authorization.partition(" ")
    key_id, _, signature = credential.strip().partition(":")
    if scheme != "MNS" or not key_id or not signature:
        raise errors.InvalidAuthorizationHeader()
    return V2Credential(key_id, signature)


def access_key(key_id: str, keys: KeyStore) -> tuple[str, Principal]:
    """A long-term key's secret and who it is."""
    key = keys.lookup(key_id)
    if key is None:
        raise errors.InvalidAccessKeyId()
    return key.secret, key.principal()


def temporary_key(
    key_id: str, token: str, keys: KeyStore, tokens: SecurityTokens | None, now: float
) -> tuple[str, Principal]:
    """Temporary credentials: the token's secret and who it is (its parent key's policy, narrowed by its own).

    The parent key is read now: a key revoked (or given a new secret) revokes its tokens, and its policy as it
    is now is the one in force.
    """
    if tokens is None:
        raise errors.InvalidSecurityToken()
    claims = tokens.open(token)
    if claims.key_id != key_id:
        raise errors.AccessKeyIdAndSecurityTokenNotMatch()
    if claims.expired(now):
        raise errors.SecurityTokenExpired()
    parent = keys.lookup(claims.parent_key_id)
    if parent is None or not tokens.binds(claims, parent):
        raise errors.InvalidSecurityToken("The security token you provided is invalid: its access key was revoked.")
    own = claims.token_policy()
    policies = tuple(p for p in (parent.policy, own) if p is not None)
    return tokens.secret_of(claims), Principal(parent.account_id, key_id, policies, token=True)


def authenticate(
    request: HttpRequest, keys: KeyStore, now: float, tokens: SecurityTokens | None = None, *, region: str
) -> Principal:
    """Who signed the request (its key and the key's policies), or the MNS error that says why no one did.

    With a `security-token` header (sent by the SDKs beside, not inside, the signed headers) the request is
    signed with temporary credentials that `tokens` opens; without one, a temporary key id is unknown. A V4
    signature's scope must name `region`, the service and the request's date.
    """
    credential = _credential(request)
    token = request.header("security-token")
    key_id = credential.key_id
    secret, principal = temporary_key(key_id, token, keys, tokens, now) if token else access_key(key_id, keys)
    date = RequestDate.of(request)
    if isinstance(credential, signature_v4.V4Credential):
        credential.check_scope(region, date.time)
        matches = credential.matches(secret, request, date.time)
    else:
        matches = credential.matches(secret, request, date)
    if not matches:
        raise errors.SignatureDoesNotMatch()
    if abs(now - date.time.timestamp()) > CLOCK_SKEW_SECONDS:
        raise errors.TimeExpired()
    check_content_md5(request)
    return principal


def check_content_md5(request: HttpRequest) -> None:
    """Content-MD5, when sent, is base64 of the hex MD5 (what the SDKs send) or of the raw MD5 (RFC 1864)."""
    sent = request.header("content-md5")
    if not sent:
        return
    md5 = hashlib.md5(request.body)
    accepted = (
        base64.b64encode(md5.hexdigest().encode("ascii")).decode("ascii"),
        base64.b64encode(md5.digest()).decode("ascii"),
    )
    if sent.strip() not in accepted:
        raise errors.InvalidDigest()
