"""The holder's origin (the local server, or the receive function's URL on AWS): requests passed on over
kept-alive connections (aiohttp's pool), each signed with the tier's key (`contract.SIG_HEADER`)."""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

import aiohttp
from multidict import CIMultiDict

from mnsd.waiting import contract

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
    def __init__(self, url: str, key: str) -> None:
        self.url, self._key = url.rstrip("/"), key
        self._target = urllib.parse.urlsplit(self.url)
        self._session: aiohttp.ClientSession | None = None
        self._signed = ("", 0.0)
        self._batch_signed = ("", 0.0)

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
        """The origin's answer to a client's request (`deadline_ms`: the client's, when the holder asks again)."""
        session = self.session()
        sent = CIMultiDict(passed(headers))
        if self._target.scheme == "https":  # a function URL answers to its own host only: the client's is passed on
            sent["X-Forwarded-Host"] = sent.pop("Host", "")
            sent["Host"] = self._target.netloc
        sent[contract.SIG_HEADER] = self._signature()
        if deadline_ms is not None:
            sent[contract.DEADLINE_HEADER] = str(deadline_ms)
        # aiohttp adds none of its own headers: an MNS signature covers Content-Type, and the client sent what it signed.
        skip = [h for h in ("User-Agent", "Accept", "Accept-Encoding", "Content-Type") if h not in sent]
        async with session.request(
            method, self.url + path, headers=sent, data=body, allow_redirects=False, skip_auto_headers=skip
        ) as answer:
            content = await answer.read()
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
