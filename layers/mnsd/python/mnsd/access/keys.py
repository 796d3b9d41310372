"""Access keys: every access key belongs to exactly one account (its settings: `mnsd.control.accounts`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mnsd.access.principal import Principal
from mnsd.model.policy import Policy, PolicyError

# How long a function trusts the access keys it read: a revoked key stops working within this time.
KEY_CACHE_SECONDS = 60.0
# How often the local server looks whether its keys file (`MNS_KEYS_FILE`) changed.
KEYS_FILE_CHECK_SECONDS = 1.0
# The key list with no key in it (a freshly deployed stack's secret).
NO_KEYS = ","


@dataclass(frozen=True)
class AccessKey:
    account_id: str
    key_id: str
    secret: str = field(repr=False)
    policy: Policy | None = None  # None: a root key of its account, which may do anything in it

    def principal(self) -> Principal:
        return Principal(self.account_id, self.key_id, (self.policy,) if self.policy else ())

    def record(self) -> dict[str, Any]:
        """The key as the keys document holds it (`parse_keys`)."""
        entry: dict[str, Any] = {"account": self.account_id, "id": self.key_id, "secret": self.secret}
        if self.policy is not None:
            entry["policy"] = json.loads(self.policy.document)
        return entry


class KeyStore(Protocol):
    def lookup(self, key_id: str) -> AccessKey | None: ...

    def keys_of(self, account_id: str) -> list[AccessKey]:
        """The account's keys, in the order the key list holds them (ListAccessKeys)."""
        ...


def _of(keys: Iterable[AccessKey], account_id: str) -> list[AccessKey]:
    return [key for key in keys if key.account_id == account_id]


def _key(entry: Any) -> AccessKey:
    if not isinstance(entry, dict) or not all(isinstance(entry.get(name), str) for name in ("account", "id", "secret")):
        raise ValueError("each key is an object with account, id and secret (strings) and an optional policy")
    policy = entry.get("policy")
    try:
        parsed = None if policy is None else Policy.parse(policy if isinstance(policy, str) else json.dumps(policy))
    except PolicyError as exc:
        raise ValueError(f"key {entry['id']}: {exc}") from exc
    return AccessKey(entry["account"], entry["id"], entry["secret"], parsed)


def parse_keys(spec: str) -> dict[str, AccessKey]:
    """Keys by id, in their order, from either form the key list takes:

    - `account:keyid:secret` triples, comma-separated (`MNS_CREDENTIALS`; every key a root key);
    - the keys document, `{"keys": [{"account": ..., "id": ..., "secret": ..., "policy": {...}}, ...]}`
      (`MNS_KEYS_FILE`, and the stack's secret once a key has a policy); a key without `policy` is a root key.
    """
    if spec.lstrip().startswith("{"):
        document = json.loads(spec)
        if not isinstance(document, dict) or not isinstance(document.get("keys", []), list):
            raise ValueError('the keys document is {"keys": [...]}')
        return {key.key_id: key for key in map(_key, document.get("keys", []))}
    keys: dict[str, AccessKey] = {}
    for triple in filter(None, (part.strip() for part in spec.split(","))):
        account_id, key_id, secret = triple.split(":", 2)
        keys[key_id] = AccessKey(account_id, key_id, secret)
    return keys


def format_keys(keys: Iterable[AccessKey]) -> str:
    """The inverse of `parse_keys`: the keys document."""
    return json.dumps({"keys": [key.record() for key in keys]}, indent=1)


def create_keys_file(path: str) -> bool:
    """Writes the keys document with no key at `path` (and its folder) unless a file is there; True if it did.

    The file is its owner's only: it holds secrets."""
    if os.path.exists(path):
        return False
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(format_keys([]))
    return True


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

    def keys_of(self, account_id: str) -> list[AccessKey]:
        return _of(self.keys.values(), account_id)


class _ReloadingKeys:
    """A key store over a key list it reads again from time to time (`_current`)."""

    def _current(self) -> dict[str, AccessKey]:
        raise NotImplementedError

    def lookup(self, key_id: str) -> AccessKey | None:
        return self._current().get(key_id)

    def keys_of(self, account_id: str) -> list[AccessKey]:
        return _of(self._current().values(), account_id)


class RefreshingKeyStore(_ReloadingKeys):
    """Keys read by `load` (on AWS: the Secrets Manager secret), read again once `ttl` seconds old."""

    def __init__(self, load: Callable[[], str], now: Callable[[], float], ttl: float = KEY_CACHE_SECONDS) -> None:
        self._load = load
        self._now = now
        self._ttl = ttl
        self._keys: dict[str, AccessKey] = {}
        self._read_at: float | None = None

    def _current(self) -> dict[str, AccessKey]:
        now = self._now()
        if self._read_at is None or now - self._read_at >= self._ttl:
            self._keys = parse_keys(self._load())
            self._read_at = now
        return self._keys


class KeysFileStore(_ReloadingKeys):
    """The keys document in a file (`MNS_KEYS_FILE`), read again when the file changes (checked every second).

    A file that cannot be read or parsed keeps the keys read last (and the error is raised at start).
    """

    def __init__(self, path: str, now: Callable[[], float], check_every: float = KEYS_FILE_CHECK_SECONDS) -> None:
        self.path = path
        self._now = now
        self._check_every = check_every
        self._checked_at = now()
        self._stamp = self._file_stamp()
        self.keys = parse_keys(self._read())

    def _file_stamp(self) -> tuple[int, int, int]:
        stat = os.stat(self.path)  # the inode too: a file replaced whole within one mtime tick
        return stat.st_ino, stat.st_mtime_ns, stat.st_size

    def _read(self) -> str:
        with open(self.path, encoding="utf-8") as handle:
            return handle.read()

    def _current(self) -> dict[str, AccessKey]:
        now = self._now()
        if now - self._checked_at >= self._check_every:
            self._checked_at = now
            try:
                stamp = self._file_stamp()
                if stamp != self._stamp:
                    self.keys, self._stamp = parse_keys(self._read()), stamp
            except (OSError, ValueError):
                pass  # half-written or removed: keep what was read last, look again next time
        return self.keys


class CombinedKeyStore:
    """The first store that knows a key id answers for it."""

    def __init__(self, *stores: KeyStore) -> None:
        self.stores = stores

    def lookup(self, key_id: str) -> AccessKey | None:
        for store in self.stores:
            if (key := store.lookup(key_id)) is not None:
                return key
        return None

    def keys_of(self, account_id: str) -> list[AccessKey]:
        """The account's keys of every store, but those a first store shadows (a key id is the first's, as `lookup`)."""
        found: dict[str, AccessKey] = {}
        for store in self.stores:
            for key in store.keys_of(account_id):
                if key.key_id not in found and self.lookup(key.key_id) == key:
                    found[key.key_id] = key
        return list(found.values())
