"""`pip install loragate` with no extras: the CLI works where it can and says what to
install where it cannot - never a traceback.

The venv is built from PyPI with only the core dependencies (slow: ~30 s with a warm
pip cache), apart from the dev venv, which holds `click`, torch and the rest. Set
LORAGATE_OFFLINE=1 to skip it on a machine without a package index.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

from tests._mini_evalset import ENTRY_IDS, PASSING, gen, write_evalset, write_generations
from tests._tool_servers import mcp_server, replay_run

REPO = Path(__file__).resolve().parent.parent
AGENT20 = REPO / "evalsets" / "agent20"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `loragate` executable of a venv holding loragate and its core dependencies."""
    if os.environ.get("LORAGATE_OFFLINE"):
        pytest.skip("LORAGATE_OFFLINE is set")
    root = tmp_path_factory.mktemp("core")
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(REPO)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "venv" / "bin" / "loragate"


def loragate(exe: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_the_core_install_has_no_click_torch_httpx_or_openai(core: Path) -> None:
    python = core.parent / "python"
    for module in ("click", "torch", "httpx", "openai", "matplotlib"):
        found = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True)
        assert found.returncode != 0, f"{module} is installed: the test proves nothing"


USAGE_ERRORS = [
    ["score", "--generations", "g", "--evalset", "e", "--out", "o", "--parse-mode", "loose"],
    ["score", "--generations", "g", "--evalset", "e", "--out", "o", "--k", "0"],
    ["score", "--generations", "g", "--out", "o"],
    ["compare", "a", "b", "-f", "xml"],
    ["run", "--samples", "0"],
    ["run", "--limit", "0"],
    ["reliability", "--k", "-2"],
    ["reliability", "-n", "ten"],
    ["frobnicate"],
    ["gate"],
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=[" ".join(a) for a in USAGE_ERRORS])
def test_usage_errors_exit_2_without_traceback(core: Path, tmp_path: Path, args: list[str]) -> None:
    done = loragate(core, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Usage:" in done.stderr


def test_core_commands_work_and_missing_extras_say_what_to_install(
    core: Path, tmp_path: Path
) -> None:
    write_evalset(tmp_path / "ev")
    write_generations(tmp_path / "g.jsonl", [gen(e, PASSING[e]) for e in ENTRY_IDS])
    assert loragate(core, "validate", str(AGENT20), cwd=tmp_path).returncode == 0
    scored = loragate(
        core,
        "score",
        "--generations",
        "g.jsonl",
        "--evalset",
        "ev",
        "--out",
        "run",
        cwd=tmp_path,
    )
    assert scored.returncode == 0, scored.stderr
    gate = loragate(
        core, "gate", "run", "--policy", str(REPO / "configs/gates/default.yaml"), cwd=tmp_path
    )
    assert gate.returncode in (0, 1) and "Traceback" not in gate.stderr, gate.stderr
    card = loragate(core, "card", "run", cwd=tmp_path)
    assert card.returncode == 2 and "loragate[card]" in card.stderr and "--no-chart" in card.stderr
    assert not (tmp_path / "run" / "card").exists()
    card = loragate(core, "card", "run", "--no-chart", cwd=tmp_path)
    assert card.returncode == 0 and (tmp_path / "run" / "card" / "card.md").exists(), card.stderr
    assert loragate(core, "reliability", "-r", "0.99", "-n", "10", cwd=tmp_path).returncode == 0
    for backend, extra in (("hf", "hf"), ("openai", "openai")):
        done = loragate(
            core,
            "run",
            "--backend",
            backend,
            "--model",
            "Qwen/Qwen3-4B",
            "--evalset",
            "ev",
            "--out",
            f"run-{backend}",
            cwd=tmp_path,
        )
        assert done.returncode == 2, done.stderr
        assert f"pip install 'loragate[{extra}]'" in done.stderr
        assert "Traceback" not in done.stderr
        assert not (tmp_path / f"run-{backend}").exists()
    trained = loragate(
        core, "train", "--config", str(REPO / "configs/train/smollm2-cpu.yaml"), cwd=tmp_path
    )
    assert trained.returncode == 2 and "loragate[train]" in trained.stderr, trained.stderr


def test_an_mcp_tool_server_without_the_sdk_says_what_to_install(
    core: Path, tmp_path: Path
) -> None:
    done = loragate(core, *replay_run(tmp_path, mcp_server()), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "pip install 'loragate[mcp]'" in done.stderr and "Traceback" not in done.stderr
