"""Accounts and access keys: every access key belongs to exactly one account."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mnsd.storage.catalog import AccountAttributes, Catalog

# How long a function trusts the access keys it read: a revoked key stops working within this time.
KEY_CACHE_SECONDS = 60.0
# The key list with no key in it (a freshly deployed stack's secret).
NO_KEYS = ","


@dataclass(frozen=True)
class AccessKey:
    account_id: str
    key_id: str
    secret: str


class KeyStore(Protocol):
    def lookup(self, key_id: str) -> AccessKey | None: ...


def parse_keys(spec: str) -> dict[str, AccessKey]:
    """`account:keyid:secret` triples, comma-separated, by key id (in their order)."""
    keys: dict[str, AccessKey] = {}
    for triple in filter(None, (part.strip() for part in spec.split(","))):
        account_id, key_id, secret = triple.split(":", 2)
        keys[key_id] = AccessKey(account_id, key_id, secret)
    return keys


def format_keys(keys: Iterable[AccessKey]) -> str:
    """The inverse of `parse_keys`."""
    return ",".join(f"{key.account_id}:{key.key_id}:{key.secret}" for key in keys) or NO_KEYS


class StaticKeyStore:
    """Keys given as `account:keyid:secret` triples, comma-separated (the first is the default account)."""

    def __init__(self, spec: str) -> None:
        self.keys = parse_keys(spec)
        if not self.keys:
            raise ValueError("no access keys configured")

    @property
    def default(self) -> AccessKey:
        return next(iter(self.keys.values()))

    def lookup(self, key_id: str) -> AccessKey | None:
        return self.keys.get(key_id)


class RefreshingKeyStore:
    """Keys read by `load` (on AWS: the Secrets Manager secret), read again once `ttl` seconds old."""

    def __init__(self, load: Callable[[], str], now: Callable[[], float], ttl: float = KEY_CACHE_SECONDS) -> None:
        self._load = load
        self._now = now
        self._ttl = ttl
        self._keys: dict[str, AccessKey] = {}
        self._read_at: float | None = None

    def lookup(self, key_id: str) -> AccessKey | None:
        now = self._now()
        if self._read_at is None or now - self._read_at >= self._ttl:
            self._keys = parse_keys(self._load())
            self._read_at = now
        return self._keys.get(key_id)


class AccountService:
    """Account-level settings (GetAccountAttributes / SetAccountAttributes), kept in the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def attributes(self, account_id: str) -> AccountAttributes:
        return self.catalog.account_attributes(account_id)

    def set_logging_bucket(self, account_id: str, bucket: str) -> None:
        current = self.catalog.account_attributes(account_id)
        self.catalog.set_account_attributes(account_id, replace(current, logging_bucket=bucket))
