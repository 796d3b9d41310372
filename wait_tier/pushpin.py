"""Debian's `pushpin` (1.36), configured and run for the wait tier: clients on `port`, every request proxied to
the waker (`wait_tier.waker`), Grip-Sig signed with the tier's key, the control API (`/publish/`) on
`control_port`, every other socket a Unix socket in its own run directory (two tiers can run side by side).

The Debian package expects a separate `zurl` service (`/var/run/zurl`): here Pushpin's runner starts zurl itself
and the proxy is pointed at its sockets in the run directory.
"""

from __future__ import annotations

import dataclasses
import http.client
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CONFIG = """[global]
include={{libdir}}/internal.conf
rundir={rundir}
ipc_prefix=pushpin-
port_offset=0
stats_connection_ttl=120

[runner]
services=condure,zurl,pushpin-proxy,pushpin-handler
http_port={port}
logdir={logdir}
log_level={log_level}
client_buffer_size=8192
client_maxconn={max_connections}
condure_bin=condure
zurl_bin=zurl

[proxy]
routesfile={routes}
# no inspection of each request by the handler (request sharing, unused here) and no per-connection stats: they
# cost about 0.75 ms of CPU per proxied request (the handler's 0.45 ms, the proxy's 0.3 ms)
handler_inspect_spec=
stats_spec=
zurl_out_specs=ipc://{{rundir}}/{{ipc_prefix}}zurl-in
zurl_out_stream_specs=ipc://{{rundir}}/{{ipc_prefix}}zurl-in-stream
zurl_in_specs=ipc://{{rundir}}/{{ipc_prefix}}zurl-out
debug=false
auto_cross_origin=false
accept_x_forwarded_protocol=false
set_x_forwarded_protocol=proto-only
log_from=false
log_user_agent=false
sig_iss=pushpin
sig_key={sig_key}
updates_check=off

[handler]
push_in_spec=ipc://{{rundir}}/{{ipc_prefix}}push-in
push_in_sub_specs=ipc://{{rundir}}/{{ipc_prefix}}push-in-sub
push_in_sub_connect=false
push_in_http_addr={control_host}
push_in_http_port={control_port}
push_in_http_max_headers_size=10000
push_in_http_max_body_size=1000000
stats_spec=ipc://{{rundir}}/{{ipc_prefix}}stats
command_spec=ipc://{{rundir}}/{{ipc_prefix}}command
message_rate=100000
message_hwm=100000
message_wait=5000
id_cache_ttl=60
connection_subscription_max=20
subscription_linger=60
stats_subscription_ttl=60
stats_report_interval=10
stats_format=tnetstring
"""


@dataclass(frozen=True)
class PushpinConfig:
    directory: Path  # its config, routes, run and log directories
    port: int  # clients
    control_port: int  # `/publish/`
    waker: str  # host:port of the waker, Pushpin's only route
    sig_key: str
    control_host: str = "127.0.0.1"
    max_connections: int = 50000
    log_level: int = 1  # warnings and errors: at 2 (info) every request is logged, through the runner

    def write(self) -> Path:
        for sub in ("run", "log"):
            (self.directory / sub).mkdir(parents=True, exist_ok=True)
        routes = self.directory / "routes"
        routes.write_text(f"* {self.waker}\n")
        config = self.directory / "pushpin.conf"
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        config.write_text(
            CONFIG.format(rundir=self.directory / "run", logdir=self.directory / "log", routes=routes, **own)
        )
        return config


def installed() -> bool:
    return all(shutil.which(name) for name in ("pushpin", "condure", "zurl"))


def start(
    config: PushpinConfig, probe: str, bind: str | None = "127.0.0.1", timeout: float = 20.0
) -> subprocess.Popen[bytes]:
    """Pushpin running `config`, ready: a `GET probe` through its client port is answered by its route (condure
    listens well before the proxy behind it is connected; a request taken then is dropped unanswered), and its
    control port accepts connections. In its own process group, so `stop` ends its runner's children too."""
    path = config.write()
    command = ["pushpin", "--config", str(path), "--merge-output"]
    if bind is not None:
        command += ["--port", f"{bind}:{config.port}"]
    log = open(config.directory / "log" / "runner.log", "wb")  # noqa: SIM115 (the child keeps it)
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"pushpin exited ({process.returncode}): see {config.directory / 'log'}")
        if b"failed to bind" in (config.directory / "log" / "runner.log").read_bytes():
            stop(process)
            raise RuntimeError(f"pushpin could not listen on {config.port}: see {config.directory / 'log'}")
        if _answers(bind or "127.0.0.1", config.port, probe) and _accepts(config.control_host, config.control_port):
            return process
        time.sleep(0.1)
    stop(process)
    raise RuntimeError(f"pushpin not ready in {timeout} s: see {config.directory / 'log'}")


def stop(process: subprocess.Popen[bytes], kill: bool = False) -> None:
    """End Pushpin and its children (SIGKILL: as a crash would), even if its runner is gone already. The runner
    puts some of its services in process groups of their own: each child's group is signalled too."""
    groups = {process.pid, *(_group(pid) for pid in _children(process.pid))}
    for signum in (signal.SIGKILL if kill else signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            try:
                os.killpg(group, signum)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(group) for group in groups):
            time.sleep(0.05)
        if not any(_alive(group) for group in groups):
            break
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        pass


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _group(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return pid


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


def _answers(host: str, port: int, path: str) -> bool:
    """Whether `GET path` is answered with a success through Pushpin (from its route, the waker)."""
    connection = http.client.HTTPConnection(host, port, timeout=1)
    try:
        connection.request("GET", path)
        return 200 <= connection.getresponse().status < 300
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
