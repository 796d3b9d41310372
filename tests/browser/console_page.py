"""The console in the browser, as the tests drive it: navigation, waits and the gestures they repeat."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

ACCOUNT = ("1000000000000001", "BROWSERKEY", "BROWSERSECRET")
REGION = "cn-hangzhou"
# A key of the same account (in the server's keys file) that may send to and read any queue, nothing else.
LIMITED = ("1000000000000001", "LIMITEDKEY", "LIMITEDSECRET")
LIMITED_POLICY = {
    "Version": "1",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["mns:SendMessage", "mns:GetQueueAttributes"],
            "Resource": [f"acs:mns:*:{LIMITED[0]}:/queues/*"],
        }
    ],
}
WAIT_SECONDS = 10


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

    def submit(self, fields: dict[str, str], button: str, notice: str, text: str) -> WebElement:
        """Fills the fields (by CSS selector), presses the button and waits for `text` in the `notice` element."""
        for css, value in fields.items():
            self.fill(css, value)
        self.button(button).click()
        return self.text_in(notice, text)

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
