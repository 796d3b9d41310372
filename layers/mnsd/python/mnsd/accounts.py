"""Accounts and access keys: every access key belongs to exactly one account."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class AccessKey:
    account_id: str
    key_id: str
    secret: str


class KeyStore(Protocol):
    def lookup(self, key_id: str) -> AccessKey | None: ...


class StaticKeyStore:
    """Keys given as `account:keyid:secret` triples, comma-separated (the first is the default account)."""

    def __init__(self, spec: str) -> None:
        self.keys: dict[str, AccessKey] = {}
        for triple in filter(None, (part.strip() for part in spec.split(","))):
            account_id, key_id, secret = triple.split(":", 2)
            self.keys[key_id] = AccessKey(account_id, key_id, secret)
        if not self.keys:
            raise ValueError("no access keys configured")

    @property
    def default(self) -> AccessKey:
        return next(iter(self.keys.values()))

    def lookup(self, key_id: str) -> AccessKey | None:
        return self.keys.get(key_id)
