"""The holder's origin (the local server, or on AWS the function URLs of the routes the tier fronts: the receive
function's, and by their method the send and delete functions'): requests passed on over kept-alive connections
(aiohttp's pool), each signed with the tier's key (`contract.SIG_HEADER`). The wakes an answer carries
(`contract.WAKES_HEADER`: the messages its request made receivable) are told to the holder (`told`)."""

from __future__ import annotations

import logging
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from mnsd.waiting import contract

logger = logging.getLogger("wait_tier")

Told = Callable[[list[dict[str, object]]], None]  # the wake documents an answer carried

DROPPED = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
    "content-length",
}
# Requests at the origin at once, at most (more wait for a connection: a burst of first polls does not open a
# connection each to the function URL).
CONNECTIONS = 64
TIMEOUT_SECONDS = 35  # (a request the tier signed never waits at the origin; this bounds a hung one)
RESIGN_SECONDS = 600  # a signature lives an hour (`contract.sign`): a fresh one every ten minutes


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    headers: CIMultiDict[str]
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def claimed(self) -> int:
        """Messages a receive claimed (`contract.CLAIMED_HEADER`)."""
        claimed = self.headers.get(contract.CLAIMED_HEADER, "")
        return int(claimed) if claimed.isdigit() else 0

    def for_client(self) -> list[tuple[str, str]]:
        """Its headers without the contract's (the holder's server sets the length)."""
        return passed(self.headers.items())


def passed(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers passed on, either way: without the hop-by-hop ones, the length (set anew) and the contract's (a client's
    are dropped: only the tier speaks the contract with the origin)."""
    return [(k, v) for k, v in headers if k.lower() not in DROPPED and not k.lower().startswith(contract.PREFIX)]


class Origin:
    """`url`, or for a request of a method `by_method` names, that one (on AWS each route's function URL)."""

    def __init__(self, url: str, key: str, by_method: Mapping[str, str] | None = None) -> None:
        self.url, self._key = url.rstrip("/"), key
        self.by_method = {method.upper(): given.rstrip("/") for method, given in (by_method or {}).items()}
        self._session: aiohttp.ClientSession | None = None
        self._signed = ("", 0.0)
        self._batch_signed = ("", 0.0)
        self.told: Told = lambda wakes: None  # (the holder's: `Holder.take_wakes`)

    def url_for(self, method: str) -> str:
        """The origin a request of `method` goes to."""
        return self.by_method.get(method.upper(), self.url)

    def hear(self, headers: Mapping[str, str]) -> None:
        """Tell the holder the wakes an answer of the origin carries (none: nothing)."""
        value = headers.get(contract.WAKES_HEADER)
        if not value:
            return
        try:
            wakes = contract.read_wakes(value)
        except ValueError:
            logger.warning("the origin's wakes are not wakes: %.200s", value)
            return
        self.told(wakes)

    def _signature(self) -> str:
        token, at = self._signed
        now = time.time()
        if now - at > RESIGN_SECONDS:
            self._signed = token, at = contract.sign(self._key, now), now
        return token

    def _batch_signature(self) -> str:
        """The signature of the tier's batch calls (`contract.BATCH_ISSUER`: no client request passed on carries it)."""
        token, at = self._batch_signed
        now = time.time()
        if now - at > RESIGN_SECONDS:
            self._batch_signed = token, at = contract.sign(self._key, now, issuer=contract.BATCH_ISSUER), now
        return token

    async def call(
        self, method: str, path: str, headers: Iterable[tuple[str, str]], body: bytes, deadline_ms: int | None = None
    ) -> Answer:
        """The origin's answer to a client's request (`deadline_ms`: the client's, when the holder asks again); `path` is
        the path and query as the client sent them, and so passed on (never re-quoted or normalised)."""
        session = self.session()
        sent = CIMultiDict(passed(headers))
        base = self.url_for(method)
        target = urllib.parse.urlsplit(base)
        if target.scheme == "https":  # a function URL answers to its own host only: the client's is passed on
            sent["X-Forwarded-Host"] = sent.pop("Host", "")
            sent["Host"] = target.netloc
        sent[contract.SIG_HEADER] = self._signature()
        if deadline_ms is not None:
            sent[contract.DEADLINE_HEADER] = str(deadline_ms)
        # aiohttp adds none of its own headers: an MNS signature covers Content-Type, and the client sent what it signed.
        skip = [h for h in ("User-Agent", "Accept", "Accept-Encoding", "Content-Type") if h not in sent]
        async with session.request(
            method,
            URL(base + path, encoded=True),
            headers=sent,
            data=body,
            allow_redirects=False,
            skip_auto_headers=skip,
        ) as answer:
            content = await answer.read()
            self.hear(answer.headers)
            return Answer(answer.status, answer.reason or "", CIMultiDict(answer.headers), content)

    def session(self) -> aiohttp.ClientSession:
        """The kept-alive connections to the origin (made on the first call)."""
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=CONNECTIONS, enable_cleanup_closed=True)
            timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
            self._session = aiohttp.ClientSession(  # (no cookie jar: one client's cookies are not another's)
                connector=connector, timeout=timeout, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar()
            )
        return self._session

    def counts(self) -> dict[str, int]:
        """What the holder's counters show of the origin's calls beyond its own (`wait_tier.coalesce`)."""
        return {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
