"""The episodes' first step generated in the entries' batch (`EpisodeRunner`): one
call carries both, the loop finds the first steps ready, nothing lands in the
entries' generations file, and cached or entries-only reruns still work."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

import loragate.runners as runners_pkg
from loragate.episodes.stage import EpisodeRunner, run_episode_set, run_plan_episodes
from loragate.formats.runfolder import read_generations
from loragate.formats.trajectories import TRAJECTORIES
from loragate.generate.config import RunConfig
from loragate.generate.pipeline import execute_run, plan_run
from loragate.runners import PromptJob, Runner, RunnerSetup, Sink
from tests._episodes import DENY, GOOD_DENY, GOOD_PAY, PAY, evalset_with, from_lists
from tests._mini_evalset import ENTRY_IDS, write_evalset

SCRIPTS = {
    "EP-PAY": GOOD_PAY,
    "EP-PAY~timeout": [GOOD_PAY[0], *GOOD_PAY],
    "EP-PAY~rate_limit": [*GOOD_PAY[:3], *GOOD_PAY[2:]],
    "EP-DENY": GOOD_DENY,
}


class ScriptedRunner(Runner):
    """Entries get a fixed answer, episode steps their script; every call is logged."""

    calls: ClassVar[list[list[str]]] = []

    def __init__(self, setup: RunnerSetup) -> None:
        self.script = from_lists(SCRIPTS)

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        type(self).calls.append([j.entry_id for j in jobs])
        for j in jobs:
            if "@" in j.entry_id:
                episode, step = j.entry_id.rsplit("@", 1)
                sink([j.record(self.script(episode, int(step)))])
            else:
                sink([j.record(f"answer {j.entry_id}")])


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> type[ScriptedRunner]:
    ScriptedRunner.calls = []
    monkeypatch.setattr(runners_pkg, "get_runner", lambda name: ScriptedRunner)
    return ScriptedRunner


def setup_run(tmp_path: Path) -> tuple[Any, Any]:
    ev = write_evalset(tmp_path / "ev")
    shutil.copy(evalset_with(tmp_path / "eps", [PAY, DENY]) / "episodes.jsonl", ev)
    cfg = RunConfig.model_validate(
        {
            "model": "Qwen/Qwen3-4B",
            "enable_thinking": False,  # the scripted runner answers without reasoning
            "backend": "openai",
            "evalset": str(ev),
            "out": str(tmp_path / "run"),
            "episodes": "all",
        }
    )
    plan = plan_run(cfg)
    episodes = run_episode_set(plan.evalset, cfg)
    assert episodes is not None
    return plan, episodes


def run_all(plan: Any, episodes: Any) -> tuple[Any, EpisodeRunner]:
    runner = EpisodeRunner(plan, episodes)
    try:
        execute_run(plan, runner=runner)
        summary = run_plan_episodes(plan, episodes, runner)
    finally:
        runner.close()
    return summary, runner


@pytest.mark.openai
def test_first_steps_share_the_entries_call(tmp_path: Path, scripted: type[ScriptedRunner]) -> None:
    plan, episodes = setup_run(tmp_path)
    summary, runner = run_all(plan, episodes)
    first, *later = scripted.calls
    # the three EP-PAY variants share one first step; EP-DENY has its own
    assert sorted(first) == sorted([*ENTRY_IDS, "EP-PAY@1", "EP-DENY@1"])
    assert not any(e.endswith("@1") for call in later for e in call)
    assert len(runner.prefetched) == 2
    assert summary.adapters["base"].success.rate == 1.0
    entries = read_generations(plan.out_dir / "generations.jsonl")
    assert {r.entry_id for r in entries} == set(ENTRY_IDS)
    steps = [json.loads(x) for x in (plan.out_dir / TRAJECTORIES).read_text().splitlines()]
    assert {s["episode_id"] for s in steps if s["step"] == 1} == {e.id for e in episodes.episodes}

    # A rerun: everything cached, no runner call at all.
    scripted.calls = []
    again, runner = run_all(plan_run(plan.config), episodes)
    assert scripted.calls == [] and runner.prefetched == {}
    assert again == summary


@pytest.mark.openai
def test_entries_cached_episodes_not(tmp_path: Path, scripted: type[ScriptedRunner]) -> None:
    plan, episodes = setup_run(tmp_path)
    run_all(plan, episodes)
    (plan.out_dir / TRAJECTORIES).unlink()
    scripted.calls = []
    summary, _ = run_all(plan_run(plan.config), episodes)
    # the loop's own first round carries the first steps once, not twice
    assert sorted(scripted.calls[0]) == ["EP-DENY@1", "EP-PAY@1"]
    assert summary.adapters["base"].success.rate == 1.0
