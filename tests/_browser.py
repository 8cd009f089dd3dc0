"""A headless Chromium for the view's browser tests: the system's own, never a download.

The browser is Debian's `chromium` (`make setup` installs it as root), driven through
playwright with `executable_path` (`playwright install` is never run). Without a
browser or playwright the tests are skipped with the reason - except in CI
(`CI=true`), where a missing browser fails them. `LORAGATE_CHROMIUM` names another
executable. Screenshots go to `build/artifacts/view/` (or `$LORAGATE_ARTIFACTS`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
CANDIDATES = ("chromium", "chromium-browser")
LAUNCH_TIMEOUT_MS = 60_000
"""A start-up takes about a second here; a browser that has not started in a minute
will not (a hang fails the test instead of eating CI's budget)."""


def chromium_path() -> str | None:
    explicit = os.environ.get("LORAGATE_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("LORAGATE_ARTIFACTS", REPO / "build" / "artifacts")) / "view"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (make setup installs chromium)")
    pytest.skip(reason)


def launch_browser() -> Iterator[Any]:
    """Yield a launched playwright Browser (for a fixture); skip or fail when there is none."""
    path = chromium_path()
    if path is None:
        _unavailable("no chromium found (as root: apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install 'loragate[dev]')")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, timeout=LAUNCH_TIMEOUT_MS)
        try:
            yield browser
        finally:
            browser.close()
