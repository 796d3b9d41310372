"""The wait tier's holder is a front door too (`make run WAIT_TIER=holder`, `-c waitTier=grip`): hostile HTTP sent to
it gets the answer the server it fronts gives the same bytes (status and MNS error code, in MNS's XML with a request
id), never the holder's HTTP library's plain-text page, and never a request normalised on the way: the path and query
reach the origin, and the signature check, exactly as the client sent them."""

from __future__ import annotations

import threading
import time
from email.utils import formatdate

import pytest

from tests.e2e.tier_run import TierRun, tier_server
from tests.support.raw_http import RawResponse, assert_mns_error, exchange, request
from tests.support.servers import ACCOUNT_A, server_env
from tests.support.signers import v2_signature


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> TierRun:
    with tier_server(tmp_path_factory.mktemp("holder-hostile"), server_env) as started:
        for url in (started.origin, started.url):  # (the server's first answer loads what it serves with)
            exchange(url, request("GET", "/queues", {}), timeout=60)
        yield started


def signed(method: str, sent: str, signed_as: str | None = None, body: bytes = b"") -> bytes:
    """A request for `sent` (path and query as on the wire), V2-signed over `signed_as` (by default what is sent)."""
    date = formatdate(usegmt=True)
    headers = {"x-mns-version": "2015-06-06"}
    signature = v2_signature(ACCOUNT_A[2], method, "", "text/xml", date, headers, signed_as or sent)
    return request(
        method,
        sent,
        {
            "Date": date,
            "Content-Type": "text/xml",
            "Content-Length": str(len(body)),
            "Authorization": f"MNS {ACCOUNT_A[1]}:{signature}",
            **headers,
        },
        body,
    )


def same_answer(run: TierRun, data: bytes) -> RawResponse:
    """The holder's answer to `data`, checked to be the server's own (status and MNS error code)."""
    direct, held = exchange(run.origin, data), exchange(run.url, data)
    assert (held.status, held.error_code()) == (direct.status, direct.error_code()), held.body[:300]
    if held.status >= 400:
        assert_mns_error(held, held.status, str(direct.error_code()))
    return held


ONE_MB = 1 << 20
HOSTILE = {
    "request-line-over-8-kb": b"GET /queues?x-" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "request-line-over-64-kb": b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "header-over-8-kb": request("GET", "/queues", {"X-Big": "a" * 9000}),
    "header-over-64-kb": request("GET", "/queues", {"X-Big": "a" * 70_000}),
    "many-headers": request("GET", "/queues", {f"X-H{i}": "a" for i in range(150)}),
    "one-mb-body": request("POST", "/queues/q/messages", {"Content-Length": str(ONE_MB)}, b"x" * ONE_MB),
    "one-gb-announced": request("POST", "/queues/q/messages", {"Content-Length": str(10**9)}),
    "bad-content-length": request("POST", "/queues/q/messages", {"Content-Length": "1e3"}),
    "two-content-lengths": request("POST", "/queues/q/messages", {"Content-Length": "1"}) + b"x",
    "chunked": request("POST", "/queues/q/messages", {"Transfer-Encoding": "chunked"}) + b"1\r\nx\r\n0\r\n\r\n",
    "raw-utf8-path": "GET /queues/\u00e9t\u00e9 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode(),
    "unknown-method": request("FROBNICATE", "/queues/q", {"Content-Length": "0"}),
    "patch": request("PATCH", "/queues/q", {"Content-Length": "0"}),
    "bad-version": b"GET /queues HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    "bad-request-line": b"NONSENSE\r\n\r\n",
    "empty-segment": request("GET", "//queues", {}),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_http_gets_the_servers_answer_in_mns_shape(run, name) -> None:
    data = HOSTILE[name]
    if name == "two-content-lengths":
        data = data.replace(b"Content-Length: 1\r\n", b"Content-Length: 1\r\nContent-Length: 2\r\n")
    same_answer(run, data)


def test_a_path_that_is_not_utf8_is_refused_in_mns_shape(run) -> None:
    # The server reads such bytes as Latin-1; the holder cannot pass them on as sent (nor can API Gateway, ALB or a
    # function URL), so it refuses them itself: docs/hostile-input.md.
    held = exchange(run.url, b"GET /queues/\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert_mns_error(held, 400, "InvalidRequestURL")


@pytest.mark.parametrize(
    "sent",
    [
        "/queues/../queues",  # signed as sent: never read as `/queues`
        "/%71ueues",  # `q` encoded: no route (routes match the path as sent)
        "/queues/a%2Fb",
        "/queues?x=%41&y=+",
        "/queues/../../etc/passwd",
    ],
)
def test_the_path_and_query_reach_the_origin_as_sent(run, sent) -> None:
    same_answer(run, signed("GET", sent))


def test_a_request_signed_over_the_decoded_path_and_sent_encoded_is_refused_as_the_server_refuses_it(run) -> None:
    held = same_answer(run, signed("GET", "/%71ueues", signed_as="/queues"))
    assert held.status >= 400  # never served as `/queues`
    held = same_answer(run, signed("GET", "/queues/abc%2Ddef", signed_as="/queues/abc-def"))
    assert held.error_code() == "SignatureDoesNotMatch"


def test_a_stalled_client_does_not_hold_the_others(run) -> None:
    import socket

    stalled = [socket.create_connection(("127.0.0.1", int(run.url.rsplit(":", 1)[1]))) for _ in range(20)]
    try:
        for sock in stalled:
            sock.sendall(b"GET /queues HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
        answers: list[int] = []

        def call() -> None:
            answers.append(exchange(run.url, signed("GET", "/queues")).status)

        threads = [threading.Thread(target=call) for _ in range(50)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert answers == [200] * 50 and time.monotonic() - started < 20
    finally:
        for sock in stalled:
            sock.close()
