"""The messages already copied to the target, per queue and direction: a source message's id is written here after
the target acknowledged its copy and before the source's copy is deleted. A message received again (its delete
failed or never came: the source or the tool stopped) is then deleted without being sent twice."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


class Journal:
    def __init__(self, folder: Path, source: str, target: str) -> None:
        direction = hashlib.sha256(f"{source}\n{target}".encode()).hexdigest()[:16]
        self.folder = folder / direction
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "direction.txt").write_text(f"{source} -> {target}\n")

    def queue(self, name: str) -> QueueJournal:
        return QueueJournal(self.folder / f"{name}.copied")


class QueueJournal:
    """One queue's copied message ids (one worker writes it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids = set(path.read_text().split()) if path.exists() else set()

    def __contains__(self, message_id: str) -> bool:
        return message_id in self.ids

    def add(self, message_ids: list[str]) -> None:
        if not message_ids:
            return
        with open(self.path, "a") as out:
            out.write("".join(f"{m}\n" for m in message_ids))
            out.flush()
            os.fsync(out.fileno())
        self.ids.update(message_ids)
