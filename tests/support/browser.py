"""A real browser for the web table's tests: Debian's chromium driven by chromium-driver.

Never a downloaded browser: the executables are the distribution's (`scripts/browser`
installs them; `.ci/run` calls it). When they are missing the tests that need them fail with
a message saying so — they do not skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
INSTALL_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "browser"
# As root, on a machine without a display or a network beyond loopback (see the module doc).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,900")
PAGE_LOAD_SECONDS = 60


def ensure_browser() -> None:
    """Install chromium and chromium-driver if absent; fail the test clearly if that fails."""
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return
    done = subprocess.run([str(INSTALL_SCRIPT)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail(f"the browser tests need Debian's chromium and chromium-driver"
                    f" ({CHROMIUM}, {CHROMEDRIVER}); {INSTALL_SCRIPT} could not install them:\n"
                    f"{done.stdout[-2000:]}{done.stderr[-2000:]}", pytrace=False)


@contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[webdriver.Chrome]:
    """A fresh headless chromium (its own profile) that records its network traffic."""
    ensure_browser()
    profile = tempfile.mkdtemp(prefix="fiftyk-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(PAGE_LOAD_SECONDS)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def network_messages(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """The DevTools network events recorded since the last call (performance log)."""
    out = []
    entries: list[dict[str, Any]] = driver.get_log("performance")  # type: ignore[no-untyped-call]
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        if str(message.get("method", "")).startswith("Network."):
            out.append(message)
    return out


__all__ = ["CHROMEDRIVER", "CHROMIUM", "chromium", "ensure_browser", "network_messages"]
