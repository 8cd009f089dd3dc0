"""The CI recipe of docs/ci.md runs (issue 46): the workflow file's CPU job, step by step
as GitHub Actions would run its `run:` lines, on the case-study fixture (round 1 the
stored baseline, round 2 the candidate), and the shell version for other CI systems;
the GPU job's steps are checked by `run --dry-run`'s plan, so the example cannot rot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests._adapters import make_adapter

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / "docs" / "ci" / "github-actions.yml"
SHELL = REPO / "docs" / "ci" / "gate.sh"
CASE = REPO / "tests" / "data" / "casestudy"
BIN = str(Path(sys.executable).parent)


def _workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _runs(job: str) -> list[str]:
    """The `run:` lines of `job`, installs left out (the test's venv has loragate)."""
    steps = _workflow()["jobs"][job]["steps"]
    return [s["run"] for s in steps if "run" in s and not s["run"].startswith("pip install")]


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    env.update(
        PATH=BIN + os.pathsep + env.get("PATH", ""),
        EVALSET=str(CASE / "evalset"),
        POLICY=str(REPO / "configs" / "gates" / "default.yaml"),
        BASELINE=str(tmp / "baselines" / "current"),
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"),
        COLUMNS="120",
    )
    env.update(extra)
    return env


def _bash(step: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", step], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.fixture
def ci_folder(tmp_path: Path) -> Path:
    """A checkout as the gate job sees it: the stored baseline and the downloaded
    generations artifact."""
    (tmp_path / "baselines" / "current").mkdir(parents=True)
    shutil.copy(CASE / "round1" / "generations.jsonl", tmp_path / "baselines" / "current")
    (tmp_path / "gen").mkdir()
    shutil.copy(CASE / "round2" / "generations.jsonl", tmp_path / "gen")
    return tmp_path


def test_the_gate_job_runs_step_by_step(ci_folder: Path) -> None:
    env = _env(ci_folder)
    steps = _runs("gate")
    assert [s.split()[1] for s in steps] == ["score", "compare", "card", "gate"]
    *before, gate = steps
    for step in before:
        done = _bash(step, ci_folder, env)
        assert done.returncode == 0, (step, done.stderr[-2000:])
    done = _bash(gate, ci_folder, env)
    verdict = json.loads((ci_folder / "runs" / "candidate" / "gate.json").read_text())
    assert done.returncode == verdict["exit_code"], done.stderr[-2000:]
    assert done.returncode in (0, 1, 6)
    assert (ci_folder / "compare.md").read_text().strip()
    assert (ci_folder / "card" / "card.md").is_file()
    assert "loragate gate:" in (ci_folder / "summary.md").read_text()  # the job summary


def test_the_shell_version_gives_the_same_verdict(ci_folder: Path) -> None:
    env = _env(ci_folder, GENERATIONS=str(ci_folder / "gen" / "generations.jsonl"))
    done = subprocess.run(
        ["bash", str(SHELL)], cwd=ci_folder, env=env, capture_output=True, text=True
    )
    verdict = json.loads((ci_folder / "runs" / "candidate" / "gate.json").read_text())
    assert done.returncode == verdict["exit_code"], done.stderr[-2000:]


def test_the_gpu_job_generates_what_its_plan_checked(tmp_path: Path) -> None:
    plan, generate = _runs("generate")
    assert "--dry-run" in plan
    assert generate == plan.replace(" --dry-run", ""), "the plan and the run must be one command"
    make_adapter(tmp_path / "out" / "adapter")
    env = _env(
        tmp_path,
        CONFIG=str(REPO / "configs" / "qwen3-4b.yaml"),
        ADAPTER="out/adapter",
        EVALSET=str(REPO / "evalsets" / "agent20"),
        HF_HOME=str(tmp_path / "hf-home"),
        HF_HUB_OFFLINE="1",
    )
    done = _bash(plan, tmp_path, env)
    # every option resolved (the adapter read, the generations counted); only the model
    # is missing on a machine with no hub cache, and the plan says how to get it
    assert "candidate (rank 16)" in done.stdout, (done.stdout, done.stderr)
    if done.returncode != 0:
        assert done.returncode == 2
        assert "huggingface-cli download Qwen/Qwen3-4B" in done.stderr
    assert not (tmp_path / "runs").exists()
