"""Debian's Chromium, headless, driven by Selenium through Debian's chromedriver (both
installed by the Makefile; Selenium's own driver download is never used), and small
waits on the page: poll with a deadline, never sleep."""
from __future__ import annotations

import shutil
import time

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def headless_chromium(width: int = 1400, height: int = 1100, flags: tuple[str, ...] = (),
                      network_log: bool = False):
    """A started ``webdriver.Chrome`` (``flags``: more command-line switches;
    ``network_log``: DevTools events in ``get_log("performance")``); the caller quits it."""
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        pytest.skip("chromium is not installed (make test installs Debian's chromium and chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-extensions", f"--window-size={width},{height}", *flags):
        options.add_argument(flag)
    if network_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or CHROMEDRIVER)
    return webdriver.Chrome(service=service, options=options)


def wait_page(driver, condition, timeout: float, what: str, interval: float = 0.05):
    """Poll ``condition(driver)`` until it returns something true; that value."""
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            found = condition(driver)
            if found:
                return found
            last = found
        except WebDriverException as exc:  # an element replaced between find and read
            last = exc
        if time.monotonic() >= deadline:
            raise AssertionError(f"page: timed out after {timeout}s waiting for {what} (last: {last!r})")
        time.sleep(interval)  # poll interval


def statuses(driver, url: str) -> list[int]:
    """The HTTP statuses Chromium received for ``url`` since the last call (needs
    ``network_log``): what a page that shows nothing, such as a login prompt, got."""
    import json
    out = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.responseReceived":
            response = message["params"]["response"]
            if response["url"] == url:
                out.append(response["status"])
    return out


def texts(driver, selector: str) -> list[str]:
    """The text of every element ``selector`` finds (read in one script: no stale elements)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector)


def attrs(driver, selector: str, name: str) -> list[str | None]:
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.getAttribute(arguments[1]))",
        selector, name)
