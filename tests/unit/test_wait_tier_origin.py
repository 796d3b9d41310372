"""The holder's origin (`wait_tier.origin.Origin`) against a small origin of this test: what it passes on and what
it keeps to itself."""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from mnsd.pipeline.steps import MAX_REQUEST_BYTES
from mnsd.waiting import contract
from tests.support.stub_http import aio_serving
from wait_tier.holder import MAX_BODY_BYTES
from wait_tier.origin import Origin


async def _exchange() -> list[dict[str, str]]:
    seen: list[dict[str, str]] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.Response(headers={"Set-Cookie": "session=one-clients", contract.HOLD_HEADER: "1"})

    async with aio_serving(handle) as url:
        origin = Origin(url.replace("127.0.0.1", "localhost"), "key")  # (a name: a cookie jar keeps none of an address)
        try:
            client = [
                ("Host", "a.example"),
                ("Authorization", "MNS k:s"),
                ("Content-Length", "0"),
                ("Mns-Wait-Sig", "x"),
            ]
            first = await origin.call("GET", "/queues/q/messages", client, b"")
            await origin.call("GET", "/queues/q/messages", [("Host", "b.example")], b"", deadline_ms=5)
        finally:
            await origin.close()
    passed = dict(first.for_client())
    assert passed["Set-Cookie"] == "session=one-clients"  # (the client's own answer)
    assert not any(k.lower().startswith(contract.PREFIX) for k in passed)
    return seen


def test_each_request_is_signed_by_the_tier_and_carries_nothing_of_another_clients() -> None:
    first, second = asyncio.run(_exchange())
    assert contract.verify(first[contract.SIG_HEADER], "key", time.time())  # the client's "x" dropped
    assert first["Host"] == "a.example" and first["Authorization"] == "MNS k:s"
    assert contract.DEADLINE_HEADER not in first and second[contract.DEADLINE_HEADER] == "5"
    assert "Cookie" not in second  # the first client's cookie is not sent for the second
    assert "User-Agent" not in first and "Content-Type" not in first  # (nothing the client did not sign)


def test_the_holder_refuses_bodies_over_the_services_cap() -> None:
    # The holder's image carries no pipeline: its copy of the cap is pinned to the service's.
    assert MAX_BODY_BYTES == MAX_REQUEST_BYTES
