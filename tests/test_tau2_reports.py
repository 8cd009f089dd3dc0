"""Telecom solo end to end, offline: `loragate run` (the replay backend answering for a
scripted agent) over an imported tau2 evalset with faults, and its figures - tau2's
reward beside loragate's verdict, pass^k, per fault, the agreement classes - in the
report, `compare`, `gate`, `card` and `view` like any run's episodes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from loragate.cli.app import main
from loragate.episodes.definitions import Episode
from loragate.formats.records import GenerationRecord
from tests._tau2 import DO_NOTHING, episodes, gold_script, load, write_evalset

pytestmark = pytest.mark.tau2


def replayed_run(
    root: Path, evalset: Path, name: str, agent: Callable[[Episode], list[str]]
) -> Path:
    """`loragate run` of a scripted agent (its outputs as the replay backend's
    generations; an agent that ignores what it sees, so variants sharing a prompt get
    the same output, as a model would)."""
    records = [
        GenerationRecord(entry_id=f"{ep.id}@{step}", adapter="base", sample=0, text=text)
        for ep in episodes(load(evalset))
        for step, text in enumerate(agent(ep), 1)
    ]
    generations = root / f"{name}.jsonl"
    generations.write_text("".join(r.model_dump_json() + "\n" for r in records))
    config = root / f"{name}.yaml"
    out = root / name
    config.write_text(
        yaml.safe_dump(
            {
                "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
                "backend": "replay",
                "generations": str(generations),
                "evalset": str(evalset),
                "episodes": "all",
                "out": str(out),
            }
        )
    )
    assert run_cli("run", "--config", str(config)) == 0
    return out


def run_cli(*args: str) -> int:
    sys.argv = ["loragate", *args]
    try:
        main()
    except SystemExit as ended:
        return int(ended.code or 0)
    return 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tau2-runs")
    evalset = write_evalset(root / "telecom", "telecom", split="small", limit=3)
    gold = replayed_run(root, evalset, "gold", gold_script)
    idle = replayed_run(root, evalset, "idle", lambda ep: [DO_NOTHING[2]])
    return gold, idle


def test_the_run_reports_the_reward_beside_the_verdict(runs: tuple[Path, Path]) -> None:
    gold, idle = runs
    summary = json.loads((gold / "episodes_summary.json").read_text())
    assert summary["schema_version"] == 4
    figures = summary["adapters"]["base"]["reward"]
    assert figures["kinds"] == ["tau2"]
    assert figures["reward_by_fault"]["clean"]["rate"] == 1.0
    # the gold script ignores the faults: the timed-out call never ran (reward 0) ...
    assert figures["reward_by_fault"]["timeout"]["rate"] == 0.0
    # ... the outage variants have no reward: the reply must say the task is not done
    assert "outage" not in figures["reward_by_fault"]
    assert sum(figures["agreement"].values()) == figures["reward_success"]["n"]
    report = (gold / "report.md").read_text()
    assert "tau2 reward = 1 (its own figure)" in report
    assert "tau2 reward vs loragate's verdict: base" in report
    results = [
        json.loads(line) for line in (gold / "episode_results.jsonl").read_text().splitlines()
    ]
    assert all(r["schema_version"] == 4 and "checks_pass" in r for r in results)
    idle_figures = json.loads((idle / "episodes_summary.json").read_text())["adapters"]["base"]
    assert idle_figures["success"]["rate"] == 0.0
    assert idle_figures["reward"]["reward_success"]["rate"] == 0.0


def test_compare_gate_card_and_view(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold, idle = runs
    assert run_cli("compare", str(idle), str(gold)) == 0
    line = capsys.readouterr().out
    assert "episodes idle -> gold: success 0.0 %" in line and "; tau2 reward 0.0 % ->" in line
    policy = tmp_path / "gate.yaml"
    policy.write_text("version: 1\nepisodes:\n  min_reward: 0.9\n")
    assert run_cli("gate", str(gold), "--policy", str(policy)) == 1
    assert "min_reward" in capsys.readouterr().out
    policy.write_text("version: 1\nepisodes:\n  min_reward: 0.5\n  min_verdict: 0.5\n")
    assert run_cli("gate", str(gold), "--policy", str(policy)) == 0
    assert run_cli("card", str(gold), "--out", str(tmp_path / "card")) == 0
    card = (tmp_path / "card" / "card.md").read_text()
    assert "The tau2 reward beside loragate's verdict" in card
    assert run_cli("view", str(idle), str(gold)) == 0
    page = (idle / "view.html").read_text()
    assert "pass^k of the " in page and '"kind": "tau2"' in page.replace('":"', '": "')
