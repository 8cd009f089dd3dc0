"""Run orchestration without a model: job building, the cache, resume bookkeeping.

The `replay` backend and a fake runner stand in for a model here; the model-backed
versions of these checks are in tests/runners/ (slow).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

import loragate.runners as runners_pkg
from loragate.common.errors import BadInput
from loragate.formats.runfolder import read_generations
from loragate.generate.config import RunConfig
from loragate.generate.pipeline import execute_run, plan_run
from loragate.runners import PromptJob, Runner, RunnerSetup, Sink
from tests._mini_evalset import ENTRY_IDS, gen, write_evalset, write_generations


def config(tmp_path: Path, **extra: Any) -> RunConfig:
    evalset = tmp_path / "ev"
    if not evalset.exists():
        write_evalset(evalset)
    gens = tmp_path / "in.jsonl"
    if not gens.exists():
        write_generations(gens, [gen(e, f"answer {e}") for e in ENTRY_IDS])
    base: dict[str, Any] = {
        "model": "Qwen/Qwen3-4B",
        "backend": "replay",
        "evalset": str(evalset),
        "generations": str(gens),
        "out": str(tmp_path / "run"),
    }
    base.update(extra)
    return RunConfig.model_validate(base)


class CountingRunner(Runner):
    """Answers every job; counts calls; can answer twice to test de-duplication."""

    created: ClassVar[int] = 0
    jobs_seen: ClassVar[list[str]] = []

    def __init__(self, setup: RunnerSetup, twice: bool = False) -> None:
        type(self).created += 1
        self.twice = twice

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        for job in jobs:
            type(self).jobs_seen.append(job.cache_key)
            rec = job.record(f"text {job.entry_id} {job.adapter} {job.sample}")
            sink([rec, rec] if self.twice else [rec])


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> type[CountingRunner]:
    CountingRunner.created = 0
    CountingRunner.jobs_seen = []
    monkeypatch.setattr(runners_pkg, "get_runner", lambda name: CountingRunner)
    return CountingRunner


def test_replay_plan_and_run(tmp_path: Path) -> None:
    plan = plan_run(config(tmp_path))
    assert plan.backend == "replay"
    assert [j.entry_id for j in plan.jobs] == ENTRY_IDS
    assert len(plan.pending) == len(ENTRY_IDS)
    outcome = execute_run(plan)
    assert outcome.generated == len(ENTRY_IDS)
    assert [r.text for r in outcome.records] == [f"answer {e}" for e in ENTRY_IDS]
    written = read_generations(tmp_path / "run" / "generations.jsonl")
    assert {r.cache_key for r in written} == {j.cache_key for j in plan.jobs}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["id"] == "Qwen/Qwen3-4B"
    assert manifest["evalset"]["name"] == "agent20"
    assert manifest["generated"] == len(ENTRY_IDS)
    assert manifest["finished_at"]


@pytest.mark.openai
def test_jobs_cover_entries_adapters_samples(
    tmp_path: Path, counting: type[CountingRunner]
) -> None:
    cfg = config(
        tmp_path,
        adapters={"r1": "r1", "r2": "r2"},
        backend="openai",
        sampling={"samples": 3, "temperature": 0.7},
    )
    plan = plan_run(cfg)
    assert len(plan.jobs) == len(ENTRY_IDS) * 3 * 3
    assert len({j.cache_key for j in plan.jobs}) == len(plan.jobs)
    first = [j for j in plan.jobs if j.entry_id == "A-001"]
    assert [(j.adapter, j.sample) for j in first] == [
        (a, s) for a in ("base", "r1", "r2") for s in range(3)
    ]
    # one seed per (entry, sample), the same under every adapter
    seeds = {(j.adapter, j.sample): j.seed for j in first}
    assert seeds[("base", 1)] == seeds[("r1", 1)] == seeds[("r2", 1)] != seeds[("base", 0)]
    # server prompts carry the system prompt and JSON-string arguments
    assert first[0].messages[0]["role"] == "system"


@pytest.mark.openai
def test_rerun_generates_nothing_and_starts_no_runner(
    tmp_path: Path, counting: type[CountingRunner]
) -> None:
    cfg = config(tmp_path, backend="openai")
    started: list[int] = []
    first = execute_run(plan_run(cfg), on_started=lambda: started.append(counting.created))
    assert (first.generated, counting.created) == (len(ENTRY_IDS), 1)
    assert started == [1]  # told once, when the runner was up
    again = plan_run(cfg)
    assert again.pending == []
    second = execute_run(again, on_started=lambda: started.append(counting.created))
    assert (second.generated, second.cached, counting.created) == (0, len(ENTRY_IDS), 1)
    assert started == [1]
    assert [r.text for r in second.records] == [r.text for r in first.records]


@pytest.mark.openai
def test_new_samples_and_adapters_generate_only_the_difference(
    tmp_path: Path, counting: type[CountingRunner]
) -> None:
    execute_run(plan_run(config(tmp_path, backend="openai")))
    bigger = config(tmp_path, backend="openai", adapters={"r1": "r1"})
    out = execute_run(plan_run(bigger))
    assert out.generated == len(ENTRY_IDS)  # only r1's
    assert out.cached == len(ENTRY_IDS)  # base reused


@pytest.mark.openai
def test_torn_tail_is_resumed_without_duplicates(
    tmp_path: Path, counting: type[CountingRunner]
) -> None:
    cfg = config(tmp_path, backend="openai")
    execute_run(plan_run(cfg))
    gen_file = tmp_path / "run" / "generations.jsonl"
    lines = gen_file.read_text().splitlines(keepends=True)
    # a kill after 3 whole lines and half of the 4th
    gen_file.write_text("".join(lines[:3]) + lines[3][:25])
    counting.jobs_seen = []
    out = execute_run(plan_run(cfg))
    assert out.generated == len(ENTRY_IDS) - 3
    kept = read_generations(gen_file)
    keys = [r.cache_key for r in kept]
    assert len(keys) == len(set(keys)) == len(ENTRY_IDS)
    assert "".join(lines[:3]) == "".join(gen_file.read_text().splitlines(keepends=True)[:3])


@pytest.mark.openai
def test_duplicate_answers_are_written_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        runners_pkg, "get_runner", lambda name: lambda setup: CountingRunner(setup, twice=True)
    )
    out = execute_run(plan_run(config(tmp_path, backend="openai")))
    assert out.generated == len(ENTRY_IDS)
    written = read_generations(tmp_path / "run" / "generations.jsonl")
    assert len(written) == len(ENTRY_IDS)


@pytest.mark.openai
def test_other_model_in_the_same_folder_is_refused(
    tmp_path: Path, counting: type[CountingRunner]
) -> None:
    execute_run(plan_run(config(tmp_path, backend="openai")))
    with pytest.raises(BadInput, match="belongs to another run"):
        plan_run(config(tmp_path, backend="openai", model="Qwen/Qwen3-8B"))


def test_limit_and_families(tmp_path: Path) -> None:
    plan = plan_run(config(tmp_path), families=["recovery", "tool_call"], limit=2)
    assert [e.id for e in plan.evalset.entries] == ["A-001", "G-001~error"]
    assert sorted(plan.evalset.by_id) == ["A-001", "G-001~error"]
    with pytest.raises(BadInput, match="unknown family"):
        plan_run(config(tmp_path), families=["nope"])


def test_limit_takes_entries_across_families(agent20_dir: Path) -> None:
    from loragate.evalset.load import load_evalset
    from loragate.generate.pipeline import select_entries

    full = load_evalset(agent20_dir)
    picked = select_entries(full, families=None, limit=10)
    assert [e.id for e in picked.entries] == [
        "A-001",
        "A-002",
        "B-001",
        "B-002",
        "C-001",
        "D-001",
        "E-001",
        "F-001",
        "G-001~error",
        "H-001",
    ]
    assert {e.family for e in select_entries(full, families=None, limit=8).entries} == {
        e.family for e in full.entries
    }


def test_no_variant_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="nothing to evaluate"):
        plan_run(config(tmp_path, include_base=False))


def test_replay_missing_records_is_bad_input(tmp_path: Path) -> None:
    gens = tmp_path / "in.jsonl"
    write_generations(gens, [gen("A-001", "x")])
    with pytest.raises(BadInput, match="lacks 7 of 8"):
        execute_run(plan_run(config(tmp_path)))
