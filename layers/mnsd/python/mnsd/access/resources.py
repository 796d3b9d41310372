"""Resource policies as the catalog keeps them: the `Policy` attribute of a queue or topic."""

from __future__ import annotations

from functools import lru_cache

from mnsd.access.permissions import QUEUE
from mnsd.access.policy import Policy
from mnsd.storage.catalog import Catalog


@lru_cache(maxsize=1024)
def resource_policy(document: str) -> Policy:
    return Policy.parse(document, resource_policy=True)


class CatalogPolicies:
    """Reads a queue's or topic's record (cached by the catalog) for its policy."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def policy_of(self, owner: str, kind: str, name: str) -> Policy | None:
        found = self.catalog.get_queue(owner, name) if kind == QUEUE else self.catalog.get_topic(owner, name)
        document = found.attributes.policy if found is not None else ""
        return resource_policy(document) if document else None
