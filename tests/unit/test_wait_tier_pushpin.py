"""Pushpin's readiness (`wait_tier.pushpin`): its client port accepting connections is not enough (condure listens
before the proxy behind it is connected, and drops what it takes then); ready is a request answered by its route."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wait_tier import pushpin
from wait_tier.waiters import Waiter
from wait_tier.waker import CONTROL_TIMEOUT_SECONDS, READY_PATH, STATS_PATH, Pushpin, Waker, answer


@contextmanager
def dropping() -> Iterator[int]:
    """A port that accepts connections and closes them unanswered, as condure does before its proxy is up."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def run() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


@contextmanager
def answering(status: int) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_a_port_that_accepts_and_drops_is_not_ready() -> None:
    with dropping() as port:
        assert pushpin._accepts("127.0.0.1", port)  # what the old check took for ready
        assert not pushpin._answers("127.0.0.1", port, READY_PATH)


def test_a_route_that_answers_with_a_success_is_ready_and_an_error_is_not() -> None:
    with answering(204) as port:
        assert pushpin._answers("127.0.0.1", port, READY_PATH)
    with answering(502) as port:
        assert not pushpin._answers("127.0.0.1", port, READY_PATH)


def test_the_waker_answers_its_readiness_itself_without_asking_the_origin() -> None:
    nowhere = "http://127.0.0.1:9"  # (nothing listens: asking it would answer 502)
    waker = Waker(nowhere, Pushpin(nowhere))
    status, _, _, body = answer(waker, "GET", READY_PATH, Message(), b"")
    assert (status, body, waker.origin_calls) == (204, b"", 0)


def test_the_wakers_counters_are_answered_on_its_own_port_only_not_through_pushpin() -> None:
    nowhere = "http://127.0.0.1:9"
    waker = Waker(nowhere, Pushpin(nowhere))
    status, _, _, body = answer(waker, "GET", STATS_PATH, Message(), b"")
    assert status == 200 and json.loads(body)["origin_calls"] == 0
    through = Message()
    through["Grip-Sig"] = "a.b.c"  # (Pushpin signs every request it passes on)
    status, _, _, body = answer(waker, "GET", STATS_PATH, through, b"")
    assert status == 502 and b"origin_calls" not in body  # passed on to the origin (unreachable here), not answered
    assert waker.origin_calls == 1


def test_pushpins_proxy_neither_inspects_requests_nor_reports_connection_stats(tmp_path: Path) -> None:
    """Both cost CPU on every request passed on (about 0.75 ms) and serve nothing the tier uses."""
    import configparser

    written = pushpin.PushpinConfig(tmp_path, 1, 2, "127.0.0.1:3", "key").write()
    config = configparser.ConfigParser(interpolation=None)
    config.read(written)
    assert config["proxy"]["handler_inspect_spec"] == ""
    assert config["proxy"]["stats_spec"] == ""


def test_hints_are_published_over_one_kept_alive_connection_and_a_hung_pushpin_times_out() -> None:
    published: list[list[str]] = []
    connections = []

    class Control(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            connections.append(self.client_address)

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            items = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["items"]
            published.append([item["channel"] for item in items])
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    control = ThreadingHTTPServer(("127.0.0.1", 0), Control)
    threading.Thread(target=control.serve_forever, daemon=True).start()
    try:
        hints = Pushpin(f"http://127.0.0.1:{control.server_address[1]}")
        for n in range(3):
            hints.hint([Waiter("mns.q", f"mns.q.w{n}", 0)])
        assert published == [["mns.q.w0"], ["mns.q.w1"], ["mns.q.w2"]]
        assert len(connections) == 1
    finally:
        control.shutdown()
        control.server_close()
    with socket.socket() as hung:  # accepts (the backlog) and never answers
        hung.bind(("127.0.0.1", 0))
        hung.listen()
        started = time.monotonic()
        with pytest.raises(OSError):
            Pushpin(f"http://127.0.0.1:{hung.getsockname()[1]}").hint([Waiter("mns.q", "mns.q.w0", 0)])
        assert time.monotonic() - started < CONTROL_TIMEOUT_SECONDS + 1
