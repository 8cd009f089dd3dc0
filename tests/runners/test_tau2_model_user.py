"""A model user on a real engine: the tiny random Qwen3 (transformers, CPU) plays both
the agent and - as the base model with no adapter - tau2's user on one airline task,
through `loragate run --episodes --user model`. Nothing about quality is asserted: only
that the user's turns are generated, recorded on the steps, and that `score-episodes`
replays the run without any model to the same results."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from loragate.formats.trajectories import EPISODE_RESULTS, TRAJECTORIES
from tests._tau2 import write_evalset
from tests.runners.conftest import tiny_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tau2,
    pytest.mark.skipif(importlib.util.find_spec("tau2") is None, reason="no `tau2` extra"),
]


def test_a_model_user_runs_an_airline_task_end_to_end(tmp_path: Path, tiny_model: Path) -> None:
    from rich.console import Console

    from loragate.cli.run import run_and_report

    evalset = write_evalset(tmp_path / "airline", "airline", task_ids=["46"], faults=())
    out = tmp_path / "run"
    cfg = tiny_config(tiny_model, evalset, backend="hf", out=str(out), episodes=1, user="model")
    console = Console(stderr=True, quiet=True)
    run_and_report(cfg, config_path=None, limit=None, families=None, console=console, quiet=True)
    steps = [json.loads(line) for line in (out / TRAJECTORIES).read_text().splitlines()]
    answered = [s for s in steps if s["user"] is not None]
    assert answered and all(s["user"] == "model" for s in answered)
    assert steps[-1]["final"]
    (result,) = [json.loads(line) for line in (out / EPISODE_RESULTS).read_text().splitlines()]
    assert result["user"] == "model" and result["user_turns"] == len(answered)

    again = tmp_path / "rescored"
    command = [sys.executable, "-m", "loragate", "score-episodes", "--trajectories"]
    command += [str(out / TRAJECTORIES), "--evalset", str(evalset), "--out", str(again)]
    subprocess.run(command, check=True, capture_output=True, timeout=600)  # no model loaded
    assert (again / EPISODE_RESULTS).read_bytes() == (out / EPISODE_RESULTS).read_bytes()
