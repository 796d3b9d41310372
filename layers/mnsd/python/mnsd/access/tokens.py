"""Security tokens: temporary credentials (STS) that carry their own proof, so no storage is read or written.

A token is `base64url(payload) "." base64url(HMAC-SHA256(mac key, payload))`, the payload the JSON of its
claims: the temporary key id (`STS.` and 24 random characters), the key it was issued for (its parent), the
account, the expiry (epoch seconds), the token's own policy (or null) and a binding to the parent's secret.
Nothing in it is secret; whoever alters any byte of it breaks the MAC.

The keys are derived from the stack's receipt secret (`settings.receipt_secret`, in Secrets Manager on AWS, in
the data directory locally), domain-separated: `token key = HMAC(receipt secret, "mns-security-token-v1")`, then
one sub-key each for the MAC, the temporary secrets and the parent binding. So:

- the temporary secret is `HMAC(secret key, temporary key id)`: derived again for each request, never stored;
- the binding is `HMAC(binding key, parent key id + parent secret)`: giving the parent key a new secret (or
  deleting it) revokes every token issued for it, and the token holder learns nothing of the parent's secret;
- rotating the receipt secret revokes every token (and every receipt handle) at once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import string
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from mnsd.access.keys import AccessKey
from mnsd.ground import errors
from mnsd.model.policy import Policy, PolicyError

TOKEN_KEY_CONTEXT = b"mns-security-token-v1"
VERSION = 1
TEMPORARY_KEY_PREFIX = "STS."
# DurationSeconds as STS AssumeRole takes it.
MIN_DURATION, MAX_DURATION, DEFAULT_DURATION = 900, 43200, 3600
# AssumeRole's limit on a session policy; it keeps the token (a request header) a few KB at most.
MAX_TOKEN_POLICY_BYTES = 2048
# Longer than any token this module issues: refused before it is decoded.
MAX_TOKEN_CHARS = 4096
_KEY_ALPHABET = string.ascii_letters + string.digits
_CLAIMS = {"v", "id", "parent", "account", "exp", "policy", "bind"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


@lru_cache(maxsize=1024)
def _parsed_policy(document: str) -> Policy:
    return Policy.parse(document)


def expiration_text(expires_at: int) -> str:
    """ISO-8601 UTC, as Alibaba STS writes `Expiration` (`2026-11-24T20:00:00Z`)."""
    return datetime.fromtimestamp(expires_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def token_policy(text: str | None) -> Policy | None:
    """A token's `Policy` as a request gives it, checked (InvalidArgument otherwise); empty: none."""
    if text is None or not text.strip():
        return None
    if len(text.strip().encode("utf-8")) > MAX_TOKEN_POLICY_BYTES:
        raise errors.InvalidArgument(f"The value of Policy should be at most {MAX_TOKEN_POLICY_BYTES} bytes.")
    try:
        parsed = Policy.parse(text.strip())
    except PolicyError as exc:
        raise errors.InvalidArgument(f"The value of Policy is invalid: {exc}.") from exc
    # Kept compact in the token (it travels in every request's header).
    return Policy(parsed.statements, json.dumps(json.loads(parsed.document), separators=(",", ":")))


@dataclass(frozen=True)
class TokenRequest:
    duration_seconds: int = DEFAULT_DURATION
    policy: Policy | None = None


@dataclass(frozen=True)
class TokenClaims:
    key_id: str  # the temporary key id the requests are signed with
    parent_key_id: str
    account_id: str
    expires_at: int  # epoch seconds
    policy: str | None  # the token's own policy document
    binding: str  # ties the token to the parent key's current secret

    def payload(self) -> bytes:
        claims = {
            "v": VERSION,
            "id": self.key_id,
            "parent": self.parent_key_id,
            "account": self.account_id,
            "exp": self.expires_at,
            "policy": self.policy,
            "bind": self.binding,
        }
        return json.dumps(claims, sort_keys=True, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_payload(cls, payload: bytes) -> TokenClaims:
        try:
            claims: Any = json.loads(payload)
        except ValueError:
            raise errors.InvalidSecurityToken() from None
        if not isinstance(claims, dict) or set(claims) != _CLAIMS or claims["v"] != VERSION:
            raise errors.InvalidSecurityToken()
        texts = [claims[name] for name in ("id", "parent", "account", "bind")]
        if not all(isinstance(t, str) and t for t in texts) or type(claims["exp"]) is not int:
            raise errors.InvalidSecurityToken()
        if claims["policy"] is not None and not isinstance(claims["policy"], str):
            raise errors.InvalidSecurityToken()
        return cls(claims["id"], claims["parent"], claims["account"], claims["exp"], claims["policy"], claims["bind"])

    def token_policy(self) -> Policy | None:
        return None if self.policy is None else _parsed_policy(self.policy)

    def expired(self, now: float) -> bool:
        return now >= self.expires_at


@dataclass(frozen=True)
class TemporaryCredentials:
    access_key_id: str
    access_key_secret: str = field(repr=False)
    security_token: str = field(repr=False)
    expires_at: int = 0

    @property
    def expiration(self) -> str:
        return expiration_text(self.expires_at)


class SecurityTokens:
    """Issues tokens for a key and opens the ones requests bring (keys derived from the receipt secret)."""

    def __init__(self, receipt_secret: str) -> None:
        token_key = _hmac(receipt_secret.encode("utf-8"), TOKEN_KEY_CONTEXT)
        self._mac_key = _hmac(token_key, b"mac")
        self._secret_key = _hmac(token_key, b"temporary-secret")
        self._binding_key = _hmac(token_key, b"parent-binding")

    def issue(self, parent: AccessKey, now: float, request: TokenRequest) -> TemporaryCredentials:
        key_id = TEMPORARY_KEY_PREFIX + "".join(secrets.choice(_KEY_ALPHABET) for _ in range(24))
        policy = None if request.policy is None else request.policy.document
        claims = TokenClaims(
            key_id, parent.key_id, parent.account_id, int(now) + request.duration_seconds, policy, self.binding(parent)
        )
        payload = claims.payload()
        token = f"{_b64(payload)}.{_b64(_hmac(self._mac_key, payload))}"
        return TemporaryCredentials(key_id, self.secret_of(claims), token, claims.expires_at)

    def open(self, token: str) -> TokenClaims:
        """The claims of a token this stack issued (InvalidSecurityToken for anything else); expiry unchecked."""
        encoded, dot, mac = token.strip().partition(".")
        if not dot or not encoded or len(token) > MAX_TOKEN_CHARS:
            raise errors.InvalidSecurityToken()
        try:
            payload, sent_mac = _unb64(encoded), _unb64(mac)
        except (binascii.Error, ValueError):
            raise errors.InvalidSecurityToken() from None
        if not hmac.compare_digest(sent_mac, _hmac(self._mac_key, payload)):
            raise errors.InvalidSecurityToken()
        return TokenClaims.from_payload(payload)

    def secret_of(self, claims: TokenClaims) -> str:
        """The temporary key's secret (the MAC ties the key id to the rest of the claims)."""
        return _b64(_hmac(self._secret_key, claims.key_id.encode("utf-8")))

    def binding(self, parent: AccessKey) -> str:
        material = f"{parent.key_id}\n{parent.secret}".encode()
        return _b64(_hmac(self._binding_key, material)[:16])

    def binds(self, claims: TokenClaims, parent: AccessKey) -> bool:
        """Whether the token was issued for this key as it is now (same account, same secret)."""
        return parent.account_id == claims.account_id and hmac.compare_digest(claims.binding, self.binding(parent))
