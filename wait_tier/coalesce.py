"""Coalescing: single sends, single deletes and single receives of one queue that reach the holder within a window of a
few milliseconds go to the origin as one call (`contract.BATCH_PATH`, signed as the tier's batch), which carries each
client's request whole; the origin authenticates, limits and authorizes each as if it had come alone, serves the
accepted ones of a queue together (one batch send: one pack; one batch delete; one claim) and answers each with its
own answer (`mnsd.request.coalesced`), which goes back to its own client as if the holder had passed it on alone.

A request waits at most the window (`WAIT_TIER_COALESCE_MS`, `WINDOW_MS` by default; 0 turns coalescing off) from the
first of its group; a group is sent at once when it holds `MAX_REQUESTS` or `MAX_BYTES` of bodies; a group of one is
passed on as the holder passes any request. What is not a single send, delete or receive of a queue (batches, peeks,
anything else) is passed on at once. A client that went away before its group was sent is left out of it.
"""

from __future__ import annotations

import asyncio
import http
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from multidict import CIMultiDict

from mnsd.waiting import contract
from wait_tier.origin import Answer, Origin, passed

WINDOW_MS = 2.0
MAX_REQUESTS = 16  # a batch send's, a batch delete's and a batch receive's most
MAX_BYTES = 128 * 1024  # bodies in one batch call, at most (the origin reads 256 KB; the bodies travel in base64)

Request = tuple[str, str, list[tuple[str, str]], bytes, int | None]  # method, path, headers, body, deadline
Later = Callable[..., asyncio.TimerHandle]  # (delay in seconds, callback, *args): `loop.call_later`


def kind_of(method: str, path: str) -> str | None:
    """Which single operation a request is, when the holder coalesces it (`send`, `delete`, `receive`), else None."""
    base, _, query = path.partition("?")
    parts = base.split("/")
    if len(parts) != 4 or parts[1] != "queues" or not parts[2] or parts[3] != "messages":
        return None
    params = {name.lower(): value for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True)}
    if method == "POST":
        return "send"  # (a batch send among them is served alone by the origin)
    if method == "DELETE" and "receipthandle" in params:
        return "delete"
    if method == "GET" and "numofmessages" not in params and params.get("peekonly", "").lower() != "true":
        return "receive"
    return None


@dataclass(eq=False)
class Group:
    """The requests of one queue and operation waiting for their batch call."""

    requests: list[tuple[Request, asyncio.Future[Answer]]] = field(default_factory=list)
    size: int = 0
    timer: asyncio.TimerHandle | None = None


class Coalescing(Origin):
    """The origin, with single requests of a queue that come together passed on as one call."""

    def __init__(
        self,
        url: str,
        key: str,
        window_ms: float = WINDOW_MS,
        later: Later | None = None,
        by_method: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(url, key, by_method)
        self.window_ms = window_ms
        self._later = later  # (a test's timer; else the event loop's)
        self._groups: dict[tuple[str, str, str], Group] = {}
        self._sending: set[asyncio.Task[None]] = set()
        # Batch calls and the requests they carried (in all, and by kind: `send.batches`, ...), and requests passed on
        # alone (a group of one).
        self.counted: Counter[str] = Counter()

    def counts(self) -> dict[str, int]:
        return dict(self.counted)

    async def call(
        self, method: str, path: str, headers: Iterable[tuple[str, str]], body: bytes, deadline_ms: int | None = None
    ) -> Answer:
        kind = kind_of(method, path) if self.window_ms > 0 else None
        if kind is None or len(body) > MAX_BYTES:
            return await super().call(method, path, headers, body, deadline_ms)
        headers = list(headers)
        host = next((value for name, value in headers if name.lower() == "host"), "")
        key = (kind, host, path.partition("?")[0])
        group = self._groups.get(key)
        if group is not None and group.size + len(body) > MAX_BYTES:
            self._send(key)
            group = None
        loop = asyncio.get_running_loop()
        if group is None:
            group = self._groups[key] = Group()
            group.timer = (self._later or loop.call_later)(self.window_ms / 1000, self._send, key)
        answer: asyncio.Future[Answer] = loop.create_future()
        group.requests.append(((method, path, headers, body, deadline_ms), answer))
        group.size += len(body)
        if len(group.requests) >= MAX_REQUESTS:
            self._send(key)
        return await answer

    def _send(self, key: tuple[str, str, str]) -> None:
        group = self._groups.pop(key, None)
        if group is None:
            return
        if group.timer is not None:
            group.timer.cancel()
        waiting = [(request, answer) for request, answer in group.requests if not answer.done()]  # (gone: left out)
        if waiting:
            task = asyncio.get_running_loop().create_task(self._answer(key[0], waiting))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _answer(self, kind: str, waiting: list[tuple[Request, asyncio.Future[Answer]]]) -> None:
        try:
            if len(waiting) == 1:
                self.counted["alone"] += 1
                answers = [await super().call(*waiting[0][0])]
            else:
                self.counted.update(
                    {"batches": 1, "coalesced": len(waiting), f"{kind}.batches": 1, f"{kind}.coalesced": len(waiting)}
                )
                answers = await self._batch([request for request, _ in waiting])
        except Exception as error:  # noqa: BLE001 (each client gets the failure, as if its own call had failed)
            for _, answer in waiting:
                if not answer.done():
                    answer.set_exception(error)
            return
        for (_, answer), given in zip(waiting, answers, strict=True):
            if not answer.done():
                answer.set_result(given)

    async def _batch(self, requests: list[Request]) -> list[Answer]:
        """One call carrying every request: each one's answer (the call's own, to each, when the origin refused it)."""
        document = contract.batch_document([(m, p, passed(h), b, d) for m, p, h, b, d in requests])
        sent = {"Content-Type": "application/json", contract.SIG_HEADER: self._batch_signature()}
        base = self.url_for(requests[0][0])  # (one operation's: its route's function)
        target = urllib.parse.urlsplit(base)
        if target.scheme == "https":
            sent["Host"] = target.netloc
        async with self.session().post(
            base + contract.BATCH_PATH, data=document, headers=sent, allow_redirects=False
        ) as answer:
            content = await answer.read()
            self.hear(answer.headers)  # (the wakes of the whole batch: its sends')
            if answer.status != 200:
                refused = Answer(answer.status, answer.reason or "", CIMultiDict(answer.headers), content)
                return [refused] * len(requests)
        try:
            answers = contract.read_answers(content)
        except ValueError as error:
            raise OSError(f"the origin's batch answer is not one: {error}") from None
        if len(answers) != len(requests):
            raise OSError(f"the origin answered {len(answers)} of a batch of {len(requests)}")
        return [Answer(status, _reason(status), CIMultiDict(headers), body) for status, headers, body in answers]

    async def close(self) -> None:
        for key in list(self._groups):
            self._send(key)
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)
        await super().close()


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""
