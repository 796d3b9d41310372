"""A queue or topic made for a hostile-input case, and the JSON plane's version header."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.raw_http import RawClient

JSON_VERSION = "2026-04-09"


@contextmanager
def made(raw_a: RawClient, kind: str) -> Iterator[str]:
    """A new queue or topic's name (made on the XML plane), deleted after."""
    name = f"hostile-{uuid.uuid4().hex[:10]}"
    assert raw_a.request("PUT", f"/{kind}s/{name}", f"<{kind.title()}/>").status == 201
    try:
        yield name
    finally:
        raw_a.request("DELETE", f"/{kind}s/{name}")
