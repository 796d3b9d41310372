"""The holder: the wait tier's one process (asyncio, aiohttp). Each client request is passed to the origin at once;
a receive the origin answers with a hold (`contract.HOLD_HEADER`: nothing receivable now) keeps its client's
connection here, on its queue's channel (`channels.Channel`), until a wake lets it ask the origin again or its
client's wait ends (then it gets the answer the origin gave with the hold). A held receive is the client's own
request on its own connection: it is never taken for another, and never held past the deadline of its first
arrival (nor past `contract.MAX_HOLD_MS` after it: the HTTP API cuts every request at 30 s), and asked again
only before `contract.LAST_ASK_MS` after it.

Wakes (`contract.WAKE_PATH`, posted by the service: `mnsd.waiting.wakes`) come on either port; one posted by the
service is relayed to the other instances (`peers`) on their wake port, which also serves the counters
(`contract.STATS_PATH`).
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import secrets
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from mnsd.waiting import contract
from wait_tier.channels import Channel, Waiter
from wait_tier.origin import Answer, Origin

logger = logging.getLogger("wait_tier")

MAX_REASKS = 2  # a free receive asked again at once because it looked before a wake (`Channel.stale`)
RELAYED_HEADER = "X-Wait-Tier-Relayed"
RELAY_TIMEOUT_SECONDS = 2
# Receive routes whose channel the holder learnt from the origin's answers, kept at most.
MAX_ROUTES = 10_000
# The answer when the origin cannot be reached: MNS's error shape (the SDKs read all four fields), a retryable 500.
ORIGIN_FAILED = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error xmlns="http://mns.aliyuncs.com/doc/v1/"><Code>InternalError</Code>'
    "<Message>The wait tier could not reach the service: try again.</Message><RequestId>{id}</RequestId>"
    "<HostId>{host}</HostId></Error>"
)


def now_ms() -> int:
    return int(time.time() * 1000)


def receive_route(method: str, path_qs: str, headers: Mapping[str, str]) -> tuple[str, int]:
    """A receive's route (its queue, for one host and access key) and how many messages it takes at most (0: not a
    receive, or a peek)."""
    base, _, query = path_qs.partition("?")
    if method != "GET" or not base.endswith("/messages"):
        return "", 0
    params = urllib.parse.parse_qs(query)
    if params.get("peekonly", [""])[0].lower() == "true":
        return "", 0
    count = params.get("numOfMessages", ["1"])[0]
    auth, host = headers.get("Authorization", ""), headers.get("Host", "")
    return f"{host} {auth.partition(':')[0]} {base}", int(count) if count.isdigit() and int(count) > 0 else 1


@dataclass(eq=False)
class Holder:
    origin: Origin
    peers: Callable[[], list[str]] = lambda: []  # the other instances' wake URLs
    channels: dict[str, Channel] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)  # receive route -> its queue's channel
    # Origin calls by why (`first`: a client's request; `woken`: a held one after its wake; `reask`: a free one
    # that looked before a wake) and what they got (`answered`, `held`); client receives; holds.
    calls: Counter[str] = field(default_factory=Counter)
    receives: int = 0
    holds: int = 0
    wakes: int = 0  # wakes taken so far (`Channel.stale`)
    _session: aiohttp.ClientSession | None = None

    def stats(self) -> dict[str, object]:
        held = sum(len(c.held) for c in self.channels.values())
        return {
            "origin_calls": sum(self.calls.values()),
            "receives": self.receives,
            "holds": self.holds,
            "held": held,
            "calls": dict(self.calls),
            "origin": self.origin.counts(),  # (coalesced batches: `wait_tier.coalesce`)
        }

    def channel(self, name: str) -> Channel:
        found = self.channels.get(name)
        if found is None:
            found = self.channels[name] = Channel(name)
        return found

    def _forget_if_idle(self, channel: Channel) -> None:
        if channel.idle() and self.channels.get(channel.name) is channel:
            del self.channels[channel.name]

    # -- a client's request ---------------------------------------------------------------------------------------
    async def serve(self, request: web.Request) -> web.StreamResponse:
        if request.path == contract.READY_PATH:
            return web.Response(status=204)
        if request.method == "POST" and request.path == contract.WAKE_PATH:
            return await self.take_wake(request)
        arrived = now_ms()
        body = await request.read()
        route, takes = receive_route(request.method, request.path_qs, request.headers)
        if takes:
            self.receives += 1
        headers = list(request.headers.items())
        try:
            answer = await self._ask(request.method, request.path_qs, headers, body, route, takes)
            while (hold := answer.header(contract.HOLD_HEADER)) is not None and takes:
                until = min(int(hold) if hold.isdigit() else 0, arrived + contract.MAX_HOLD_MS)
                woken = await self._hold(answer, Waiter(takes, until, arrived + contract.LAST_ASK_MS))
                if not woken:
                    break
                answer = await self._ask(request.method, request.path_qs, headers, body, route, takes, until)
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            logger.warning("origin unreachable: %s", error)
            request_id = secrets.token_hex(12).upper()
            failed = ORIGIN_FAILED.format(id=request_id, host=html.escape(f"http://{request.host}"))
            return web.Response(
                status=500, text=failed, content_type="text/xml", headers={"x-mns-request-id": request_id}
            )
        return web.Response(status=answer.status, reason=answer.reason, headers=answer.for_client(), body=answer.body)

    async def _ask(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes, route: str, takes: int,
        deadline_ms: int | None = None,
    ) -> Answer:  # fmt: skip
        """The origin's answer; a free receive that found nothing having looked before a wake asks again."""
        why, free = ("first", True) if deadline_ms is None else ("woken", False)
        known = self.routes.get(route) if takes else None
        for reask in range(MAX_REASKS + 1):
            channel = self.channel(known) if known else None
            begun = self.wakes
            if channel:
                channel.begin(takes, free)
            answer: Answer | None = None
            try:
                answer = await self.origin.call(method, path, headers, body, deadline_ms)
                held = answer.header(contract.HOLD_HEADER) is not None
                self.calls[f"{why}.{'held' if held else 'answered'}"] += 1
            finally:
                if channel:  # (a failed call claimed nothing the holder knows of)
                    channel.end(takes, free, answer.claimed() if answer else 0)
                    self._wake(channel.settle(now_ms()))
            queue = self._learn(route, answer)
            if queue is None or not (
                held and free and reask < MAX_REASKS and queue.stale(begun, channel is queue, takes)
            ):
                return answer
            known, why = queue.name, "reask"
        raise AssertionError("unreached: the last round returns")

    def _learn(self, route: str, answer: Answer) -> Channel | None:
        """The channel of a receive's answer (None: not a receive), its route's, and what the answer tells of it."""
        name = answer.header(contract.CHANNEL_HEADER)
        if name is None:
            return None
        if route and self.routes.get(route) != name:
            if len(self.routes) >= MAX_ROUTES:
                self.routes.clear()
            self.routes[route] = name
        channel = self.channel(name)
        due = answer.header(contract.DUE_HEADER)
        if due is not None and due.isdigit():
            self._due(channel, int(due))
        more = answer.header(contract.MORE_HEADER)
        if more is not None and more.isdigit():
            self._wake(channel.more(int(more), now_ms()))
        return channel

    async def _hold(self, answer: Answer, waiter: Waiter) -> bool:
        """Hold the receive on its channel until a wake (True) or its wait's end (False)."""
        rest = waiter.until_ms - now_ms()
        if rest <= 0:
            return False
        channel = self.channel(str(answer.header(contract.CHANNEL_HEADER)))
        woken = waiter.signal = asyncio.Event()
        channel.hold(waiter)
        self.holds += 1
        try:
            await asyncio.wait_for(woken.wait(), rest / 1000)
            return True
        except TimeoutError:
            return False
        finally:  # (timed out, or the client went away: its handler is cancelled)
            channel.leave(waiter)
            self._forget_if_idle(channel)

    # -- wakes -------------------------------------------------------------------------------------------------------
    async def take_wake(self, request: web.Request) -> web.Response:
        try:
            document = json.loads(await request.read())
            channel = self.channel(str(document["channel"]))
            if "at" in document:
                self._due(channel, int(document["at"]))
            else:
                self.wakes += 1
                self._wake(channel.wake(max(1, int(document.get("count", 1))), self.wakes, now_ms()))
        except (ValueError, KeyError, TypeError):
            return web.Response(status=400, text="bad wake\n")
        if RELAYED_HEADER not in request.headers:
            asyncio.get_running_loop().create_task(self._relay(document))
        return web.Response(status=204)

    def _wake(self, waiters: list[Waiter]) -> None:
        for waiter in waiters:
            waiter.signal.set()

    def _due(self, channel: Channel, at_ms: int) -> None:
        if channel.due(at_ms):
            loop = asyncio.get_running_loop()
            loop.call_later(max(0.0, (at_ms - now_ms()) / 1000), self._fire, channel)

    def _fire(self, channel: Channel) -> None:
        self._wake(channel.fire(now_ms()))
        self._forget_if_idle(channel)

    async def _relay(self, document: dict[str, object]) -> None:
        peers = await asyncio.get_running_loop().run_in_executor(None, self.peers)
        if not peers:
            return
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=RELAY_TIMEOUT_SECONDS))
        for peer in peers:
            try:
                async with self._session.post(peer, json=document, headers={RELAYED_HEADER: "1"}) as answer:
                    await answer.read()
            except (aiohttp.ClientError, TimeoutError, OSError) as error:
                logger.warning("wake not relayed to %s: %s", peer, error)

    async def stats_answer(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def close(self) -> None:
        await self.origin.close()
        if self._session is not None:
            await self._session.close()


def applications(holder: Holder) -> tuple[web.Application, web.Application]:
    """The holder's two faces: the clients' (every path passed to the origin, wakes, readiness) and the wake port's
    (wakes, readiness, counters)."""
    public = web.Application(client_max_size=1 << 20)
    public.router.add_route("*", "/{tail:.*}", holder.serve)
    wakes = web.Application()
    wakes.router.add_post(contract.WAKE_PATH, holder.take_wake)
    wakes.router.add_get(contract.STATS_PATH, holder.stats_answer)
    wakes.router.add_get(contract.READY_PATH, _ready)
    return public, wakes


async def _ready(request: web.Request) -> web.Response:
    return web.Response(status=204)
