"""Resource policies as the catalog keeps them: the `Policy` attribute of a queue or topic.

Queue records are cached by the catalog; a topic's policy is cached here as long (`Catalog.cache_seconds`),
so a call on another account's topic costs no read beyond the one its operation makes. A policy changed in
another container is seen here at most that late.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from mnsd.access.permissions import QUEUE
from mnsd.control.catalog import Catalog
from mnsd.model.names import split_address
from mnsd.model.policy import Policy

MAX_CACHED = 10_000


@lru_cache(maxsize=1024)
def resource_policy(document: str) -> Policy:
    return Policy.parse(document, resource_policy=True)


class CatalogPolicies:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._lock = threading.Lock()
        self._topics: dict[tuple[str, str], tuple[str, float]] = {}  # (owner, name) -> (policy, read at)

    def policy_of(self, owner: str, kind: str, name: str) -> Policy | None:
        document = self._queue_policy(owner, name) if kind == QUEUE else self._topic_policy(owner, name)
        return resource_policy(document) if document else None

    def _queue_policy(self, owner: str, name: str) -> str:
        """The queue's policy; a receiver's address (`{queue}.{receiver}`) is under its queue's."""
        queue = self.catalog.get_queue(owner, split_address(name)[0])
        return queue.attributes.policy if queue is not None else ""

    def _topic_policy(self, owner: str, name: str) -> str:
        now = self.catalog.clock.now()
        with self._lock:
            cached = self._topics.get((owner, name))
        if cached is not None and now - cached[1] < self.catalog.cache_seconds:
            return cached[0]
        topic = self.catalog.get_topic(owner, name)
        document = topic.attributes.policy if topic is not None else ""
        with self._lock:
            if len(self._topics) >= MAX_CACHED:  # names another account tries need not stay
                self._topics.clear()
            self._topics[(owner, name)] = (document, now)
        return document
