"""The web page in a real browser, for the browser tests and for docs/web_screenshots.py: ``serving(app)`` runs
uvicorn in a thread on 127.0.0.1 and a free port, ``chromium()`` starts Debian's headless Chromium through
``/usr/bin/chromedriver`` (never Selenium Manager, which would download a driver), ``rendered_dom(url)`` has Chromium
draw a page with no driver at all, ``browser_missing()`` says why these cannot run here."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
#: Installed by a test after the page has loaded: records the body of every response the page fetches.
RECORD_FETCHES = """
window.__fetched = [];
const original = window.fetch;
window.fetch = async (...args) => {
  const response = await original(...args);
  window.__fetched.push(await response.clone().text());
  return response;
};
"""


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    for module in ("selenium", "fastapi", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[web]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app served by uvicorn in a thread on 127.0.0.1; yields its base URL and stops it afterwards."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=_free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def rendered_dom(url: str, timeout_s: float = 60) -> str:
    """The page at ``url`` as headless Chromium draws it on its own, without WebDriver (what ``chromium --screenshot
    URL`` shows): the DOM once the page's requests are answered (a virtual-time budget lets them finish)."""
    with tempfile.TemporaryDirectory(prefix="tabletop-chromium-") as profile:
        done = subprocess.run([str(CHROMIUM), *_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                               "--dump-dom", url], capture_output=True, text=True, timeout=timeout_s)
    return done.stdout


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium WebDriver with a fresh profile in a temporary folder."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="tabletop-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (*_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
        driver.set_page_load_timeout(30)
        try:
            yield driver
        finally:
            driver.quit()
