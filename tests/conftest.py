from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._extras import EXTRAS, missing

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def agent20_dir() -> Path:
    return REPO / "evalsets" / "agent20"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked with an extra (`mcp`, `tau2`, `hf`, `train`, ...: tests/_extras.py)
    is skipped with the reason naming it when the extra is not installed, except under
    `CI=true`, where it must run (and fail)."""
    for marker in EXTRAS:
        if item.get_closest_marker(marker) is not None:
            reason = missing(marker)
            if reason is not None:
                pytest.skip(reason)


# -- the world of the hostile-input matrix over the new surfaces (tests/_hostile_*.py) --


@pytest.fixture(scope="session")
def hostile_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests._hostile_world import build_world

    reason = missing("bfcl")  # the world holds a small copy of BFCL's data
    if reason is not None:
        pytest.skip(reason)
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
