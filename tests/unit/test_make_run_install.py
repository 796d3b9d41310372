"""`make run` on a fresh clone: it installs pyproject's `serve` extra only, which holds what the server imports,
and its banner names the console's URL. The other targets install `dev`, which holds `serve`."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from email.utils import formatdate
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.local_server import PYTHON, ROOT, free_port, start_server, stop_server
from tests.support.signers import v2_signature

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT["optional-dependencies"]
KEY_ID, SECRET = "LOCALACCESSKEYID", "LOCALACCESSKEYSECRET"
XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'
# The venv's own tools (setuptools puts a hook in every interpreter's start through a .pth file).
VENV_TOOLS = {"pip", "setuptools"}
# Imported when installed, not needed: requests loads urllib3's SOCKS support if PySocks is there (dev has it,
# through selenium's urllib3[socks]); pynamodb's signals use blinker if it is there (dev has it, through moto's server).
OPTIONAL = {"pysocks", "blinker"}


def pins(requirements: list[str]) -> dict[str, str]:
    return {canonicalize_name(Requirement(r).name): str(Requirement(r).specifier) for r in requirements}


def test_dev_holds_the_serve_set_with_the_same_pins() -> None:
    assert f"{PROJECT['name']}[serve]" in EXTRAS["dev"]
    serve, dev = pins(EXTRAS["serve"]), pins(EXTRAS["dev"])
    assert all(spec.startswith("==") for spec in serve.values()), serve
    assert {name: dev[name] for name in serve if name in dev} == {name: serve[name] for name in serve if name in dev}


@pytest.fixture
def make_dir(tmp_path: Path) -> Path:
    if shutil.which("make") is None:
        pytest.skip("make is missing")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def planned(folder: Path, target: str) -> str:
    """What `make TARGET` would run there (make -n), prerequisites included."""
    return subprocess.run(["make", "-n", target], cwd=folder, capture_output=True, text=True, check=True).stdout


def stamp(folder: Path, name: str) -> None:
    (folder / ".venv").mkdir(exist_ok=True)
    path = folder / ".venv" / name
    path.touch()
    later = (folder / "pyproject.toml").stat().st_mtime + 10
    os.utime(path, (later, later))


def test_run_installs_the_serve_set_and_the_other_targets_the_whole_dev_set(make_dir: Path) -> None:
    assert "-e '.[serve]'" in planned(make_dir, "run") and "[dev]" not in planned(make_dir, "run")
    assert "-e '.[dev]'" in planned(make_dir, "unit")
    stamp(make_dir, ".installed-serve")  # after `make run`: a later `make unit` upgrades to dev
    assert "pip install" not in planned(make_dir, "run")
    assert "-e '.[dev]'" in planned(make_dir, "unit")


def test_run_after_the_whole_install_installs_nothing(make_dir: Path) -> None:
    install = planned(make_dir, "unit")  # what `make test` and the others run first: it stamps both sets
    assert re.search(r"touch \.venv/\.installed \.venv/\.installed-serve", install), install
    stamp(make_dir, ".installed")
    stamp(make_dir, ".installed-serve")
    assert "pip install" not in planned(make_dir, "run")


def serve_closure() -> set[str]:
    """The distributions `pip install -e '.[serve]'` brings: the project's dependencies and its serve extra's,
    with theirs (as this environment's metadata declares them, extras followed)."""
    found: set[str] = set()
    seen: set[tuple[str, str]] = set()
    todo = [Requirement(r) for r in PROJECT["dependencies"] + EXTRAS["serve"]]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        for extra in requirement.extras or {""}:
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            found.add(name)
            for text in metadata.requires(name) or []:
                dependency = Requirement(text)
                if dependency.marker is None or dependency.marker.evaluate({"extra": extra}):
                    todo.append(dependency)
    return found


PROBE = """
import json, os, sys
from local_runtime.engine import EngineChoice, receipt_secret
from local_runtime.server import LocalServer
from mnsd.ground.settings import RECEIPT_SECRET, Settings
engine = EngineChoice.from_env()
os.environ.setdefault(RECEIPT_SECRET, receipt_secret(engine))
server = LocalServer(Settings.from_env(), port=0, quiet=True, engine=engine).start_background()
print(server.endpoint, flush=True)
sys.stdin.readline()
server.stop()
print(json.dumps(sorted({name.partition(".")[0] for name in sys.modules})), flush=True)
"""


def call(endpoint: str, method: str, resource: str, body: str = "") -> int:
    data = body.encode()
    md5 = base64.b64encode(hashlib.md5(data).hexdigest().encode()).decode() if data else ""
    content_type, date, mns = "text/xml;charset=UTF-8", formatdate(usegmt=True), {"x-mns-version": "2015-06-06"}
    signature = v2_signature(SECRET, method, md5, content_type, date, mns, resource)
    headers = {"Date": date, "Content-Type": content_type, "Authorization": f"MNS {KEY_ID}:{signature}", **mns}
    if md5:
        headers["Content-MD5"] = md5
    connection = http.client.HTTPConnection(endpoint.split("://", 1)[1], timeout=30)
    try:
        connection.request(method, resource, data, headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.mark.parametrize("engine", ["sqlite", "moto"])
def test_what_the_server_imports_is_in_the_serve_set(engine: str, push_endpoint) -> None:
    """Queues, a signed push through the retry workflow and the console, on a server in a process of its own:
    every third-party module it loaded comes with `.[serve]` (the dev set only would break `make run`)."""
    env = {
        **os.environ,
        "MNS_ENGINE": engine,
        "MNS_DATA_DIR": ":memory:",
        "MNS_PUSH_ALLOWED_NETWORKS": "127.0.0.0/8",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
    probe = subprocess.Popen(
        [str(PYTHON), "-c", PROBE], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert probe.stdout is not None
    try:
        endpoint = probe.stdout.readline().strip()
        message = f"<Message {XMLNS}><MessageBody>hello</MessageBody></Message>"
        assert call(endpoint, "PUT", "/queues/q", f"<Queue {XMLNS}/>") == 201
        assert call(endpoint, "POST", "/queues/q/messages", message) == 201
        assert call(endpoint, "GET", "/queues/q/messages?waitseconds=1") == 200
        assert call(endpoint, "PUT", "/topics/t", f"<Topic {XMLNS}/>") == 201
        subscription = f"<Subscription {XMLNS}><Endpoint>{push_endpoint.url('/hook')}</Endpoint></Subscription>"
        assert call(endpoint, "PUT", "/topics/t/subscriptions/s", subscription) == 201
        assert call(endpoint, "POST", "/topics/t/messages", message) == 201
        (hit,) = push_endpoint.wait_for(1, timeout=20)
        assert hit.signature_valid
        assert call(endpoint, "GET", "/console/") == 200
        out, _ = probe.communicate("done\n", timeout=60)  # the server stops, then names the modules loaded
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
    loaded = json.loads(out.splitlines()[-1])
    providers = metadata.packages_distributions()
    used = {canonicalize_name(dist) for module in loaded for dist in providers.get(module, [])}
    missing = used - serve_closure() - {canonicalize_name(PROJECT["name"])} - VENV_TOOLS - OPTIONAL
    assert not missing, f"the server imports what only `dev` installs: {sorted(missing)}"


def test_the_banner_names_the_console_and_it_answers(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "MNS_PORT": str(port), "MNS_DATA_DIR": ":memory:"}
    log = tmp_path / "server.log"
    proc = start_server(env, port, log)
    try:
        deadline = time.monotonic() + 10
        while "Press Ctrl-C" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        (url,) = re.findall(r"^  console: +(\S+)$", log.read_text(), re.MULTILINE)
        assert url == f"http://127.0.0.1:{port}/console/"
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", url.split(str(port), 1)[1])
        response = connection.getresponse()
        assert (response.status, response.getheader("Content-Type")) == (200, "text/html; charset=utf-8")
        assert b"<html" in response.read().lower()
        connection.close()
    finally:
        stop_server(proc)


def test_run_with_the_wait_tier_serves_behind_the_holder_and_nothing_installs_pushpin(make_dir: Path) -> None:
    for name in ("holder", "pushpin"):  # (the tier's former name, taken for the holder)
        plan = subprocess.run(
            ["make", "-n", "run", f"WAIT_TIER={name}"], cwd=make_dir, capture_output=True, text=True, check=True
        ).stdout
        assert "-m local_runtime.behind_holder" in plan and "apt-get" not in plan, plan
    assert "behind_holder" not in planned(make_dir, "run")
    assert "pushpin" not in planned(make_dir, "e2e") and "apt-get" not in planned(make_dir, "e2e")
