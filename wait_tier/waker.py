"""The waker: a small HTTP server beside Pushpin in each tier instance (standard library only).

- It is Pushpin's origin (the route `* 127.0.0.1:<waker>`): it passes each request to the real origin (the local
  server, or the receive function's URL on AWS) and reads the answer: a hold gets a channel of its own and is
  remembered (`waiters.Waiters`); the origin's hints (`Mns-Wait-*`) are acted on and removed.
- `POST /wake` takes the wakes the service posts (`mnsd.queues.tier_wakes`): `{"channel", "count"}` or
  `{"channel", "at"}`; it passes them on to the other instances (`peers`), and publishes `hint` to the chosen
  waiters' channels on its own Pushpin, which then asks the origin again for each.
"""

from __future__ import annotations

import http.client
import io
import json
import logging
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wait_tier.waiters import Waiter, Waiters, queue_channel

logger = logging.getLogger("wait_tier")

DEADLINE_HEADER = "mns-wait-deadline"
DUE_HEADER = "mns-wait-due"
MORE_HEADER = "mns-wait-more"
CHANNEL_HEADER = "mns-wait-channel"
RELAYED_HEADER = "x-wait-tier-relayed"
# A wake posted to the waker itself, or to Pushpin on the API's wake route (Pushpin's route leads to the waker).
WAKE_PATHS = ("/wake", "/wait-tier/wake")
# Answered by the waker itself: asked through Pushpin, it shows the whole tier is up (start-up, the task's health).
READY_PATH = "/wait-tier/ready"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
# A hold whose queue was woken while the origin looked is asked again at once, this many times at most.
MAX_REASKS = 3
TICK_SECONDS = 0.02


def now_ms() -> int:
    return int(time.time() * 1000)


def _post_json(url: str, document: object, headers: dict[str, str] | None = None) -> None:
    body = json.dumps(document).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=2) as answer:  # noqa: S310 (configured URLs)
        answer.read()


@dataclass
class Pushpin:
    """Pushpin's control endpoint (`/publish/`)."""

    control_url: str

    def hint(self, waiters: list[Waiter]) -> None:
        """Ask Pushpin to ask the origin again for each waiter: `hint` on its channel (no id: Pushpin drops a
        publish whose id it saw in the last minute, and holds one whose prev-id is not the last it saw)."""
        if not waiters:
            return
        items = [
            {
                "channel": w.name,
                "formats": {"http-response": {"action": "hint"}},
            }
            for w in waiters
        ]
        _post_json(self.control_url.rstrip("/") + "/publish/", {"items": items})


@dataclass(eq=False)
class Waker:
    origin: str  # scheme://host[:port] of the origin
    pushpin: Pushpin
    peers: Callable[[], list[str]] = lambda: []  # the other instances' wake URLs
    waiters: Waiters = field(default_factory=lambda: Waiters(now_ms))
    lock: threading.Lock = field(default_factory=threading.Lock)
    unsettled: list[Waiter] = field(default_factory=list)
    origin_calls: int = 0
    holds: int = 0

    # -- wakes ---------------------------------------------------------------------------------------------
    def wake(self, document: dict[str, object], relayed: bool) -> None:
        channel = str(document["channel"])
        if not relayed:
            for peer in self.peers():
                threading.Thread(target=self._relay, args=(peer, document), daemon=True).start()
        with self.lock:
            if "at" in document:
                self.waiters.due(channel, int(str(document["at"])))
                return
            woken = self.waiters.wake(channel, max(1, int(str(document.get("count", 1)))))
        self._hint(woken)

    def _relay(self, peer: str, document: dict[str, object]) -> None:
        try:
            _post_json(peer, document, {RELAYED_HEADER: "1"})
        except OSError as error:
            logger.warning("wake not relayed to %s: %s", peer, error)

    def _hint(self, woken: list[Waiter]) -> None:
        with self.lock:
            woken, young = self.waiters.ready(self.unsettled + woken)
            self.unsettled = young
        try:
            self.pushpin.hint(woken)
        except OSError as error:  # the waiters stay woken: `next_wakes` replaces them if they do not come back
            logger.warning("hint not published: %s", error)

    def tick(self) -> None:
        with self.lock:
            woken = self.waiters.next_wakes()
            self.waiters.forget_before(now_ms())
        self._hint(woken)

    def run_timer(self, stop: threading.Event) -> None:
        while not stop.wait(TICK_SECONDS):
            self.tick()

    # -- the origin ------------------------------------------------------------------------------------------
    def ask_origin(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """The answer to give Pushpin for a request: the origin's, with a hold given its own channel."""
        key = request_key(method, path, headers)
        headers = [(k, v) for k, v in headers if not k.lower().startswith("mns-wait-")]  # (the tier's own)
        with self.lock:
            woken = self.waiters.answered(key)  # (a held request Pushpin asks the origin again for)
        if woken is not None:
            headers.append((DEADLINE_HEADER, str(woken.deadline_ms)))
        reasks = 0
        while True:
            started = now_ms()
            try:
                status, reason, answer, content = self._call(method, path, headers, body)
            finally:
                if woken is not None:
                    with self.lock:
                        self.waiters.asked(woken)
                    woken = None
            channel = _header(answer, "grip-channel")
            deadline = int(_header(answer, DEADLINE_HEADER) or 0)
            with self.lock:
                self._note_hints(answer, channel or _header(answer, CHANNEL_HEADER))
                if _header(answer, "grip-hold") is None or channel is None:
                    return status, reason, _without_hints(answer), content
                if reasks == MAX_REASKS or not self.waiters.woken_since(channel, started):
                    self.holds += 1
                    return status, reason, _held(answer, self.waiters.hold(channel, deadline, key)), content
            reasks += 1  # its queue was woken while the origin looked: look again

    def _note_hints(self, answer: list[tuple[str, str]], channel: str | None) -> None:
        if channel is None:
            return
        channel = queue_channel(channel)
        due = _header(answer, DUE_HEADER)
        if due is not None and due.isdigit():
            self.waiters.due(channel, int(due))
        more = _header(answer, MORE_HEADER)
        if more is not None and more.isdigit():
            threading.Thread(target=self._hint, args=(self.waiters.more(channel, int(more)),), daemon=True).start()

    _local = threading.local()

    def _call(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        target = urllib.parse.urlsplit(self.origin)
        sent = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
        if target.scheme == "https":  # a function URL answers to its own host only: the client's is passed on
            host = next((v for k, v in sent if k.lower() == "host"), "")
            sent = [(k, v) for k, v in sent if k.lower() != "host"] + [
                ("Host", target.netloc),
                ("X-Forwarded-Host", host),
            ]
        sent.append(("Content-Length", str(len(body))))
        with self.lock:
            self.origin_calls += 1
        for attempt in (1, 2):  # a kept-alive connection the origin closed meanwhile: once more on a new one
            connection = self._connection(target, fresh=attempt == 2)
            try:
                connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
                for name, value in sent:
                    connection.putheader(name, value)
                connection.endheaders(body)
                answer = connection.getresponse()
                content = answer.read()
                return answer.status, answer.reason, list(answer.getheaders()), content
            except (http.client.HTTPException, ConnectionError):
                connection.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _connection(self, target: urllib.parse.SplitResult, fresh: bool) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None or fresh:
            kind = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
            connection = kind(target.netloc, timeout=35)
            self._local.connection = connection
        return connection


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _without_hints(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    hints = {DUE_HEADER, MORE_HEADER, CHANNEL_HEADER, DEADLINE_HEADER}
    return [(k, v) for k, v in headers if k.lower() not in hints and k.lower() not in HOP_BY_HOP]


def _held(headers: list[tuple[str, str]], waiter: Waiter) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in _without_hints(headers) if k.lower() != "grip-channel"]
    return [*kept, ("Grip-Channel", waiter.name)]


def request_key(method: str, path: str, headers: list[tuple[str, str]]) -> str:
    """A client request's identity: Pushpin asks the origin again with the very request it holds, and a signed MNS
    request differs from any other by its signature or its date (two alike in one second wait alike)."""
    signed = {"authorization", "date", "x-mns-date", "security-token"}
    return "\n".join([method, path, *sorted(f"{k.lower()}:{v}" for k, v in headers if k.lower() in signed)])


def read_body(headers: Message, stream: io.BufferedIOBase) -> bytes:
    """A request's body, sent with a length or chunked (as Pushpin passes bodies on)."""
    if "chunked" not in (headers.get("Transfer-Encoding") or "").lower():
        return stream.read(int(headers.get("Content-Length") or 0))
    chunks = []
    while size := int(stream.readline().split(b";")[0].strip() or b"0", 16):
        chunks.append(stream.read(size))
        stream.readline()
    while stream.readline() not in (b"\r\n", b"\n", b""):
        pass  # (trailers)
    return b"".join(chunks)


Answer = tuple[int, str, list[tuple[str, str]], bytes]


def answer(waker: Waker, method: str, path: str, headers: Message, body: bytes) -> Answer:
    """The waker's answer to a request: a wake posted to it, its readiness, or else the origin's answer, passed on."""
    if method == "GET" and path == READY_PATH:
        return 204, "No Content", [], b""
    if method == "POST" and path in WAKE_PATHS:
        try:
            waker.wake(json.loads(body), relayed=RELAYED_HEADER in {k.lower() for k in headers})
        except (ValueError, KeyError, TypeError):
            return 400, "Bad Request", [], b"bad wake\n"
        return 204, "No Content", [], b""
    try:
        return waker.ask_origin(method, path, list(headers.items()), body)
    except (OSError, http.client.HTTPException) as error:
        logger.warning("origin unreachable: %s", error)
        return 502, "Bad Gateway", [], b"origin unreachable\n"


def handler(waker: Waker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # (headers and body are two writes: no 40 ms wait for a delayed ACK)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the standard library's name)
            pass

        def _serve(self) -> None:
            status, reason, headers, content = answer(
                waker, self.command, self.path, self.headers, read_body(self.headers, self.rfile)
            )
            self.send_response(status, reason)
            for name, value in headers:
                if name.lower() not in ("content-length", "date", "server"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _serve

    return Handler


def serve(waker: Waker, host: str, port: int) -> tuple[ThreadingHTTPServer, threading.Event]:
    """The waker listening on host:port, and its timer, in daemon threads; set the event to stop the timer."""
    server = ThreadingHTTPServer((host, port), handler(waker))
    server.daemon_threads = True
    stop = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=waker.run_timer, args=(stop,), daemon=True).start()
    return server, stop
