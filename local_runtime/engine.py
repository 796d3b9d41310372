"""The local runtime's storage engine: SQLite in `.mns/` by default, or every table on moto.

MNS_ENGINE    sqlite (default) | moto (every table in in-process moto, nothing kept on stop)
MNS_DATA_DIR  where the SQLite engine keeps its data (default `.mns` under the working
              directory); `:memory:` for a throwaway server
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path

from mnsd.storage.sqlite import MEMORY

ENGINE = "MNS_ENGINE"
DATA_DIR = "MNS_DATA_DIR"
SYNCHRONOUS = "MNS_SQLITE_SYNCHRONOUS"
SQLITE, MOTO = "sqlite", "moto"
DEFAULT_DATA_DIR = ".mns"
RECEIPT_SECRET_FILE = "receipt-secret"


@dataclass(frozen=True)
class EngineChoice:
    engine: str = MOTO
    data_dir: str = MEMORY
    synchronous: str = "NORMAL"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> EngineChoice:
        env = dict(os.environ if env is None else env)
        engine = env.get(ENGINE, SQLITE).strip().lower() or SQLITE
        if engine not in (SQLITE, MOTO):
            raise SystemExit(f"{ENGINE} must be {SQLITE} or {MOTO}, not {engine!r}")
        return cls(engine, env.get(DATA_DIR) or DEFAULT_DATA_DIR, env.get(SYNCHRONOUS, "NORMAL").upper())

    @property
    def persistent(self) -> bool:
        return self.engine == SQLITE and self.data_dir != MEMORY


def receipt_secret(choice: EngineChoice) -> str:
    """The key receipt handles are signed with: kept beside the data, so handles outlive a restart."""
    fresh = base64.urlsafe_b64encode(os.urandom(24)).decode("ascii")
    if not choice.persistent:
        return fresh
    path = Path(choice.data_dir) / RECEIPT_SECRET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(descriptor, "w") as out:
        out.write(fresh)
        out.flush()
        os.fsync(out.fileno())
    return fresh
