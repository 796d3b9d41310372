"""Browser tests of the web console: Debian's chromium, driven by Selenium, against `python -m local_runtime`.

One server and one browser per session (per xdist worker). `make browser` installs chromium and
chromedriver. With MNS_CONSOLE_SCREENSHOTS=<folder> the tests also save the README's screenshots.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_page import ACCOUNT, REGION, Console
from mns.account import Account
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1366,900",  # a laptop screen
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "MNS_PORT": str(port),
        "MNS_CREDENTIALS": ":".join(ACCOUNT),
        "MNS_REGION": REGION,
        "MNS_DATA_DIR": str(tmp_path_factory.mktemp("data")),  # the default engine (SQLite) keeps its data here
    }
    log = tmp_path_factory.mktemp("server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(PYTHON), "-m", "local_runtime"], cwd=ROOT, env=env, stdout=out, stderr=out)
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early: {log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if time.monotonic() > deadline:
                proc.terminate()
                raise RuntimeError(f"server did not start: {log.read_text()}") from None
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def account(endpoint: str) -> Account:
    return Account(endpoint, ACCOUNT[1], ACCOUNT[2])


@pytest.fixture(scope="session")
def driver() -> Iterator[WebDriver]:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.fail(f"{CHROMIUM} and {CHROMEDRIVER} are needed: run `make browser`")
    profile = tempfile.mkdtemp(prefix="console-browser-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield browser
    browser.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def console(driver: WebDriver, endpoint: str) -> Iterator[Console]:
    page = Console(driver, endpoint)
    page.sign_in()
    yield page
    assert page.script_errors() == []


@pytest.fixture
def name() -> str:
    return "br-" + uuid.uuid4().hex[:16]
