"""The key book: accounts, access keys and their policies, kept where the service reads them.

Two places hold the key list, each behind `KeyList` (read it whole, write it whole):
- the deployed stack's Secrets Manager secret (`SecretKeys`); the functions re-read it every
  `mnsd.access.keys.KEY_CACHE_SECONDS`, so a change works within that time, without a redeploy;
- the local runtime's keys file (`KeysFile`, `MNS_KEYS_FILE`), which the server re-reads within
  `mnsd.access.keys.KEYS_FILE_CHECK_SECONDS` of a change.

Either may hold the old `account:keyid:secret` triples (read as root keys); a write stores the keys
document. Run one admin command at a time: a write replaces the whole list.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import string
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from mnsd.access.keys import AccessKey, create_keys_file, format_keys, parse_keys
from mnsd.model.policy import Policy, PolicyError

ALPHANUMERIC = string.ascii_letters + string.digits
KEY_ID_LENGTH = 24
SECRET_LENGTH = 32


class AdminError(Exception):
    """A request the key book refuses (unknown account or key, a bad policy, an unreadable key list)."""


class KeyList(Protocol):
    """Where the key list is kept: read and written whole, in `parse_keys` / `format_keys` form."""

    def read(self) -> str: ...

    def write(self, text: str) -> None: ...


class SecretKeys:
    """The deployed stack's credentials secret (`CredentialsSecretArn`)."""

    def __init__(self, secretsmanager: Any, secret_arn: str) -> None:
        self.secretsmanager = secretsmanager
        self.secret_arn = secret_arn

    def read(self) -> str:
        return str(self.secretsmanager.get_secret_value(SecretId=self.secret_arn)["SecretString"])

    def write(self, text: str) -> None:
        self.secretsmanager.put_secret_value(SecretId=self.secret_arn, SecretString=text)


class KeysFile:
    """The local runtime's keys file, created (with no key) when missing; written by an atomic replace,
    so the server never reads half a file, and readable by its owner only (it holds secrets)."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def read(self) -> str:
        create_keys_file(str(self.path))
        return self.path.read_text("utf-8")

    def write(self, text: str) -> None:
        handle, temporary = tempfile.mkstemp(prefix=".keys-", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self.path)
        except BaseException:
            os.unlink(temporary)
            raise


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def read_policy(path: str, resource_policy: bool = False) -> Policy:
    """A policy file, checked by `Policy.parse` (AdminError naming the file and what is wrong)."""
    try:
        text = Path(path).read_text("utf-8")
    except OSError as exc:
        raise AdminError(f"cannot read the policy {path}: {exc.strerror or exc}") from exc
    try:
        return Policy.parse(text.strip(), resource_policy=resource_policy)
    except PolicyError as exc:
        raise AdminError(f"the policy {path} is refused: {exc}") from exc


class KeyBook:
    """Accounts and their keys over a `KeyList`: each command reads the list, changes it and writes it back.

    An account exists when a key of the list belongs to it, or when it is one of `known_accounts` (locally:
    those of the server's `MNS_CREDENTIALS`, whose keys are not in the keys file).
    """

    def __init__(self, store: KeyList, known_accounts: Iterable[str] = ()) -> None:
        self.store = store
        self.known_accounts = frozenset(known_accounts)

    def keys(self) -> list[AccessKey]:
        try:
            return list(parse_keys(self.store.read()).values())
        except ValueError as exc:
            raise AdminError(f"the key list cannot be read: {exc}") from exc

    def _save(self, keys: list[AccessKey]) -> None:
        self.store.write(format_keys(keys))

    def create_account(self) -> AccessKey:
        """A new account (16 digits, like MNS account ids) with its first key, a root key."""
        keys = self.keys()
        taken = {key.account_id for key in keys} | self.known_accounts
        account_id = _random("123456789", 1) + _random(string.digits, 15)
        while account_id in taken:
            account_id = _random("123456789", 1) + _random(string.digits, 15)
        return self._add(keys, account_id, None)

    def create_key(self, account_id: str, policy: Policy | None = None) -> AccessKey:
        """Another key of an account: a root key, or one limited to what `policy` allows."""
        keys = self.keys()
        if account_id not in {key.account_id for key in keys} | self.known_accounts:
            raise AdminError(f"no account {account_id}")
        return self._add(keys, account_id, policy)

    def rotate_key(self, key_id: str) -> AccessKey:
        """The key with a new secret (same id, account and policy); the old secret stops working."""
        return self._replace(key_id, lambda key: dataclasses.replace(key, secret=_random(ALPHANUMERIC, SECRET_LENGTH)))

    def set_policy(self, key_id: str, policy: Policy | None) -> AccessKey:
        """Attaches or replaces the key's policy; None removes it, making the key a root key of its account."""
        return self._replace(key_id, lambda key: dataclasses.replace(key, policy=policy))

    def revoke_key(self, key_id: str) -> AccessKey:
        keys = self.keys()
        revoked = self._find(keys, key_id)
        self._save([key for key in keys if key.key_id != key_id])
        return revoked

    @staticmethod
    def _find(keys: list[AccessKey], key_id: str) -> AccessKey:
        for key in keys:
            if key.key_id == key_id:
                return key
        raise AdminError(f"no key {key_id}")

    def _replace(self, key_id: str, change: Callable[[AccessKey], AccessKey]) -> AccessKey:
        keys = self.keys()
        changed = change(self._find(keys, key_id))
        self._save([changed if key.key_id == key_id else key for key in keys])
        return changed

    def _add(self, keys: list[AccessKey], account_id: str, policy: Policy | None) -> AccessKey:
        taken = {key.key_id for key in keys}
        key_id = _random(ALPHANUMERIC, KEY_ID_LENGTH)
        while key_id in taken:
            key_id = _random(ALPHANUMERIC, KEY_ID_LENGTH)
        key = AccessKey(account_id, key_id, _random(ALPHANUMERIC, SECRET_LENGTH), policy)
        self._save([*keys, key])
        return key
