"""An account's keys, as each key store lists them (ListAccessKeys)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mnsd.access.keys import (
    AccessKey,
    CombinedKeyStore,
    KeysFileStore,
    RefreshingKeyStore,
    StaticKeyStore,
    format_keys,
)

A, B = "1000000000000001", "2000000000000002"


def document(*entries: tuple[str, str, str]) -> str:
    return json.dumps({"keys": [{"account": a, "id": i, "secret": s} for a, i, s in entries]})


def ids(keys: list[AccessKey]) -> list[str]:
    return [key.key_id for key in keys]


def test_a_static_store_lists_the_accounts_keys_in_order() -> None:
    store = StaticKeyStore(f"{A}:K1:S1,{B}:K2:S2,{A}:K3:S3")
    assert ids(store.keys_of(A)) == ["K1", "K3"] and ids(store.keys_of(B)) == ["K2"]
    assert store.keys_of("3000000000000003") == []


def test_a_refreshing_store_lists_what_it_read_last_until_it_reads_again() -> None:
    clock, value = [0.0], [f"{A}:K1:S1"]
    store = RefreshingKeyStore(lambda: value[0], lambda: clock[0], ttl=60)
    assert ids(store.keys_of(A)) == ["K1"]
    value[0] = f"{A}:K1:S1,{A}:K2:S2"
    clock[0] = 59
    assert ids(store.keys_of(A)) == ["K1"]
    clock[0] = 60
    assert ids(store.keys_of(A)) == ["K1", "K2"]


def test_a_keys_file_store_lists_the_file_as_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(document((A, "K1", "S1")))
    clock = [0.0]
    store = KeysFileStore(str(path), lambda: clock[0])
    assert ids(store.keys_of(A)) == ["K1"]
    path.write_text(format_keys([AccessKey(A, "K2", "S2"), AccessKey(B, "K3", "S3")]))
    clock[0] = 1.0
    assert ids(store.keys_of(A)) == ["K2"] and ids(store.keys_of(B)) == ["K3"]


def test_a_file_replaced_with_one_of_the_same_size_and_time_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(document((A, "K1", "S1")))
    clock = [0.0]
    store = KeysFileStore(str(path), lambda: clock[0])
    stamp = path.stat()
    replacement = tmp_path / "new.json"
    replacement.write_text(document((A, "K1", "S9")))  # a rotated secret: same length
    os.utime(replacement, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    os.replace(replacement, path)
    clock[0] = 1.0
    assert store.lookup("K1").secret == "S9"  # type: ignore[union-attr]


def test_combined_stores_list_every_stores_keys_but_those_a_first_store_shadows(tmp_path: Path) -> None:
    first = StaticKeyStore(f"{A}:K1:S1,{B}:SHARED:S2")
    second = StaticKeyStore(document((A, "K3", "S3"), (A, "SHARED", "S4"), (A, "K1", "S5")))
    combined = CombinedKeyStore(first, second)
    assert ids(combined.keys_of(A)) == ["K1", "K3"]  # SHARED is B's (the first store's), K1 listed once
    assert [key.secret for key in combined.keys_of(A)] == ["S1", "S3"]
    assert ids(combined.keys_of(B)) == ["SHARED"]
