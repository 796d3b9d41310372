"""`python -m local_runtime` (`make run`): the server on the engine the environment names, its endpoint and keys
printed, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping

from console.assets import PREFIX as CONSOLE_PATH
from local_runtime.clock import clock_from_env
from local_runtime.connections import MAX_WORKERS
from local_runtime.dispatch import ALB
from local_runtime.engine import SQLITE, EngineChoice, receipt_secret
from local_runtime.server import LocalServer
from local_runtime.waits import MAX_WAITING_POLLS
from mnsd.access.keys import StaticKeyStore, create_keys_file
from mnsd.ground.settings import RECEIPT_SECRET, Settings


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def front_door_from_env(env: Mapping[str, str]) -> str:
    """`MNS_FRONT_DOOR` (`make run FRONT_DOOR=alb`): `alb` calls the functions through the load balancer's door;
    unset (or `http-api`) through API Gateway's."""
    value = env.get("MNS_FRONT_DOOR", "").strip().lower()
    if value not in ("", "http-api", ALB):
        raise SystemExit(f"MNS_FRONT_DOOR must be alb or http-api, not {value!r}")
    return ALB if value == ALB else ""


def main() -> None:
    engine = EngineChoice.from_env()
    # Receipt handles are signed with a key kept beside the data (a fresh one for moto or :memory:).
    os.environ.setdefault(RECEIPT_SECRET, receipt_secret(engine))
    settings = Settings.from_env()
    if settings.keys_file:
        create_keys_file(settings.keys_file)  # with no key: `python -m admin --keys-file ...` adds them
    port = int(os.environ.get("MNS_PORT", "8080"))
    front_door = front_door_from_env(os.environ)
    server = LocalServer(settings, port=port, engine=engine, clock=clock_from_env(os.environ), front_door=front_door)
    key = StaticKeyStore(settings.credentials).default
    print(f"MNS API listening on {server.endpoint}", flush=True)
    print(f"  console:           {server.endpoint}{CONSOLE_PATH}/", flush=True)
    print(f"  account id:        {key.account_id}", flush=True)
    print(f"  access key id:     {key.key_id}", flush=True)
    print(f"  access key secret: {key.secret}", flush=True)
    print(f"  region:            {settings.region}", flush=True)
    if settings.keys_file:
        print(f"  more keys:         {settings.keys_file} (python -m admin --keys-file; read within 1 s)", flush=True)
    if front_door:
        print(f"  front door:        {front_door} (each request as the load balancer's Lambda event)", flush=True)
    stored = f"SQLite in {engine.data_dir}" if engine.engine == SQLITE else "moto (in memory)"
    print(f"  storage:           {stored}", flush=True)
    limits = f"{server.httpd.max_connections} connections, {MAX_WORKERS} requests at once"
    print(f"  holds:             {limits} ({MAX_WAITING_POLLS} waiting long polls); past these: 503", flush=True)
    print("Press Ctrl-C to stop.", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # a graceful stop, as Ctrl-C
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
    finally:
        server.stop()
