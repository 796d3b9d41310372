"""Wakes in the origin's answers (`contract.WAKES_HEADER`): a request the tier passed on (signed with its key) posts no
wake, its answer carries them (`mnsd.request.api`, `mnsd.waiting.wakes.carried`), and the holder takes them as it takes
a posted wake: its own held receives woken, the wake relayed to the other instances (`wait_tier.holder`). Requests not
through the tier still post theirs. And the tier's origins by method (`wait_tier.origin.Origin.by_method`: on AWS each
route's function URL)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from aiohttp import web

from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.request import api
from mnsd.waiting import contract
from mnsd.waiting.wakes import TierWakes
from tests.support.stub_http import aio_serving
from tests.unit.access_calls import ROOT, World
from wait_tier import peers
from wait_tier.channels import Waiter
from wait_tier.coalesce import Coalescing
from wait_tier.holder import RELAYED_HEADER, Holder
from wait_tier.origin import Origin

KEY = "the-tiers-key"
MESSAGES = "/queues/q/messages"
SENT = "<Message><MessageBody>woken</MessageBody></Message>"


# -- the origin: wakes in the answer of a request through the tier, posted otherwise ------------------------------------
class Posts:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def __call__(self, body: bytes) -> None:
        self.sent.append(json.loads(body))


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> tuple[World, Posts]:
    found = World(wait_tier_key=KEY, wait_tier_wake_url="http://127.0.0.1:9/wait-tier/wake")
    wakes = found.services.messages.notifier
    assert isinstance(wakes, TierWakes)
    posts = Posts()
    monkeypatch.setattr(wakes, "post", posts)
    return found, posts


def send(world: World, token: str | None, body: str = SENT, query: str = "") -> HttpResponse:
    """A single send of the root to `q` (through the tier when `token` is its signature)."""
    headers, data = world.signed(ROOT, "POST", MESSAGES + query, body)
    if token is not None:
        headers[contract.SIG_HEADER.lower()] = token
    request = HttpRequest("POST", MESSAGES, query.lstrip("?"), headers, data, {"queue": "q"})
    return api.handle("post_messages", request, world.services)


def channel_of(world: World) -> str:
    queue = world.services.catalog.get_queue(ROOT.account_id, "q")
    assert queue is not None
    return contract.channel(queue.queue_id)


def test_a_send_through_the_tier_posts_no_wake_its_answer_carries_them(world) -> None:
    world, posts = world
    answer = send(world, contract.sign(KEY, time.time()))
    assert answer.status == 201
    assert posts.sent == []
    carried = contract.read_wakes(answer.headers[contract.WAKES_HEADER])
    assert carried[0] == {"channel": channel_of(world), "count": 1}
    assert len(carried) == 2  # (and the copy to the queue's receiver `r`, on its own channel)
    assert send(world, None).status == 201
    assert posts.sent == carried  # the same wakes a send not through the tier posts


def test_a_delayed_send_through_the_tier_carries_the_time_it_becomes_receivable(world) -> None:
    world, posts = world
    body = "<Message><MessageBody>later</MessageBody><DelaySeconds>30</DelaySeconds></Message>"
    answer = send(world, contract.sign(KEY, time.time()), body)
    assert answer.status == 201 and posts.sent == []
    wake = contract.read_wakes(answer.headers[contract.WAKES_HEADER])[0]
    assert wake["channel"] == channel_of(world)
    assert int(str(wake["at"])) >= int(world.clock.now() * 1000) + 29_000


@pytest.mark.parametrize("token", [None, contract.sign("another key", time.time()), "forged"])
def test_a_send_not_through_the_tier_posts_its_wakes_and_its_answer_carries_none(world, token) -> None:
    world, posts = world
    answer = send(world, token)
    assert answer.status == 201
    assert contract.WAKES_HEADER not in answer.headers
    assert posts.sent[0] == {"channel": channel_of(world), "count": 1} and len(posts.sent) == 2


def test_a_coalesced_batch_of_sends_carries_its_wakes_in_the_batch_calls_answer(world) -> None:
    world, posts = world
    items = []
    for n in range(3):
        headers, data = world.signed(ROOT, "POST", MESSAGES, f"<Message><MessageBody>b{n}</MessageBody></Message>")
        items.append(("POST", MESSAGES, list(headers.items()), data, None))
    token = contract.sign(KEY, time.time(), issuer=contract.BATCH_ISSUER)
    call = HttpRequest(
        "POST", contract.BATCH_PATH, "", {contract.SIG_HEADER.lower(): token}, contract.batch_document(items)
    )
    answer = api.handle("post_messages", call, world.services)
    assert [status for status, _, _ in contract.read_answers(answer.body)] == [201, 201, 201]
    assert posts.sent == []
    carried = contract.read_wakes(answer.headers[contract.WAKES_HEADER])
    assert carried[0] == {"channel": channel_of(world), "count": 3}  # one batch send: one wake for its three messages
    assert all(contract.WAKES_HEADER not in dict(h) for _, h, _ in contract.read_answers(answer.body))


# -- the holder: an answer's wakes taken as posted ones ---------------------------------------------------------------
WAKE = {"channel": "mns.q", "count": 1}


async def serving_origin_and_peer(test: Any) -> tuple[list[tuple[str, str]], list[tuple[dict[str, Any], str]]]:
    """An origin answering every request with one wake in its answer (and recording method and path), and a peer
    holder's wake port recording what is relayed to it."""
    called: list[tuple[str, str]] = []
    relayed: list[tuple[dict[str, Any], str]] = []

    async def origin(request: web.Request) -> web.Response:
        await request.read()
        called.append((request.method, request.path_qs))
        headers = {contract.WAKES_HEADER: contract.wakes_header([WAKE]), "x-mns-request-id": "ID"}
        if request.path == contract.BATCH_PATH:
            answers = [(201, {"x-mns-request-id": "ID"}, b"") for _ in contract.read_batch(await request.read())]
            return web.Response(body=contract.answers_document(answers), headers=headers)
        return web.Response(status=201, headers=headers)

    async def peer(request: web.Request) -> web.Response:
        relayed.append((json.loads(await request.read()), request.headers.get(RELAYED_HEADER, "")))
        return web.Response(status=204)

    async with aio_serving(origin) as origin_url, aio_serving(peer) as peer_url:
        await test(origin_url, peer_url + contract.WAKE_PATH, relayed)
    return called, relayed


def held(holder: Holder) -> Waiter:
    """A receive held on `mns.q`."""
    waiter = Waiter(1, int(time.time() * 1000) + 20_000, signal=asyncio.Event())
    holder.channel("mns.q").hold(waiter)
    return waiter


async def relayed_soon(relayed: list[Any], count: int) -> None:
    for _ in range(200):
        if len(relayed) >= count:
            return
        await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    ("coalesced", "sends", "path"),
    [(False, 1, MESSAGES), (True, 3, contract.BATCH_PATH)],  # a send passed on alone; three in one batch call
)
def test_a_wake_in_the_origins_answer_wakes_a_held_receive_here_and_is_relayed_to_the_other_instances_once(
    coalesced: bool, sends: int, path: str
) -> None:
    async def test(origin_url: str, peer_url: str, relayed: list[Any]) -> None:
        origin = Coalescing(origin_url, KEY, window_ms=50) if coalesced else Origin(origin_url, KEY)
        holder = Holder(origin, lambda: [peer_url])
        try:
            waiter = held(holder)
            calls = [holder.origin.call("POST", MESSAGES, [("Host", "h")], f"m{n}".encode()) for n in range(sends)]
            answers = await asyncio.gather(*calls)
            assert [a.status for a in answers] == [201] * sends
            # (the holder's server drops the contract's headers: `Answer.for_client`)
            assert all(not name.lower().startswith(contract.PREFIX) for a in answers for name, _ in a.for_client())
            assert waiter.signal.is_set()
            assert holder.stats()["wakes"] == {"answered": 1}
            await relayed_soon(relayed, 1)
        finally:
            await holder.close()

    called, relayed = asyncio.run(serving_origin_and_peer(test))
    assert called == [("POST", path)]
    assert relayed == [(WAKE, "1")]  # (relayed: the peer takes it without relaying it again)


def test_an_answer_without_wakes_wakes_nothing_and_a_malformed_one_is_ignored() -> None:
    holder = Holder(Origin("http://127.0.0.1:9", KEY))
    holder.origin.hear({})
    holder.origin.hear({contract.WAKES_HEADER: "not json"})
    holder.origin.hear({contract.WAKES_HEADER: '{"channel": "mns.q"}'})
    assert holder.stats()["wakes"] == {}


# -- the origins by method ----------------------------------------------------------------------------------------------
def test_each_method_goes_to_its_own_origin_and_its_batches_too() -> None:
    seen: dict[str, list[tuple[str, str]]] = {"receive": [], "send": []}

    async def run() -> None:
        def recording(name: str) -> Any:
            async def handle(request: web.Request) -> web.Response:
                body = await request.read()
                seen[name].append((request.method, request.path))
                if request.path == contract.BATCH_PATH:
                    answers = [(201, {}, b"") for _ in contract.read_batch(body)]
                    return web.Response(body=contract.answers_document(answers))
                return web.Response(status=200)

            return handle

        async with aio_serving(recording("receive")) as receive, aio_serving(recording("send")) as sends:
            origin = Coalescing(receive, KEY, window_ms=20, by_method={"post": sends})
            try:
                await origin.call("GET", MESSAGES, [("Host", "h")], b"")
                await asyncio.gather(*(origin.call("POST", MESSAGES, [("Host", "h")], b"m") for _ in range(2)))
            finally:
                await origin.close()

    asyncio.run(run())
    assert seen == {"receive": [("GET", MESSAGES)], "send": [("POST", contract.BATCH_PATH)]}


def test_the_peers_cloud_map_names_are_reached_on_the_wake_path() -> None:
    instances = [{"Attributes": {"AWS_INSTANCE_IPV4": ip}} for ip in ("10.0.0.1", "10.0.0.2")] + [{"Attributes": {}}]
    assert peers.wake_urls(instances, 7990, own="10.0.0.1") == [f"http://10.0.0.2:7990{contract.WAKE_PATH}"]
