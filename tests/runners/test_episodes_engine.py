"""Episodes on a real engine: the tiny random Qwen3 with transformers on the CPU runs
two agent20 episodes (all their fault variants) under the base and an adapter through
`loragate run --episodes`; a rerun generates nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.formats.trajectories import EPISODE_RESULTS, EPISODES_SUMMARY, TRAJECTORIES
from tests._episodes import REPO
from tests.runners.conftest import tiny_config

pytestmark = pytest.mark.slow


def test_run_with_episodes_on_the_tiny_model(
    tmp_path: Path, tiny_model: Path, tiny_adapters: dict[str, Path]
) -> None:
    from rich.console import Console

    from loragate.cli.run import run_and_report

    out = tmp_path / "run"
    cfg = tiny_config(
        tiny_model,
        REPO / "evalsets" / "agent20",
        backend="hf",
        out=str(out),
        adapters={"lora1": str(tiny_adapters["lora1"])},
        episodes=2,
    )
    console = Console(stderr=True, quiet=True)
    run_and_report(cfg, config_path=None, limit=1, families=None, console=console, quiet=True)
    summary = json.loads((out / EPISODES_SUMMARY).read_text())
    assert set(summary["adapters"]) == {"base", "lora1"}
    assert len(summary["episode_ids"]) == 7  # EP-01 (4 variants) and EP-02 (3)
    results = (out / EPISODE_RESULTS).read_text().splitlines()
    assert len(results) == 2 * 7
    steps = (out / TRAJECTORIES).read_text().splitlines()
    assert steps and all(json.loads(s)["verdict"]["reason"] for s in steps)
    assert (out / "summary.json").is_file()  # the entries were scored beside them
    run_and_report(cfg, config_path=None, limit=1, families=None, console=console, quiet=True)
    assert (out / TRAJECTORIES).read_text().splitlines() == steps
