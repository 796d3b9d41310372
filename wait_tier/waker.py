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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wait_tier.origin import HOP_BY_HOP, Answer, Origin
from wait_tier.waiters import Waiter, Waiters, queue_channel

logger = logging.getLogger("wait_tier")

DEADLINE_HEADER = "mns-wait-deadline"
DUE_HEADER = "mns-wait-due"
MORE_HEADER = "mns-wait-more"
CLAIMED_HEADER = "mns-wait-claimed"
CHANNEL_HEADER = "mns-wait-channel"
RELAYED_HEADER = "x-wait-tier-relayed"
# A wake posted to the waker itself, or to Pushpin on the API's wake route (Pushpin's route leads to the waker).
WAKE_PATHS = ("/wake", "/wait-tier/wake")
# Answered by the waker itself: asked through Pushpin, it shows the whole tier is up (start-up, the task's health).
READY_PATH = "/wait-tier/ready"
# Answered by the waker itself on its own port: its counters (`Waker.stats`), for the benchmarks (no request content,
# no keys); asked through Pushpin (which signs what it passes on), refused like any unknown path.
STATS_PATH = "/wait-tier/stats"
GRIP_SIG_HEADER = "grip-sig"
# A hold whose queue was woken while the origin looked is asked again at once, this many times at most.
MAX_REASKS = 3
TICK_SECONDS = 0.02
# Routes of receives whose queue channel the waker learnt from the origin's answers, kept at most.
MAX_ROUTES = 10_000
# A publish waits no longer than this (the timer thread publishes too: a hung Pushpin must not hold timed wakes).
CONTROL_TIMEOUT_SECONDS = 2


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
    """Pushpin's control endpoint (`/publish/`), posted to over kept-alive connections (`Origin`'s pool)."""

    control_url: str
    _control: Origin = field(init=False, repr=False)
    _host: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._control = Origin(self.control_url.rstrip("/"), timeout=CONTROL_TIMEOUT_SECONDS)
        self._host = urllib.parse.urlsplit(self.control_url).netloc  # (once, not per publish)

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
        headers = [("Host", self._host), ("Content-Type", "application/json")]
        try:
            status, reason, _, _ = self._control.call(
                "POST", "/publish/", headers, json.dumps({"items": items}).encode()
            )
        except http.client.HTTPException as error:
            raise OSError(f"publish failed: {error}") from error
        if status >= 300:
            raise OSError(f"publish refused: {status} {reason}")


@dataclass(eq=False)
class Waker:
    origin: str  # scheme://host[:port] of the origin
    pushpin: Pushpin
    peers: Callable[[], list[str]] = lambda: []  # the other instances' wake URLs
    waiters: Waiters = field(default_factory=lambda: Waiters(now_ms))
    origin_pool: Origin = field(init=False)
    routes: dict[str, str] = field(default_factory=dict)  # a receive's route (`receive_route`) -> its queue channel
    lock: threading.Lock = field(default_factory=threading.Lock)
    unsettled: list[Waiter] = field(default_factory=list)
    origin_calls: int = 0
    holds: int = 0
    # Origin calls by why they were made and what they got (`CALLS`): `<why>.<outcome>`.
    calls: Counter[str] = field(default_factory=Counter)

    def stats(self) -> dict[str, object]:
        with self.lock:
            return {"origin_calls": self.origin_calls, "holds": self.holds, "calls": dict(self.calls)}

    def __post_init__(self) -> None:
        self.origin_pool = Origin(self.origin)

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
    def ask_origin(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        """The answer to give Pushpin for a request: the origin's, with a hold given its own channel."""
        key = request_key(method, path, headers)
        route, takes = receive_route(method, path, headers)
        headers = [(k, v) for k, v in headers if not k.lower().startswith("mns-wait-")]  # (the tier's own)
        with self.lock:
            woken = self.waiters.answered(key)  # (a held request Pushpin asks the origin again for)
            asking = woken.channel if woken is not None else self.routes.get(route)
            if asking is not None and takes:
                self.waiters.begin(asking, takes)
        if woken is not None:
            headers.append((DEADLINE_HEADER, str(woken.deadline_ms)))
        why = "first" if woken is None else "woken" if woken.hinted else "checked"
        reasks = 0
        while True:
            started = now_ms()
            try:
                status, reason, answer, content = self._call(method, path, headers, body)
            finally:
                with self.lock:
                    if asking is not None and takes:
                        self.waiters.end(asking, takes)
            channel = _header(answer, "grip-channel")
            queue = channel or _header(answer, CHANNEL_HEADER)
            with self.lock:
                if route and queue:
                    self._learn(route, queue_channel(queue))
                self._note_hints(answer, queue, paying=why != "woken")
                if _header(answer, "grip-hold") is None or channel is None:
                    self.calls[f"{why}.answered"] += 1
                    return status, reason, _without_hints(answer), content
                self.calls[f"{why}.held"] += 1
                if reasks == MAX_REASKS or not self.waiters.stale(channel, started, takes or 1):
                    self.holds += 1
                    deadline = int(_header(answer, DEADLINE_HEADER) or 0)
                    waiter = self.waiters.hold(channel, deadline, key, takes or 1)
                    return status, reason, _held(answer, waiter), content
                asking, takes = channel, takes or 1  # its queue was woken while the origin looked: look again
                self.waiters.begin(asking, takes)
            reasks += 1
            why = "reask"

    def _learn(self, route: str, channel: str) -> None:
        if len(self.routes) >= MAX_ROUTES and route not in self.routes:
            self.routes.clear()
        self.routes[route] = channel

    def _note_hints(self, answer: list[tuple[str, str]], channel: str | None, paying: bool) -> None:
        if channel is None:
            return
        channel = queue_channel(channel)
        due = _header(answer, DUE_HEADER)
        if due is not None and due.isdigit():
            self.waiters.due(channel, int(due))
        claimed = _header(answer, CLAIMED_HEADER)
        if claimed is not None and claimed.isdigit() and paying:  # (a woken waiter claims what it was woken for)
            self.waiters.claimed(channel, int(claimed))
        more = _header(answer, MORE_HEADER)
        woken = self.waiters.more(channel, int(more)) if more is not None and more.isdigit() else []
        if woken:  # (published from a thread of its own: the answer waits for no one)
            threading.Thread(target=self._hint, args=(woken,), daemon=True).start()

    def _call(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        with self.lock:
            self.origin_calls += 1
        return self.origin_pool.call(method, path, headers, body)


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _without_hints(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    hints = {DUE_HEADER, MORE_HEADER, CHANNEL_HEADER, CLAIMED_HEADER, DEADLINE_HEADER}
    return [(k, v) for k, v in headers if k.lower() not in hints and k.lower() not in HOP_BY_HOP]


def _held(headers: list[tuple[str, str]], waiter: Waiter) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in _without_hints(headers) if k.lower() != "grip-channel"]
    return [*kept, ("Grip-Channel", waiter.name)]


def receive_route(method: str, path: str, headers: list[tuple[str, str]]) -> tuple[str, int]:
    """A receive's route (its queue's, for one account and access key) and the messages it takes at most (0: not a
    receive, or a peek, which takes none)."""
    base, _, query = path.partition("?")
    if method != "GET" or not base.endswith("/messages"):
        return "", 0
    params = urllib.parse.parse_qs(query)
    if params.get("peekonly", [""])[0].lower() == "true":
        return "", 0
    count = params.get("numOfMessages", ["1"])[0]
    auth = next((v for k, v in headers if k.lower() == "authorization"), "")
    host = next((v for k, v in headers if k.lower() == "host"), "")
    return f"{host} {auth.partition(':')[0]} {base}", int(count) if count.isdigit() and int(count) > 0 else 1


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


def answer(waker: Waker, method: str, path: str, headers: Message, body: bytes) -> Answer:
    """The waker's answer to a request: a wake posted to it, its readiness, or else the origin's answer, passed on."""
    if method == "GET" and path == READY_PATH:
        return 204, "No Content", [], b""
    if method == "GET" and path == STATS_PATH and GRIP_SIG_HEADER not in {k.lower() for k in headers}:
        return 200, "OK", [("Content-Type", "application/json")], json.dumps(waker.stats()).encode()
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
