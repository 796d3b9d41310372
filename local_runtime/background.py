"""A loop on a daemon thread, started and stopped with the local server: its stream readers and push worker."""

from __future__ import annotations

import abc
import threading
from typing import Self


class BackgroundLoop(abc.ABC):
    """Runs `_run` on a daemon thread named `name` from `start()`; `stop()` sets `_stop`, which `_run` watches,
    and waits for the thread a few seconds at most."""

    def __init__(self, name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    @abc.abstractmethod
    def _run(self) -> None: ...
