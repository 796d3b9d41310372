"""Signature nonces in one process: exact for an engine served by one process (the embedded one)."""

from __future__ import annotations

import heapq
import threading
import time


class ProcessNonces:
    """Each nonce until its expiry, in memory; expired ones are forgotten as new ones come."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._expiries: list[tuple[int, str]] = []

    def first_use(self, key: str, expires: int) -> bool:
        now = time.time()
        with self._lock:
            while self._expiries and self._expiries[0][0] < now:
                self._seen.discard(heapq.heappop(self._expiries)[1])
            if key in self._seen:
                return False
            self._seen.add(key)
            heapq.heappush(self._expiries, (expires, key))
            return True
