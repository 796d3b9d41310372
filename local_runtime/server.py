"""Serve the MNS API on 127.0.0.1 through the same Lambda handlers, on the embedded engine (or moto).

Each HTTP request becomes the API Gateway (HTTP API 2.0) event that AWS would deliver, goes to the
handler of the matching route (built by `mnsd.entry.lambda_handler.make_handler`, exactly as in
`functions/`), and the handler's result becomes the HTTP response. The parts: `connections` (accepting and
serving connections, bounded), `handler` (one connection's requests), `dispatch` (where a request goes), this
module (the backends, started and stopped with the server) and `startup` (`python -m local_runtime`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from local_runtime.analytics import EXPORT_PATH
from local_runtime.cloud_targets import (
    DEFAULT_BUS_DIR,
    LOCAL_EVENT_BUS_DIR,
    LOCAL_EVENT_BUSES,
    LOCAL_FUNCTIONS,
    BusRecorder,
    LocalLambda,
    create_buses,
    default_allow_lists,
    registered_buses,
    registered_functions,
)
from local_runtime.connections import LocalHttpServer
from local_runtime.console import console_responder
from local_runtime.dispatch import Handler, LocalPage, compile_routes
from local_runtime.engine import SQLITE, EngineChoice
from local_runtime.exports import export_sqlite, export_tables, write_backlog_snapshot
from local_runtime.handler import request_handler
from local_runtime.metrics import METRICS_PATH, MetricsPage
from local_runtime.minutes import GaugeSampler
from local_runtime.moto_client import SerializedClient, local_client
from local_runtime.push import LocalPushWorker, clock_waits, create_push_workflow, time_scale
from local_runtime.roles.containers import FunctionServices, enforced_roles, function_environment
from local_runtime.streams import LocalStreamReader, SqliteChangeReader
from local_runtime.tables import create_tables
from local_runtime.upgrade import upgrade
from local_runtime.waits import BoundedWaits
from mnsd.access.authentication import authenticate
from mnsd.access.keys import StaticKeyStore
from mnsd.entry.lambda_handler import make_handler
from mnsd.ground import errors
from mnsd.ground.clock import Clock, SystemClock, ms
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import PUSH_EVENT_BUS_ARNS, PUSH_LAMBDA_ARNS, Settings
from mnsd.metrics import TeeMetrics
from mnsd.metrics.process import ProcessMetrics
from mnsd.metrics.ring import MinuteRing, RecordedMinutes
from mnsd.push.dispatch import LocalDispatcher
from mnsd.push.signing import CERTIFICATE_PATH, generate_signing_material
from mnsd.queues.notifier import LocalNotifier
from mnsd.request.routes import CATCH_ALL, ROUTES
from mnsd.services import Services, build_services
from mnsd.storage.dynamodb.tables.changes import message_changes
from mnsd.storage.sqlite import SqliteStorage, sqlite_storage


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
        max_connections: int | None = None,
        clock: Clock | None = None,
        *,
        front_door: str = "",  # `alb`: the functions called through the load balancer's door (`local_runtime.alb`)
    ) -> None:
        routes = compile_routes()
        handlers: dict[str | None, Handler] = {
            name: make_handler(name, services=self._of(name or CATCH_ALL)) for name in [*ROUTES, None]
        }
        tools = {("POST", EXPORT_PATH): self.export}
        self.operator = StaticKeyStore(settings.credentials).default
        self.counts = ProcessMetrics()  # what the services count, served on `GET /metrics` with the engine's gauges
        self.clock = clock or SystemClock()  # every rule's time, and the push retries' waits
        self.ring = MinuteRing(self.clock)  # the last hour by minute, per queue (the console's minute chart)
        pages: dict[tuple[str, str], LocalPage] = {
            ("GET", METRICS_PATH): MetricsPage(lambda: self.services, self.counts)
        }
        handler = request_handler(
            routes,
            handlers,
            quiet,
            tools,
            console_responder(settings),
            self.authorize_operator,
            pages,
            self.clock.now,
            front_door,
        )
        self.httpd = LocalHttpServer((host, port), handler, max_connections)
        self._mock: Any = None
        self.worker: LocalPushWorker | None = None
        self.bus_recorder: BusRecorder | None = None
        self.sampler: GaugeSampler | None = None
        self.streams: list[LocalStreamReader | SqliteChangeReader] = []
        self.storage: SqliteStorage | None = None
        self.functions: FunctionServices | None = None
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
        lock = threading.Lock()  # one lock for every client: moto's backends are not thread-safe
        region = os.environ["AWS_DEFAULT_REGION"]
        aws = lru_cache(maxsize=None)(lambda name: SerializedClient(local_client(name, region), lock))
        # Lambda functions are the user's registered callables (moto's Lambda needs Docker), buses moto's EventBridge.
        functions = registered_functions(os.environ.get(LOCAL_FUNCTIONS, ""))
        local_lambda = LocalLambda(functions)
        clients = lambda name: local_lambda if name == "lambda" else aws(name)  # noqa: E731
        self.clients = clients
        if engine.engine == SQLITE:
            self.storage = sqlite_storage(engine.data_dir, engine.synchronous)
            upgrade(self.storage)
        else:
            create_tables(clients("dynamodb"), settings)
        state_machine_arn, queue_url = create_push_workflow(clients)
        clock_waits(self.clock, time_scale(os.environ))
        buses = registered_buses(os.environ.get(LOCAL_EVENT_BUSES, ""))
        if buses:
            folder = Path(os.environ.get(LOCAL_EVENT_BUS_DIR, DEFAULT_BUS_DIR))
            self.bus_recorder = BusRecorder(clients("sqs"), create_buses(clients, buses), folder).start()
        allow_lists = default_allow_lists(os.environ, region, list(functions), buses)
        key, certificate = generate_signing_material()
        settings = dataclasses.replace(
            settings,
            aws_region=region,
            push_lambda_arns=allow_lists[PUSH_LAMBDA_ARNS],
            push_event_bus_arns=allow_lists[PUSH_EVENT_BUS_ARNS],
            push_state_machine_arn=state_machine_arn,
            push_queue_url=queue_url,
            signing_key=key,
            signing_certificate=certificate,
            signing_cert_url=self.endpoint + CERTIFICATE_PATH,
        )
        notifier = BoundedWaits(LocalNotifier())  # one for every function: a send wakes the receives waiting
        dispatcher = LocalDispatcher(lambda: self._of("fanout")().fanout())

        def build(clients: Callable[[str], Any]) -> Services:
            built = build_services(
                settings,
                dynamodb=None if self.storage else clients("dynamodb"),
                storage=self.storage,
                notifier=notifier,
                dispatcher=dispatcher,
                clients=clients,
                clock=self.clock,
                metrics=TeeMetrics(self.counts, self.ring),
                minutes=RecordedMinutes(self.ring, lambda queue: built.queues.backlog(queue)),
            )
            return built

        services = self.services = build(clients)
        roles = enforced_roles(engine, os.environ, function_environment(settings), print)
        self.functions = FunctionServices(build, lock, region, roles, {"lambda": local_lambda})
        self.worker = LocalPushWorker(self._of("push_worker"), clients("sqs"), queue_url).start()
        self.sampler = GaugeSampler(lambda: self._of("sample_metrics")().queues, self.ring).start()
        oplog = self._of("oplog")
        if self.storage is not None:
            now_ms = lambda: ms(services.clock.now())  # noqa: E731
            reader = SqliteChangeReader(self.storage, lambda events: oplog().queue_events().handle(events), now_ms)
            self.streams = [reader.start()]
        else:
            self.streams = [
                LocalStreamReader(
                    settings.message_table,
                    region,
                    lambda records: oplog().queue_events().handle(message_changes(records)),
                    lock,
                ).start()
            ]
        return services

    def _of(self, function: str) -> Callable[[], Services]:
        """The services of `function` (`functions/{function}.py`): its own, with its role enforced on its clients,
        when the roles are (`local_runtime.roles`); else the one warm set every function shares."""

        def services() -> Services:
            return self.services if self.functions is None else self.functions.of(function, self.services)

        return services

    def authorize_operator(self, request: HttpRequest) -> None:
        """The local tools answer only requests signed with the operator's key (the first configured)."""
        caller = authenticate(
            request, self.services.keys, self.services.clock.now(), self.services.tokens, region=self.settings.region
        )
        if caller.key_id != self.operator.key_id or not caller.is_root:
            raise errors.AccessDenied()

    def export(self) -> dict[str, str]:
        """Export the tables and take the backlog snapshot for the analytics jobs (`python -m local_runtime.analytics`)."""
        folder = Path(os.environ.get("MNS_EXPORT_DIR", ".mns-local/exports"))
        if self.storage is not None:
            for reader in self.streams:  # the operation log up to date with what was acknowledged
                if isinstance(reader, SqliteChangeReader):
                    reader.drain()
            target = export_sqlite(self.storage, folder)
        else:
            target = export_tables(self.clients, self.settings, folder)
        write_backlog_snapshot(self.services.queues, self.services.clock, target)
        return {"exports": str(target.resolve())}

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
        if self.bus_recorder is not None:
            self.bus_recorder.stop()
        for reader in self.streams:
            reader.stop()
        if self.storage is not None:
            self.storage.database.close()
        if self._mock is not None:
            self._mock.stop()
