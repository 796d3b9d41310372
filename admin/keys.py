"""Accounts and access keys kept in the stack's Secrets Manager secret, in the `MNS_CREDENTIALS` format.

The functions re-read the secret every `mnsd.accounts.KEY_CACHE_SECONDS`: a created key works and a
revoked key stops working within that time, without a redeploy. Run one admin command at a time (a
Secrets Manager write replaces the whole value).
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from mnsd.accounts import AccessKey, format_keys, parse_keys

ALPHANUMERIC = string.ascii_letters + string.digits


class AdminError(Exception):
    """A request the key list refuses (unknown account or key)."""


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


class KeyAdmin:
    def __init__(self, secretsmanager: Any, secret_arn: str) -> None:
        self.secretsmanager = secretsmanager
        self.secret_arn = secret_arn

    def keys(self) -> list[AccessKey]:
        value = self.secretsmanager.get_secret_value(SecretId=self.secret_arn)["SecretString"]
        return list(parse_keys(value).values())

    def _save(self, keys: list[AccessKey]) -> None:
        self.secretsmanager.put_secret_value(SecretId=self.secret_arn, SecretString=format_keys(keys))

    def create_account(self) -> AccessKey:
        """A new account (16 digits, like MNS account ids) with its first key."""
        keys = self.keys()
        taken = {key.account_id for key in keys}
        account_id = _random("123456789", 1) + _random(string.digits, 15)
        while account_id in taken:
            account_id = _random("123456789", 1) + _random(string.digits, 15)
        return self._add(keys, account_id)

    def create_key(self, account_id: str) -> AccessKey:
        keys = self.keys()
        if account_id not in {key.account_id for key in keys}:
            raise AdminError(f"no account {account_id}")
        return self._add(keys, account_id)

    def revoke_key(self, key_id: str) -> AccessKey:
        keys = self.keys()
        revoked = [key for key in keys if key.key_id == key_id]
        if not revoked:
            raise AdminError(f"no key {key_id}")
        self._save([key for key in keys if key.key_id != key_id])
        return revoked[0]

    def _add(self, keys: list[AccessKey], account_id: str) -> AccessKey:
        taken = {key.key_id for key in keys}
        key_id = _random(ALPHANUMERIC, 24)
        while key_id in taken:
            key_id = _random(ALPHANUMERIC, 24)
        key = AccessKey(account_id, key_id, _random(ALPHANUMERIC, 32))
        self._save([*keys, key])
        return key
