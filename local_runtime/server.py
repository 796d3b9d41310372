"""Serve the MNS API on 127.0.0.1 through the same Lambda handlers, on the embedded engine (or moto).

Each HTTP request becomes the API Gateway (HTTP API 2.0) event that AWS would deliver, goes to the
handler of the matching route (built by `mnsd.entry.lambda_handler.make_handler`, exactly as in
`functions/`), and the handler's result becomes the HTTP response.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import ipaddress
import json
import math
import os
import re
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from console.assets import PREFIX as CONSOLE_PATH
from local_runtime.analytics import EXPORT_PATH
from local_runtime.console import Responder, console_responder
from local_runtime.engine import SQLITE, EngineChoice, receipt_secret
from local_runtime.exports import export_sqlite, export_tables
from local_runtime.metrics import METRICS_PATH, MetricsPage
from local_runtime.minutes import GaugeSampler
from local_runtime.push import LocalPushWorker, compress_waits, create_push_workflow, time_scale
from local_runtime.streams import LocalStreamReader, SqliteChangeReader
from local_runtime.tables import create_tables
from local_runtime.upgrade import upgrade
from mnsd import errors
from mnsd.access.authentication import authenticate
from mnsd.access.keys import StaticKeyStore, create_keys_file
from mnsd.clock import SystemClock, ms
from mnsd.entry.lambda_handler import make_handler
from mnsd.http import HttpRequest, HttpResponse
from mnsd.metrics import TeeMetrics
from mnsd.metrics.process import ProcessMetrics
from mnsd.metrics.ring import MinuteRing, RecordedMinutes
from mnsd.push.dispatch import LocalDispatcher
from mnsd.push.signing import CERTIFICATE_PATH, generate_signing_material
from mnsd.queues.notifier import LocalNotifier
from mnsd.request import api
from mnsd.request.routes import ROUTES
from mnsd.services import Services, build_services
from mnsd.settings import RECEIPT_SECRET, Settings
from mnsd.storage.dynamodb.changes import message_changes
from mnsd.storage.sqlite import SqliteStorage, sqlite_storage

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
LocalTool = Callable[[], dict[str, str]]
LocalPage = Callable[[], HttpResponse]  # a page of the local runtime, unsigned: served to loopback clients only

# The largest request MNS accepts is a 64 KB message (or a 64 KB batch) plus its XML: a body announced
# larger is refused before a byte of it is read, and bodies are read in bounded chunks.
MAX_BODY_BYTES = api.MAX_REQUEST_BYTES
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
# Connections waiting to be accepted (the standard library's default, 5, refuses bursts of clients).
LISTEN_BACKLOG = 1024
_DIGITS = re.compile(r"[0-9]{1,18}")


class SerializedClient:
    """A boto3 client whose calls run one at a time.

    moto's in-memory backend is not thread-safe: two threads' conditional updates of one item could
    both pass their condition. DynamoDB evaluates each conditional write atomically; serializing the
    calls gives moto the same per-call atomicity (and no more: races between calls stay real).
    """

    def __init__(self, client: Any, lock: threading.Lock | None = None) -> None:
        self._client = client
        self._lock = lock or threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return call


@dataclass(frozen=True)
class CompiledRoute:
    name: str
    method: str
    path: str
    pattern: re.Pattern[str]


def compile_routes() -> list[CompiledRoute]:
    compiled = []
    for route in ROUTES.values():
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(route.path))
        compiled.append(CompiledRoute(route.name, route.method, route.path, re.compile(regex + r"\Z")))
    return compiled


def match_route(routes: list[CompiledRoute], method: str, path: str) -> tuple[str | None, str, dict[str, str]]:
    """(route name or None for $default, route key, path parameters)."""
    for route in routes:
        found = route.pattern.match(path)
        if found and route.method == method:
            params = {k: unquote(v) for k, v in found.groupdict().items()}
            return route.name, f"{method} {route.path}", params
    return None, "$default", {}


def api_gateway_event(
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    routes: list[CompiledRoute],
    received_at: float | None = None,
) -> tuple[str | None, dict[str, Any]]:
    raw_path, _, raw_query = target.partition("?")
    route_name, route_key, params = match_route(routes, method, raw_path)
    text_body: str | None = None
    is_base64 = False
    if body:
        try:
            text_body = body.decode("utf-8")
        except UnicodeDecodeError:
            text_body, is_base64 = base64.b64encode(body).decode("ascii"), True
    event = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": raw_path,
        "rawQueryString": raw_query,
        "headers": headers,
        "pathParameters": params or None,
        "requestContext": {
            "http": {"method": method, "path": raw_path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "routeKey": route_key,
            "stage": "$default",
            "timeEpoch": int((time.time() if received_at is None else received_at) * 1000),
        },
        "body": text_body,
        "isBase64Encoded": is_base64,
    }
    return route_name, event


class LocalContext:
    function_name = "mns-local"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:mns-local"
    aws_request_id = "local"


class LocalServer:
    """The API on an embedded backend (SQLite, or moto for every table; Step Functions and the push
    queue always on moto), served from a background thread or the foreground."""

    def __init__(
        self,
        settings: Settings,
        host: str = "127.0.0.1",
        port: int = 8080,
        quiet: bool = False,
        engine: EngineChoice | None = None,
    ) -> None:
        routes = compile_routes()
        handlers: dict[str | None, Handler] = {
            name: make_handler(name, services=lambda: self.services) for name in [*ROUTES, None]
        }
        tools = {("POST", EXPORT_PATH): self.export}
        self.operator = StaticKeyStore(settings.credentials).default
        self.counts = ProcessMetrics()  # what the services count, served on `GET /metrics` with the engine's gauges
        self.clock = SystemClock()
        self.ring = MinuteRing(self.clock)  # the last hour by minute, per queue (the console's minute chart)
        pages: dict[tuple[str, str], LocalPage] = {
            ("GET", METRICS_PATH): MetricsPage(lambda: self.services, self.counts)
        }
        handler = _request_handler(
            routes, handlers, quiet, tools, console_responder(settings), self.authorize_operator, pages
        )
        self.httpd = LocalHttpServer((host, port), handler)
        self._mock: Any = None
        self.worker: LocalPushWorker | None = None
        self.sampler: GaugeSampler | None = None
        self.streams: list[LocalStreamReader | SqliteChangeReader] = []
        self.storage: SqliteStorage | None = None
        self.services = self._start_backend(settings, engine or EngineChoice())
        self.settings = self.services.settings

    def _start_backend(self, settings: Settings, engine: EngineChoice) -> Services:
        from moto import mock_aws

        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            os.environ.setdefault(name, "local")
        # moto runs Step Functions definitions only when told to: the push retries need it.
        self._mock = mock_aws(config={"stepfunctions": {"execute_state_machine": True}})
        self._mock.start()
        import boto3

        lock = threading.Lock()  # one lock for every client: moto's backends are not thread-safe
        region = os.environ["AWS_DEFAULT_REGION"]
        clients = lru_cache(maxsize=None)(lambda name: SerializedClient(boto3.client(name, region_name=region), lock))
        self.clients = clients
        if engine.engine == SQLITE:
            self.storage = sqlite_storage(engine.data_dir, engine.synchronous)
            upgrade(self.storage)
        else:
            create_tables(clients("dynamodb"), settings)
        state_machine_arn, queue_url = create_push_workflow(clients)
        compress_waits(time_scale(os.environ))
        key, certificate = generate_signing_material()
        settings = dataclasses.replace(
            settings,
            push_state_machine_arn=state_machine_arn,
            push_queue_url=queue_url,
            signing_key=key,
            signing_certificate=certificate,
            signing_cert_url=self.endpoint + CERTIFICATE_PATH,
        )
        services = build_services(
            settings,
            dynamodb=None if self.storage else clients("dynamodb"),
            storage=self.storage,
            notifier=LocalNotifier(),
            dispatcher=LocalDispatcher(lambda: services.fanout()),
            clients=clients,
            clock=self.clock,
            metrics=TeeMetrics(self.counts, self.ring),
            minutes=RecordedMinutes(self.ring, lambda queue: services.queues.backlog(queue)),
        )
        self.worker = LocalPushWorker(lambda: services, clients("sqs"), queue_url).start()
        self.sampler = GaugeSampler(lambda: services.queues, self.ring).start()
        if self.storage is not None:
            now_ms = lambda: ms(services.clock.now())  # noqa: E731
            reader = SqliteChangeReader(self.storage, lambda events: services.queue_events().handle(events), now_ms)
            self.streams = [reader.start()]
        else:
            self.streams = [
                LocalStreamReader(
                    settings.message_table,
                    region,
                    lambda records: services.queue_events().handle(message_changes(records)),
                    lock,
                ).start()
            ]
        return services

    def authorize_operator(self, request: HttpRequest) -> None:
        """The local tools answer only requests signed with the operator's key (the first configured)."""
        caller = authenticate(
            request, self.services.keys, self.services.clock.now(), self.services.tokens, region=self.settings.region
        )
        if caller.key_id != self.operator.key_id or not caller.is_root:
            raise errors.AccessDenied()

    def export(self) -> dict[str, str]:
        """Export the tables for the analytics jobs (`python -m local_runtime.analytics`)."""
        folder = Path(os.environ.get("MNS_EXPORT_DIR", ".mns-local/exports"))
        if self.storage is not None:
            for reader in self.streams:  # the operation log up to date with what was acknowledged
                if isinstance(reader, SqliteChangeReader):
                    reader.drain()
            return {"exports": str(export_sqlite(self.storage, folder).resolve())}
        return {"exports": str(export_tables(self.clients, self.settings, folder).resolve())}

    @property
    def endpoint(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start_background(self) -> LocalServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.worker is not None:
            self.worker.stop()
        if self.sampler is not None:
            self.sampler.stop()
        for reader in self.streams:
            reader.stop()
        if self.storage is not None:
            self.storage.database.close()
        if self._mock is not None:
            self._mock.stop()


class LocalHttpServer(ThreadingHTTPServer):
    """One thread per connection, a listen backlog sized for bursts of clients."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True


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


def is_loopback(host: str) -> bool:
    """Whether a client address is the machine's own (127.0.0.0/8, ::1, or 127.x mapped into IPv6)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


@dataclass(frozen=True)
class Dispatch:
    """Where a request goes: the console's files, a local page (loopback clients only, `RequestHandler.loopback_paths`),
    a local tool (the operator's only) or the Lambda handler of its route."""

    routes: list[CompiledRoute]
    handlers: dict[str | None, Handler]
    local_tools: dict[tuple[str, str], LocalTool]
    console: Responder
    authorize_tool: Callable[[HttpRequest], None]
    local_pages: dict[tuple[str, str], LocalPage] = field(default_factory=dict)

    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes, received_at: float
    ) -> HttpResponse:
        static = self.console(method, target, headers)  # the web console's files
        if static is not None:
            return HttpResponse(static["statusCode"], static["body"].encode("utf-8"), static["headers"])
        page = self.local_pages.get((method, target.partition("?")[0]))
        if page is not None:
            return page()
        tool = self.local_tools.get((method, target))
        if tool is not None:  # the local runtime's own tools, outside the MNS API
            raw_path, _, raw_query = target.partition("?")
            request = HttpRequest(method, raw_path, raw_query, headers, body)
            try:
                self.authorize_tool(request)
            except errors.MnsError as error:
                return api.refuse(error, request.header("host"))
            return HttpResponse(200, json.dumps(tool()).encode("utf-8"), {"Content-Type": "application/json"})
        route_name, event = api_gateway_event(method, target, headers, body, self.routes, received_at)
        result = self.handlers[route_name](event, LocalContext())
        return HttpResponse(result["statusCode"], result["body"].encode("utf-8"), result["headers"])


class RequestHandler(BaseHTTPRequestHandler):
    """One connection's requests: read within bounds, dispatched, answered; every refusal in MNS shape."""

    dispatch: Dispatch
    loopback_paths: frozenset[tuple[str, str]] = frozenset()  # (method, path) answered to loopback clients only
    quiet = False
    protocol_version = "HTTP/1.1"
    server_version = "MNS-Local"
    disable_nagle_algorithm = True  # headers and body leave in separate writes
    timeout = SOCKET_TIMEOUT_SECONDS

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the standard reader, replaced by one that keeps the request's deadline
        self.reader = DeadlineReader(self.connection)
        self.buffered = io.BufferedReader(self.reader)
        self.rfile = self.buffered

    def handle_one_request(self) -> None:
        self.reader.arm(IDLE_TIMEOUT_SECONDS)
        try:
            self.buffered.peek(1)  # the next request's first bytes (or the end of the connection)
        except TimeoutError:
            self.close_connection = True
            return
        self.reader.arm(SOCKET_TIMEOUT_SECONDS)  # from here the whole request must arrive in time
        super().handle_one_request()

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
        received_at = time.time()
        host = self.headers.get("Host")
        try:
            body = read_body(self.headers, self.rfile)
        except errors.MnsError as error:
            self.close_connection = True
            self._answer(api.refuse(error, host, dict(self.headers.items())), started)
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
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        try:
            response = self.dispatch.respond(self.command, self.path, headers, body, received_at)
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
        if not self.quiet:
            elapsed = (time.perf_counter() - started) * 1000
            target = getattr(self, "path", "")
            print(f"{self.command} {target} {response.status} {elapsed:.1f}ms", flush=True)

    def handle_expect_100(self) -> bool:
        # Refused before the client sends the body it announced (no "100 Continue" for a body over the cap).
        try:
            _content_length(self.headers.get("Content-Length"))
        except errors.MnsError as error:
            self.close_connection = True
            self._answer(api.refuse(error, self.headers.get("Host"), dict(self.headers.items())), time.perf_counter())
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


def _request_handler(
    routes: list[CompiledRoute],
    handlers: dict[str | None, Handler],
    quiet: bool,
    local_tools: dict[tuple[str, str], LocalTool],
    console: Responder,
    authorize_tool: Callable[[HttpRequest], None] = lambda request: None,
    local_pages: dict[tuple[str, str], LocalPage] | None = None,
) -> type[BaseHTTPRequestHandler]:
    dispatch = Dispatch(routes, handlers, local_tools, console, authorize_tool, local_pages or {})
    attributes = {"dispatch": dispatch, "quiet": quiet, "loopback_paths": frozenset(dispatch.local_pages)}
    return type("BoundRequestHandler", (RequestHandler,), attributes)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    engine = EngineChoice.from_env()
    # Receipt handles are signed with a key kept beside the data (a fresh one for moto or :memory:).
    os.environ.setdefault(RECEIPT_SECRET, receipt_secret(engine))
    settings = Settings.from_env()
    if settings.keys_file:
        create_keys_file(settings.keys_file)  # with no key: `python -m admin --keys-file ...` adds them
    port = int(os.environ.get("MNS_PORT", "8080"))
    server = LocalServer(settings, port=port, engine=engine)
    key = StaticKeyStore(settings.credentials).default
    print(f"MNS API listening on {server.endpoint}", flush=True)
    print(f"  console:           {server.endpoint}{CONSOLE_PATH}/", flush=True)
    print(f"  account id:        {key.account_id}", flush=True)
    print(f"  access key id:     {key.key_id}", flush=True)
    print(f"  access key secret: {key.secret}", flush=True)
    print(f"  region:            {settings.region}", flush=True)
    if settings.keys_file:
        print(f"  more keys:         {settings.keys_file} (python -m admin --keys-file; read within 1 s)", flush=True)
    stored = f"SQLite in {engine.data_dir}" if engine.engine == SQLITE else "moto (in memory)"
    print(f"  storage:           {stored}", flush=True)
    print("Press Ctrl-C to stop.", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # a graceful stop, as Ctrl-C
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
    finally:
        server.stop()
