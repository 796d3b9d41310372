"""One connection's requests in the local runtime: each read within bounds (size, time), dispatched
(`local_runtime.dispatch`) and answered; every refusal in MNS shape."""

from __future__ import annotations

import io
import ipaddress
import math
import re
import socket
import time
import traceback
from collections.abc import Callable
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_runtime.console import Responder
from local_runtime.dispatch import CompiledRoute, Dispatch, Handler, LocalPage, LocalTool
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.pipeline.steps import MAX_REQUEST_BYTES
from mnsd.request import api

# The largest request MNS accepts is a 64 KB message (or a 64 KB batch) plus its XML: a body announced
# larger is refused before a byte of it is read, and bodies are read in bounded chunks.
MAX_BODY_BYTES = MAX_REQUEST_BYTES
READ_CHUNK_BYTES = 64 * 1024
# After refusing a body, what of it is still read (and dropped, a chunk at a time) so that a client that
# sends its whole body before reading (http.client, so the SDKs) can finish and read the answer: closing
# with unread bytes would reset the connection under its feet ("broken pipe"). Bounded in bytes and time.
DRAIN_BYTES = 16 * 1024 * 1024
DRAIN_SECONDS = 2.0
# A request (request line, headers and body) must arrive within this time once its first byte has, and no
# read or write waits longer: a slow client does not hold a server thread for ever.
SOCKET_TIMEOUT_SECONDS = 30.0
# How long a kept-alive connection may wait for its next request. Long: the SDKs keep one connection per
# client object and do not reconnect when a request with a body meets a connection the server has closed.
IDLE_TIMEOUT_SECONDS = 900.0
_DIGITS = re.compile(r"[0-9]{1,18}")
_ERROR_CODE = re.compile(rb"<Code>([^<]{1,64})</Code>|\"Code\"\s*:\s*\"([^\"]{1,64})\"")


def _content_length(value: str | None) -> int:
    """The announced body length: ASCII digits within the cap, else the MNS error to answer with."""
    if value is None:
        return 0
    if not _DIGITS.fullmatch(value.strip()):
        raise errors.InvalidArgument("The Content-Length header is invalid.")
    length = int(value)
    if length > MAX_BODY_BYTES:
        raise errors.InvalidArgument(f"The request body should not be larger than {MAX_BODY_BYTES} bytes.")
    return length


def _announced_length(headers: Message | None) -> int:
    """What a refused request announced it would still send: its Content-Length, else as much as may be drained."""
    value = (headers.get("Content-Length") or "").strip() if headers is not None else ""
    return int(value) if _DIGITS.fullmatch(value) else DRAIN_BYTES


def read_body(headers: Message, rfile: io.BufferedIOBase) -> bytes:
    """The request body, refused (MNS error) when its length is invalid or over the cap, before a byte is read."""
    if headers.get("Transfer-Encoding"):
        raise errors.InvalidArgument("Transfer-Encoding is not supported: send a Content-Length.")
    if len(set(headers.get_all("Content-Length") or ())) > 1:
        raise errors.InvalidArgument("The Content-Length header is invalid.")
    remaining = _content_length(headers.get("Content-Length"))
    chunks = []
    while remaining:
        chunk = rfile.read1(min(remaining, READ_CHUNK_BYTES))
        if not chunk:
            raise TimeoutError("the connection ended before the announced body")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class DeadlineReader(io.RawIOBase):
    """A connection's bytes, every read bounded by what remains of the current wait (`arm`)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.deadline = math.inf

    def arm(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


def _header_error(status: int) -> errors.MnsError:
    """What the standard library's own refusals (malformed request line, oversized headers...) become."""
    if status == 414:
        return errors.InvalidRequestURL("The request URL is too long.")
    if status == 431:
        return errors.InvalidArgument("The request headers are too large.")
    return errors.InvalidRequestURL()


def request_line(method: str | None, target: str, response: HttpResponse, started: float) -> str:
    """The log's line of one request: its status and time, and for a refused or failed one its error code and
    request id (the client's error shows both)."""
    elapsed = (time.perf_counter() - started) * 1000
    line = f"{method} {target} {response.status} {elapsed:.1f}ms"
    if response.status < 400:
        return line
    code = _ERROR_CODE.search(response.body)
    named = (code[1] or code[2]).decode("ascii", "replace") if code else "-"
    return f"{line} {named} request-id={response.headers.get('x-mns-request-id', '-')}"


def is_loopback(host: str) -> bool:
    """Whether a client address is the machine's own (127.0.0.0/8, ::1, or 127.x mapped into IPv6)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


class RequestHandler(BaseHTTPRequestHandler):
    """One connection's requests: read within bounds, dispatched, answered; every refusal in MNS shape."""

    dispatch: Dispatch
    now: Callable[[], float] = staticmethod(time.time)  # the server's clock
    loopback_paths: frozenset[tuple[str, str]] = frozenset()  # (method, path) answered to loopback clients only
    quiet = False
    protocol_version = "HTTP/1.1"
    server_version = "MNS-Local"
    disable_nagle_algorithm = True  # headers and body leave in separate writes
    timeout = SOCKET_TIMEOUT_SECONDS
    request_seconds: float | None = None  # how long a request may take once its first byte arrived (None: the default)
    idle_seconds: float | None = None  # how long the next request may take to start (None: IDLE_TIMEOUT_SECONDS)
    refusal: errors.MnsError | None = None  # set on a connection the server refuses: each request gets it

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the standard reader, replaced by one that keeps the request's deadline
        self.reader = DeadlineReader(self.connection)
        self.buffered = io.BufferedReader(self.reader)
        self.rfile = self.buffered

    def handle_one_request(self) -> None:
        self.reader.arm(self.idle_seconds or IDLE_TIMEOUT_SECONDS)
        try:
            self.buffered.peek(1)  # the next request's first bytes (or the end of the connection)
        except TimeoutError:
            self.close_connection = True
            return
        self.reader.arm(self.request_seconds or SOCKET_TIMEOUT_SECONDS)  # from here the request must arrive in time
        super().handle_one_request()

    def buffered_bytes(self) -> bytes:
        """What of the next request was read already (never waits for more)."""
        self.reader.arm(0)
        try:
            return self.buffered.peek(1)
        except TimeoutError:
            return b""

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        if parsed:  # the path as sent: the standard library reduces a leading "//" to "/", unlike the signature
            self.path = self.requestline.split()[1]
        return parsed

    def __getattr__(self, name: str) -> Any:
        # Every method reaches the API (PATCH, HEAD, OPTIONS, ...): what no route serves gets the
        # $default route's MNS error, as on API Gateway, not the standard library's 501 page.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def _serve(self) -> None:
        started = time.perf_counter()
        received_at = self.now()  # API Gateway's timeEpoch, on the server's clock
        host = self.headers.get("Host")
        if self.refusal is not None:
            self.close_connection = True
            self._answer(api.refuse(self.refusal, host, dict(self.headers.items()), self.path), started)
            self._drain()
            return
        try:
            body = read_body(self.headers, self.rfile)
        except errors.MnsError as error:
            self.close_connection = True
            self._answer(api.refuse(error, host, dict(self.headers.items()), self.path), started)
            self._drain()
            return
        if (self.command, self.path.partition("?")[0]) in self.loopback_paths and not is_loopback(
            str(self.client_address[0])
        ):
            self._answer(
                api.refuse(errors.AccessDenied("This page is served to loopback clients only."), host), started
            )
            return
        headers: dict[str, str] = {}
        pairs = list(self.headers.items())
        for name, value in pairs:
            key = name.lower()
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        try:
            response = self.dispatch.respond(self.command, self.path, headers, body, received_at, pairs)
        except Exception:  # a local tool's failure: still an MNS answer, never a dropped connection
            traceback.print_exc()
            response = api.refuse(errors.InternalError(), host)
        self._answer(response, started)

    def _answer(self, response: HttpResponse, started: float) -> None:
        self.connection.settimeout(SOCKET_TIMEOUT_SECONDS)  # the bound on each write of the answer
        if self.request_version == "HTTP/0.9":  # no status line in 0.9: answer as 1.0 does
            self.request_version = "HTTP/1.0"
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)
        if not self.quiet or response.status >= 400:
            print(request_line(self.command, getattr(self, "path", ""), response, started), flush=True)

    def handle_expect_100(self) -> bool:
        # Refused before the client sends the body it announced (no "100 Continue" for a body over the cap).
        try:
            _content_length(self.headers.get("Content-Length"))
        except errors.MnsError as error:
            self.close_connection = True
            self._answer(
                api.refuse(error, self.headers.get("Host"), dict(self.headers.items()), self.path), time.perf_counter()
            )
            return False
        return super().handle_expect_100()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # The standard library refuses some requests itself (malformed request line, oversized
        # headers): they get an MNS error too, with its request id.
        self.close_connection = True
        host = self.headers.get("Host") if getattr(self, "headers", None) else None
        self._answer(api.refuse(_header_error(code), host), time.perf_counter())
        self._drain()

    def _drain(self) -> None:
        """After the refusal, end the answer (FIN: the client reads it and its end at once), then drop what the
        client still sends of the refused request: its announced body, at most DRAIN_BYTES in DRAIN_SECONDS."""
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            return
        deadline = time.monotonic() + DRAIN_SECONDS
        left = min(_announced_length(getattr(self, "headers", None)), DRAIN_BYTES)
        self.reader.deadline = min(self.reader.deadline, deadline)
        try:
            while left > 0 and time.monotonic() < deadline:
                chunk = self.rfile.read1(min(left, READ_CHUNK_BYTES))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # one line per request is ours
        pass


def request_handler(
    routes: list[CompiledRoute],
    handlers: dict[str | None, Handler],
    quiet: bool,
    local_tools: dict[tuple[str, str], LocalTool],
    console: Responder,
    authorize_tool: Callable[[HttpRequest], None] = lambda request: None,
    local_pages: dict[tuple[str, str], LocalPage] | None = None,
    now: Callable[[], float] = time.time,
    front_door: str = "",
) -> type[BaseHTTPRequestHandler]:
    """The request handler class of a server; `now` is the server's clock (when a request arrived); `front_door` the
    door the functions are called through (`alb`, or API Gateway's)."""
    dispatch = Dispatch(routes, handlers, local_tools, console, authorize_tool, local_pages or {}, front_door)
    attributes = {
        "dispatch": dispatch,
        "quiet": quiet,
        "loopback_paths": frozenset(dispatch.local_pages),
        "now": staticmethod(now),
    }
    return type("BoundRequestHandler", (RequestHandler,), attributes)
