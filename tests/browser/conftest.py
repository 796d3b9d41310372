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
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mns.account import Account
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"
ACCOUNT = ("1000000000000001", "BROWSERKEY", "BROWSERSECRET")
REGION = "cn-hangzhou"
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
WAIT_SECONDS = 10


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


class Console:
    """The console in the browser: navigation, waits and the few gestures the tests repeat."""

    def __init__(self, driver: WebDriver, endpoint: str) -> None:
        self.driver = driver
        self.endpoint = endpoint
        self.shots = os.environ.get("MNS_CONSOLE_SCREENSHOTS")

    def open(self, hash_path: str = "#/queues") -> None:
        """Loads the console afresh at this page."""
        url = f"{self.endpoint}/console/{hash_path}"
        if self.driver.current_url == url:
            self.driver.refresh()
        else:
            self.driver.get(url)

    def wait(self, condition: Callable[[WebDriver], object], timeout: float = WAIT_SECONDS, what: str = "") -> object:
        try:
            wait = WebDriverWait(
                self.driver, timeout, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException]
            )  # the page re-renders while it is read
            return wait.until(condition)
        except TimeoutException:
            body = self.driver.find_element(By.TAG_NAME, "body").text
            raise AssertionError(f"timed out waiting for {what or condition}; page text:\n{body}") from None

    def find(self, css: str, timeout: float = WAIT_SECONDS) -> WebElement:
        return self.wait(lambda d: _visible(d, css), timeout, css)  # type: ignore[return-value]

    def text_in(self, css: str, text: str, timeout: float = WAIT_SECONDS) -> WebElement:
        def found(d: WebDriver) -> WebElement | None:
            element = _visible(d, css)
            return element if element is not None and text in element.text else None

        return self.wait(found, timeout, f"{text!r} in {css}")  # type: ignore[return-value]

    def fill(self, css: str, value: str) -> None:
        """Replaces a field's text as a user does (select all, type), so the page sees input events."""
        field = self.find(css)
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(Keys.BACKSPACE)
        field.send_keys(value)

    def click(self, css: str) -> None:
        self.find(css).click()

    def button(self, label: str, within: str = "main") -> WebElement:
        xpath = f".//button[normalize-space()={label!r}]"

        def found(d: WebDriver) -> WebElement | None:
            for scope in d.find_elements(By.CSS_SELECTOR, within):
                for button in scope.find_elements(By.XPATH, xpath):
                    if button.is_displayed() and button.is_enabled():
                        return button
            return None

        return self.wait(found, what=f"button {label!r} in {within}")  # type: ignore[return-value]

    def sign_in(self, key_id: str = ACCOUNT[1], secret: str = ACCOUNT[2]) -> None:
        """Opens the console with this key (forgetting any key kept in the session)."""
        self.open()
        self.driver.execute_script("sessionStorage.clear()")
        self.open()
        self.fill("#key-id", key_id)
        self.fill("#key-secret", secret)
        self.button("Use this key").click()
        self.find("#current-key")

    def screenshot(self, name: str) -> None:
        if self.shots:
            Path(self.shots).mkdir(parents=True, exist_ok=True)
            self.driver.save_screenshot(str(Path(self.shots) / f"{name}.png"))

    def script_errors(self) -> list[str]:
        """Errors the page logged (CSP violations, exceptions), beside the HTTP errors the tests provoke."""
        return [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]
        ]


def _visible(driver: WebDriver, css: str) -> WebElement | None:
    for element in driver.find_elements(By.CSS_SELECTOR, css):
        if element.is_displayed():
            return element
    return None


@pytest.fixture
def console(driver: WebDriver, endpoint: str) -> Iterator[Console]:
    page = Console(driver, endpoint)
    page.sign_in()
    yield page
    assert page.script_errors() == []


@pytest.fixture
def name() -> str:
    return "br-" + uuid.uuid4().hex[:16]
