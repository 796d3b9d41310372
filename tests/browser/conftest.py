"""Browser tests of the web console: Debian's chromium, driven by Selenium, against `python -m local_runtime`.

One server and one browser per session (per xdist worker). `make browser` installs chromium and
chromedriver. With MNS_CONSOLE_SCREENSHOTS=<folder> the tests also save the README's screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator

import pytest
from mns.account import Account
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser.console_page import ACCOUNT, LIMITED, LIMITED_POLICY, REGION, Console
from tests.support.local_server import free_port, start_server, stop_server

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


@pytest.fixture(scope="session")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    keys_file = tmp_path_factory.mktemp("keys") / "keys.json"
    account, key_id, secret = LIMITED
    keys_file.write_text(
        json.dumps({"keys": [{"account": account, "id": key_id, "secret": secret, "policy": LIMITED_POLICY}]})
    )
    env = {
        **os.environ,
        "MNS_PORT": str(port),
        "MNS_CREDENTIALS": ":".join(ACCOUNT),
        "MNS_KEYS_FILE": str(keys_file),
        "MNS_REGION": REGION,
        "MNS_DATA_DIR": str(tmp_path_factory.mktemp("data")),  # the default engine (SQLite) keeps its data here
    }
    proc = start_server(env, port, tmp_path_factory.mktemp("server") / "server.log")
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


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
