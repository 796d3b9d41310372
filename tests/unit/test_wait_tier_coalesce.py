"""The holder's side of coalescing (`wait_tier.coalesce.Coalescing`) against a small origin of this test: which
requests it coalesces, the window a request waits at most, the batch call it makes (signed as the tier's batch, each
client's request whole) and each client's own answer back; a lone request, and every request with the window at 0,
passed on as before."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from mnsd.waiting import contract
from tests.support.stub_http import aio_serving
from wait_tier.coalesce import MAX_REQUESTS, Coalescing, kind_of

SEND = "/queues/q/messages"


class Recorded:
    """The origin's calls: (path, signature, the requests a batch carried)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[Any]]] = []


async def with_origin(test: Callable[[str, Recorded], Awaitable[None]]) -> Recorded:
    recorded = Recorded()

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        signature = request.headers.get(contract.SIG_HEADER, "")
        if request.path == contract.BATCH_PATH:
            carried = contract.read_batch(body)
            recorded.calls.append((request.path_qs, signature, carried))
            answers = [
                (201, {"x-mns-request-id": f"ID{n}", "Content-Type": "text/xml"}, b"answer to " + each[3])
                for n, each in enumerate(carried)
            ]
            return web.Response(body=contract.answers_document(answers), content_type="application/json")
        recorded.calls.append((request.path_qs, signature, [body]))
        return web.Response(status=201, body=b"alone: " + body, headers={"x-mns-request-id": "ALONE"})

    async with aio_serving(handle) as url:
        await test(url, recorded)
    return recorded


def client(n: int) -> list[tuple[str, str]]:
    return [("Host", "mns.example"), ("Authorization", f"MNS KEY{n}:signature{n}"), ("Mns-Wait-Sig", "a client's")]


def test_single_sends_deletes_and_receives_are_coalesced_and_nothing_else() -> None:
    assert kind_of("POST", "/queues/q/messages") == "send"
    assert kind_of("DELETE", "/queues/q/messages?ReceiptHandle=h") == "delete"
    assert kind_of("DELETE", "/queues/q/messages") is None  # a batch delete
    assert kind_of("GET", "/queues/q/messages?waitseconds=10") == "receive"
    assert kind_of("GET", "/queues/q/messages?numOfMessages=16") is None  # a batch receive
    assert kind_of("GET", "/queues/q/messages?peekonly=true") is None
    assert kind_of("PUT", "/queues/q/messages?ReceiptHandle=h&VisibilityTimeout=5") is None
    assert kind_of("POST", "/topics/t/messages") is None
    assert kind_of("POST", "/queues/q/messages/x") is None and kind_of("POST", "/queues//messages") is None


def test_concurrent_single_sends_go_as_one_call_each_client_its_own_answer() -> None:
    got: list[Any] = []

    async def test(url: str, recorded: Recorded) -> None:
        origin = Coalescing(url, "key", window_ms=50)
        try:
            answers = await asyncio.gather(*(origin.call("POST", SEND, client(n), f"m{n}".encode()) for n in range(5)))
            got.extend(answers)
            assert origin.counts() == {"batches": 1, "coalesced": 5, "send.batches": 1, "send.coalesced": 5}
        finally:
            await origin.close()

    recorded = asyncio.run(with_origin(test))
    ((path, signature, carried),) = recorded.calls
    assert path == contract.BATCH_PATH
    assert contract.verify(signature, "key", time.time(), contract.BATCH_ISSUER)
    assert [c[3] for c in carried] == [f"m{n}".encode() for n in range(5)]
    headers = [dict(c[2]) for c in carried]
    assert [h["Authorization"] for h in headers] == [f"MNS KEY{n}:signature{n}" for n in range(5)]
    assert all("Mns-Wait-Sig" not in h for h in headers)  # (a client's contract headers dropped)
    assert [a.body for a in got] == [f"answer to m{n}".encode() for n in range(5)]
    assert [a.header("x-mns-request-id") for a in got] == [f"ID{n}" for n in range(5)]
    assert all(a.status == 201 and a.reason == "Created" for a in got)


def test_a_lone_request_waits_the_window_at_most_and_goes_as_it_came() -> None:
    timers: list[float] = []

    async def test(url: str, recorded: Recorded) -> None:
        loop = asyncio.get_running_loop()

        def later(delay: float, callback: Callable[..., None], *args: Any) -> asyncio.TimerHandle:
            timers.append(delay)
            return loop.call_soon(callback, *args)  # type: ignore[return-value]  # (the window's end, at once)

        origin = Coalescing(url, "key", window_ms=3, later=later)
        try:
            answer = await origin.call("POST", SEND, client(0), b"alone")
            assert answer.body == b"alone: alone" and origin.counts() == {"alone": 1}
        finally:
            await origin.close()

    recorded = asyncio.run(with_origin(test))
    assert timers == [0.003]  # its group's one timer: the window
    assert [c[0] for c in recorded.calls] == [SEND]  # passed on as the holder passes any request


def test_a_full_group_goes_at_once_and_the_next_request_starts_another() -> None:
    async def test(url: str, recorded: Recorded) -> None:
        origin = Coalescing(url, "key", window_ms=60_000)  # (only a full group goes before the window ends)
        try:
            first = [origin.call("POST", SEND, client(n), b"x") for n in range(MAX_REQUESTS)]
            await asyncio.wait_for(asyncio.gather(*first), 10)
            assert origin.counts()["send.coalesced"] == MAX_REQUESTS
        finally:
            await origin.close()  # (sends what is open)

    recorded = asyncio.run(with_origin(test))
    assert [len(c[2]) for c in recorded.calls] == [MAX_REQUESTS]


def test_with_the_window_at_zero_every_request_goes_alone() -> None:
    async def test(url: str, recorded: Recorded) -> None:
        origin = Coalescing(url, "key", window_ms=0)
        try:
            await asyncio.gather(*(origin.call("POST", SEND, client(n), b"x") for n in range(4)))
            assert origin.counts() == {}
        finally:
            await origin.close()

    recorded = asyncio.run(with_origin(test))
    assert [c[0] for c in recorded.calls] == [SEND] * 4


def test_queues_and_operations_are_coalesced_apart_and_a_client_gone_is_left_out() -> None:
    async def test(url: str, recorded: Recorded) -> None:
        origin = Coalescing(url, "key", window_ms=30)
        try:
            gone = asyncio.ensure_future(origin.call("POST", SEND, client(9), b"gone"))
            calls = [
                origin.call("POST", SEND, client(1), b"q1"),
                origin.call("POST", SEND, client(2), b"q2"),
                origin.call("POST", "/queues/other/messages", client(3), b"o1"),
                origin.call("POST", "/queues/other/messages", client(4), b"o2"),
                origin.call("GET", "/queues/q/messages?waitseconds=3", client(5), b""),
            ]
            await asyncio.sleep(0)
            gone.cancel()
            await asyncio.gather(*calls)
        finally:
            await origin.close()

    recorded = asyncio.run(with_origin(test))
    carried = sorted(
        sorted(c[3] for c in call[2]) if call[0] == contract.BATCH_PATH else call[2] for call in recorded.calls
    )
    assert carried == [[b""], [b"o1", b"o2"], [b"q1", b"q2"]]


def three_sends(handle: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> list[Any]:
    """Three sends coalesced into one batch call to an origin answering as `handle` does: each one's outcome."""

    async def run() -> list[Any]:
        async with aio_serving(handle) as url:
            origin = Coalescing(url, "key", window_ms=20)
            try:
                calls = (origin.call("POST", SEND, client(n), b"x") for n in range(3))
                return list(await asyncio.gather(*calls, return_exceptions=True))
            finally:
                await origin.close()

    return asyncio.run(run())


def test_a_refused_batch_is_each_clients_answer() -> None:
    async def refuse(request: web.Request) -> web.Response:
        return web.Response(status=403, body=b"<Error>AccessDenied</Error>", headers={"x-mns-request-id": "R"})

    assert [(a.status, a.body) for a in three_sends(refuse)] == [(403, b"<Error>AccessDenied</Error>")] * 3


@pytest.mark.parametrize("document", [b"{}", b"not json", json.dumps({"answers": [{"status": 201}]}).encode()])
def test_an_answer_that_is_not_a_batchs_is_a_failure_of_each_call(document: bytes) -> None:
    async def bad(request: web.Request) -> web.Response:
        return web.Response(body=document, content_type="application/json")

    assert all(isinstance(outcome, OSError) for outcome in three_sends(bad))
