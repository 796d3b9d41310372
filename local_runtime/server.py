"""Serve the MNS API on 127.0.0.1 through the same Lambda handlers, on the embedded engine (or moto).

Each HTTP request becomes the API Gateway (HTTP API 2.0) event that AWS would deliver, goes to the
handler of the matching route (built by `mnsd.lambda_handler.make_handler`, exactly as in
`functions/`), and the handler's result becomes the HTTP response.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from local_runtime.analytics import EXPORT_PATH
from local_runtime.engine import SQLITE, EngineChoice, receipt_secret
from local_runtime.exports import export_sqlite, export_tables
from local_runtime.push import LocalPushWorker, create_push_workflow
from local_runtime.streams import LocalStreamReader, SqliteChangeReader
from local_runtime.tables import create_tables
from mnsd.accounts import StaticKeyStore
from mnsd.clock import ms
from mnsd.fanout import LocalDispatcher
from mnsd.lambda_handler import make_handler
from mnsd.notifier import LocalNotifier
from mnsd.push_signing import CERTIFICATE_PATH, generate_signing_material
from mnsd.routes import ROUTES
from mnsd.services import Services, build_services
from mnsd.settings import RECEIPT_SECRET, Settings
from mnsd.storage.sqlite import SqliteStorage, sqlite_storage

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


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
    method: str, target: str, headers: dict[str, str], body: bytes, routes: list[CompiledRoute]
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
            "timeEpoch": int(time.time() * 1000),
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
        self.httpd = ThreadingHTTPServer((host, port), _request_handler(routes, handlers, quiet, tools))
        self.httpd.daemon_threads = True
        self._mock: Any = None
        self.worker: LocalPushWorker | None = None
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
        else:
            create_tables(clients("dynamodb"), settings)
        state_machine_arn, queue_url = create_push_workflow(clients)
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
        )
        self.worker = LocalPushWorker(lambda: services, clients("sqs"), queue_url).start()
        if self.storage is not None:
            now_ms = lambda: ms(services.clock.now())  # noqa: E731
            reader = SqliteChangeReader(self.storage, lambda records: services.queue_events().handle(records), now_ms)
            self.streams = [reader.start()]
        else:
            self.streams = [
                LocalStreamReader(
                    settings.message_table, region, lambda records: services.queue_events().handle(records), lock
                ).start()
            ]
        return services

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
        return f"http://{host}:{port}"

    def start_background(self) -> LocalServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.worker is not None:
            self.worker.stop()
        for reader in self.streams:
            reader.stop()
        if self.storage is not None:
            self.storage.database.close()
        if self._mock is not None:
            self._mock.stop()


def _request_handler(
    routes: list[CompiledRoute],
    handlers: dict[str | None, Handler],
    quiet: bool,
    local_tools: dict[tuple[str, str], Callable[[], dict[str, str]]],
) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "MNS-Local"
        disable_nagle_algorithm = True  # headers and body leave in separate writes

        def _serve(self) -> None:
            started = time.perf_counter()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers: dict[str, str] = {}
            for name, value in self.headers.items():
                key = name.lower()
                headers[key] = f"{headers[key]},{value}" if key in headers else value
            tool = local_tools.get((self.command, self.path))
            if tool is not None:  # the local runtime's own tools, outside the MNS API
                result = {
                    "statusCode": 200,
                    "headers": {"Content-Type": "application/json"},
                    "body": json.dumps(tool()),
                }
            else:
                route_name, event = api_gateway_event(self.command, self.path, headers, body, routes)
                result = handlers[route_name](event, LocalContext())
            payload = result["body"].encode("utf-8")
            self.send_response(result["statusCode"])
            for name, value in result["headers"].items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            if not quiet:
                elapsed = (time.perf_counter() - started) * 1000
                print(f"{self.command} {self.path} {result['statusCode']} {elapsed:.1f}ms", flush=True)

        do_GET = do_PUT = do_POST = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # one line per request is ours
            pass

    return RequestHandler


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    engine = EngineChoice.from_env()
    # Receipt handles are signed with a key kept beside the data (a fresh one for moto or :memory:).
    os.environ.setdefault(RECEIPT_SECRET, receipt_secret(engine))
    settings = Settings.from_env()
    port = int(os.environ.get("MNS_PORT", "8080"))
    server = LocalServer(settings, port=port, engine=engine)
    key = StaticKeyStore(settings.credentials).default
    print(f"MNS API listening on {server.endpoint}", flush=True)
    print(f"  account id:        {key.account_id}", flush=True)
    print(f"  access key id:     {key.key_id}", flush=True)
    print(f"  access key secret: {key.secret}", flush=True)
    print(f"  region:            {settings.region}", flush=True)
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
