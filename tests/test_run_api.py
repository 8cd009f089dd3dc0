"""`loragate.run(config)` from Python, on a replayed fixture: the case study's round-1
outputs replayed as the base model's (no model, no hub)."""

from __future__ import annotations

import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import pytest

import loragate
from loragate.common.errors import BadInput
from loragate.evaluation import RunOutcome, evaluate_jobs, finish_run, run
from loragate.formats import runfolder
from loragate.generate.config import RunConfig
from loragate.runners import PromptJob, Runner, Sink
from tests._casestudy import casestudy_evalset, replay_run_config, texts
from tests._mini_evalset import gen


@pytest.fixture
def replay_config(tmp_path: Path) -> RunConfig:
    """A replay run of the case study's round-1 outputs, as the base model's."""
    config: RunConfig = replay_run_config(tmp_path, tmp_path / "run")
    return config


def test_run_writes_the_run_folder_and_returns_what_it_found(
    replay_config: RunConfig, tmp_path: Path
) -> None:
    outcome = loragate.run(replay_config)
    assert isinstance(outcome, RunOutcome)
    out = tmp_path / "run"
    assert outcome.out_dir == out
    written = {p.name for p in out.iterdir()}
    assert {"generations.jsonl", "results.jsonl", "summary.json", "report.md"} <= written
    assert {"view.html", "manifest.json"} <= written
    assert outcome.summary == runfolder.read_summary(out)
    stored = runfolder.read_results(out)
    assert [r.model_dump() for r in outcome.results] == [r.model_dump() for r in stored]
    assert (outcome.jobs, outcome.cached, outcome.generated) == (24, 0, 24)
    assert outcome.episodes is None
    assert outcome.manifest.backend == "replay"
    assert set(outcome.timings) == {"plan", "generate", "score", "report"}
    # the verdicts are the scoring path's (`loragate score`) on the same outputs
    scored = finish_run(
        casestudy_evalset(), [gen(e, t) for e, t in texts("round1").items()], tmp_path / "s"
    )
    assert outcome.summary.adapters == scored.summary.adapters
    family = outcome.summary.adapters["base"].families["should_not_call"]
    assert (family.passes, family.samples) == (1, 8)


def test_a_second_run_reuses_every_generation(replay_config: RunConfig) -> None:
    first = run(replay_config)
    again = run(replay_config)
    assert (again.cached, again.generated) == (24, 0)
    assert again.summary == first.summary


def test_bad_input_is_raised_before_anything_is_written(tmp_path: Path) -> None:
    config = RunConfig.model_validate(
        {
            "model": "m",
            "backend": "replay",
            "evalset": str(tmp_path / "none"),
            "out": str(tmp_path / "run"),
        }
    )
    with pytest.raises(BadInput, match="does not exist"):
        run(config)
    assert list(tmp_path.iterdir()) == []


def test_loragate_run_is_the_function() -> None:
    from loragate import run as imported

    assert imported is run and isinstance(imported, types.FunctionType)
    code = "import sys, loragate; print('loragate.evaluation' in sys.modules, loragate.__version__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", loragate.__version__]


class _Replay(Runner):
    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        sink([j.record(self.outputs[j.entry_id]) for j in jobs])


def test_evaluate_judges_an_open_runners_outputs_in_memory(tmp_path: Path) -> None:
    outputs = texts("round1")
    chosen = ["F-001", "F-002", "D-001"]
    jobs = [PromptJob(e, "base", 0, "p", [], "0" * 64, e) for e in chosen]
    found = evaluate_jobs(casestudy_evalset(), jobs, _Replay(outputs))
    assert sorted(r.entry_id for r in found.results) == sorted(chosen)
    fam = found.summary.adapters["base"].families["should_not_call"]
    assert (fam.passes, fam.samples) == (1, 2)
    assert list(tmp_path.iterdir()) == []
