"""The holder: the wait tier's one process (asyncio, aiohttp). Each client request is passed to the origin at once;
a receive the origin answers with a hold (`contract.HOLD_HEADER`: nothing receivable now) keeps its client's
connection here, on its queue's channel (`channels.Channel`), until a wake lets it ask the origin again or its
client's wait ends (then it gets the answer the origin gave with the hold). A held receive is the client's own
request on its own connection: it is never taken for another, and never held past the deadline of its first
arrival (nor past `contract.MAX_HOLD_MS` after it: the HTTP API cuts every request at 30 s), and asked again
only before `contract.LAST_ASK_MS` after it.

Wakes (`contract.WAKE_PATH`, posted by the service: `mnsd.waiting.wakes`) come on either port, or in the origin's
answer to a request the holder passed on (`contract.WAKES_HEADER`: a send through the tier posts none); one posted by
the service or answered is relayed to the other instances (`peers`) on their wake port, which also serves the counters
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
from aiohttp import http_exceptions, web, web_protocol, web_server

from mnsd.waiting import contract
from wait_tier.channels import Channel, Waiter
from wait_tier.origin import Answer, Origin

logger = logging.getLogger("wait_tier")

MAX_REASKS = 2  # a free receive asked again at once because it looked before a wake (`Channel.stale`)
RELAYED_HEADER = "X-Wait-Tier-Relayed"
RELAY_TIMEOUT_SECONDS = 2
# Receive routes whose channel the holder learnt from the origin's answers, kept at most.
MAX_ROUTES = 10_000
# The server's bounds on what a request may be (`local_runtime.handler`, http.server's): a request line or header line
# of 64 KiB, 100 header lines, a body of `mnsd.pipeline.steps.MAX_REQUEST_BYTES` (pinned by a test; the layer's
# pipeline is not in the tier's image). The holder takes what the server takes and refuses the rest as it does.
MAX_LINE_BYTES = 65536
MAX_HEADERS = 100
MAX_BODY_BYTES = 256 * 1024
# What of a refused body is still read (and dropped), so that a client that sends its whole body before reading
# (http.client, so the SDKs) can read the answer; bounded in bytes and time, as the server bounds it.
DRAIN_BYTES = 16 * 1024 * 1024
DRAIN_SECONDS = 2.0
ERROR_XMLNS = "http://mns.aliyuncs.com/doc/v1"
HTTP_VERSIONS = (aiohttp.HttpVersion10, aiohttp.HttpVersion11)


@dataclass(frozen=True)
class Refusal:
    """An MNS error the holder answers itself (with the server's code and message for the same request)."""

    code: str
    message: str
    status: int = 400

    def response(self, host: str | None) -> web.Response:
        """MNS's error shape (the SDKs read all four fields), with a request id."""
        request_id = secrets.token_hex(12).upper()
        host_id = html.escape(f"http://{host or 'mns'}")
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<Error xmlns="{ERROR_XMLNS}"><Code>{self.code}</Code>'
            f"<Message>{html.escape(self.message)}</Message><RequestId>{request_id}</RequestId>"
            f"<HostId>{host_id}</HostId></Error>"
        )
        headers = {"x-mns-request-id": request_id, "x-mns-version": "2015-06-06"}
        return web.Response(status=self.status, text=body, content_type="text/xml", charset="utf-8", headers=headers)


URL_INVALID = Refusal("InvalidRequestURL", "Http request URL format invalid.")
URL_TOO_LONG = Refusal("InvalidRequestURL", "The request URL is too long.")
HEADERS_TOO_LARGE = Refusal("InvalidArgument", "The request headers are too large.")
LENGTH_INVALID = Refusal("InvalidArgument", "The Content-Length header is invalid.")
BODY_TOO_LARGE = Refusal("InvalidArgument", f"The request body should not be larger than {MAX_BODY_BYTES} bytes.")
NOT_CHUNKED = Refusal("InvalidArgument", "Transfer-Encoding is not supported: send a Content-Length.")
# The answer when the origin cannot be reached: a retryable 500.
ORIGIN_FAILED = Refusal("InternalError", "The wait tier could not reach the service: try again.", 500)


def parser_refusal(error: BaseException | None) -> Refusal:
    """What the HTTP parser's refusal of a request becomes: the server's answer to the same bytes."""
    if isinstance(error, http_exceptions.LineTooLong):
        line = error.args[0] if error.args else b""
        first = (line if isinstance(line, bytes) else str(line).encode("latin-1", "replace")).split(b" ", 1)[0]
        return HEADERS_TOO_LARGE if b":" in first else URL_TOO_LONG  # a header's name ends in ":", a method cannot
    text = str(error)
    if "Too many headers" in text:
        return HEADERS_TOO_LARGE
    if "Content-Length" in text:
        return LENGTH_INVALID
    if "Transfer-Encoding" in text:
        return NOT_CHUNKED
    return URL_INVALID


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
    # Wake documents taken, by where from: `posted` (by the service, on either port), `relayed` (by another instance),
    # `answered` (in the origin's answers, `contract.WAKES_HEADER`).
    told: Counter[str] = field(default_factory=Counter)
    _relaying: set[asyncio.Task[None]] = field(default_factory=set)
    _session: aiohttp.ClientSession | None = None

    def __post_init__(self) -> None:
        self.origin.told = self.take_wakes

    def stats(self) -> dict[str, object]:
        held = sum(len(c.held) for c in self.channels.values())
        return {
            "origin_calls": sum(self.calls.values()),
            "receives": self.receives,
            "holds": self.holds,
            "held": held,
            "calls": dict(self.calls),
            "wakes": dict(self.told),
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
    async def serve(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.path == contract.READY_PATH:
            return web.Response(status=204)
        if request.method == "POST" and request.path == contract.WAKE_PATH:
            return await self.take_wake(request)
        arrived = now_ms()
        refused = refusal_of(request)
        if refused is not None:
            await _drain(request)
            if request.version not in HTTP_VERSIONS:  # answered in HTTP/1.1, as the server answers
                request._cache["version"] = aiohttp.HttpVersion11  # (aiohttp's response writes the request's)
            refusal = refused.response(request.headers.get("Host"))
            refusal.force_close()
            return refusal
        body = await request.read()
        target = request.raw_path  # the path and query as sent: never decoded or normalised
        route, takes = receive_route(request.method, target, request.headers)
        if takes:
            self.receives += 1
        headers = list(request.headers.items())
        try:
            answer = await self._ask(request.method, target, headers, body, route, takes)
            while (hold := answer.header(contract.HOLD_HEADER)) is not None and takes:
                until = min(int(hold) if hold.isdigit() else 0, arrived + contract.MAX_HOLD_MS)
                woken = await self._hold(answer, Waiter(takes, until, arrived + contract.LAST_ASK_MS))
                if not woken:
                    break
                answer = await self._ask(request.method, target, headers, body, route, takes, until)
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            logger.warning("origin unreachable: %s", error)
            return ORIGIN_FAILED.response(request.host)
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
    async def take_wake(self, request: web.BaseRequest) -> web.Response:
        relayed = RELAYED_HEADER in request.headers
        try:
            document = json.loads(await request.read())
            self._take(document)
        except (ValueError, KeyError, TypeError):
            return web.Response(status=400, text="bad wake\n")
        self.told["relayed" if relayed else "posted"] += 1
        if not relayed:
            self._relay_later(document)
        return web.Response(status=204)

    def take_wakes(self, documents: list[dict[str, object]]) -> None:
        """The wakes of an origin's answer (`Origin.told`): taken here and relayed, as if the service had posted them."""
        for document in documents:
            try:
                self._take(document)
            except (ValueError, KeyError, TypeError):
                logger.warning("bad wake in the origin's answer: %.200s", document)
                continue
            self.told["answered"] += 1
            self._relay_later(document)

    def _take(self, document: Mapping[str, object]) -> None:
        """A wake document (`contract.wake_document`) told to its channel (ValueError, KeyError, TypeError: not one)."""
        channel = self.channel(str(document["channel"]))
        if "at" in document:
            self._due(channel, _whole(document["at"]))
        else:
            self.wakes += 1
            self._wake(channel.wake(max(1, _whole(document.get("count", 1))), self.wakes, now_ms()))

    def _relay_later(self, document: object) -> None:
        task = asyncio.get_running_loop().create_task(self._relay(document))
        self._relaying.add(task)
        task.add_done_callback(self._relaying.discard)

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

    async def _relay(self, document: object) -> None:
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
        if self._relaying:  # (the wakes of the last answers, passed on before the session closes)
            await asyncio.gather(*self._relaying, return_exceptions=True)
        if self._session is not None:
            await self._session.close()


def _whole(value: object) -> int:
    """A wake's count or time (TypeError, ValueError: not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"not a number: {value!r}")
    return int(value)


def refusal_of(request: web.BaseRequest) -> Refusal | None:
    """What the holder refuses itself before reading the body, as the server refuses it: a chunked body, a body over
    the cap, an HTTP version other than 1.0 and 1.1, a path that is not UTF-8 (which the holder could not pass on as
    sent: the server alone reads it as Latin-1)."""
    if request.version not in HTTP_VERSIONS:
        return URL_INVALID
    if "Transfer-Encoding" in request.headers:
        return NOT_CHUNKED
    if (request.content_length or 0) > MAX_BODY_BYTES:
        return BODY_TOO_LARGE
    try:
        request.raw_path.encode("utf-8")
    except UnicodeEncodeError:
        return URL_INVALID
    return None


async def _drain(request: web.BaseRequest) -> None:
    """Drop what the client still sends of a refused request (at most DRAIN_BYTES in DRAIN_SECONDS), so that it can
    read the answer; the connection is then closed."""
    loop = asyncio.get_running_loop()
    deadline, left = loop.time() + DRAIN_SECONDS, DRAIN_BYTES
    try:
        while left > 0 and (rest := deadline - loop.time()) > 0:
            chunk = await asyncio.wait_for(request.content.readany(), rest)
            if not chunk:
                break
            left -= len(chunk)
    except (TimeoutError, aiohttp.ClientError, OSError):
        pass


class RefusingRequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection handler, whose refusals of what its parser cannot read are MNS errors (the server's
    answer to the same bytes), not its plain-text pages."""

    def handle_error(
        self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None, message: str | None = None
    ) -> web.StreamResponse:
        if status >= 500:  # (a failure of the holder itself)
            return super().handle_error(request, status, exc, message)
        response = parser_refusal(exc).response(None)
        response.force_close()
        return response


class RefusingServer(web_server.Server):
    def __call__(self) -> web_protocol.RequestHandler:
        return RefusingRequestHandler(self, loop=self._loop, **self._kwargs)


def client_server(holder: Holder) -> web.Server:
    """The clients' face: every path passed to the origin (and wakes, readiness), within the server's bounds. Parsed by
    aiohttp's Python parser (`wait_tier.__main__`), which passes any method and a path with UTF-8 in it on, as the
    server takes them."""
    return RefusingServer(
        holder.serve,
        handler_cancellation=True,  # a held receive whose client went away leaves its channel at once
        max_line_size=MAX_LINE_BYTES,
        max_field_size=MAX_LINE_BYTES,
        max_headers=MAX_HEADERS + 1,  # (the request line counts as one)
    )


def wake_application(holder: Holder) -> web.Application:
    """The wake port's face: wakes, readiness, counters."""
    wakes = web.Application()
    wakes.router.add_post(contract.WAKE_PATH, holder.take_wake)
    wakes.router.add_get(contract.STATS_PATH, holder.stats_answer)
    wakes.router.add_get(contract.READY_PATH, _ready)
    return wakes


async def _ready(request: web.Request) -> web.Response:
    return web.Response(status=204)
