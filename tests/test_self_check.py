"""Was each adapter applied? Adapter-vs-base agreement, the base probe, and adapter
names over a shared cache (no model: a counting runner behind the openai backend,
adapters as local folders whose weights are a few bytes)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

import loragate.runners as runners_pkg
from loragate.formats.manifest import BASE_ADAPTER
from loragate.formats.records import GenerationRecord
from loragate.formats.versions import MANIFEST_SCHEMA_VERSION
from loragate.generate.config import RunConfig
from loragate.generate.pipeline import _agree, _base_probe, execute_run, plan_run, self_check
from loragate.runners import PromptJob, Runner, RunnerSetup, Sink
from tests._adapters import make_adapter
from tests._mini_evalset import ENTRY_IDS, write_evalset


def cfg(tmp_path: Path, adapters: dict[str, str], **extra: Any) -> RunConfig:
    """A run over local adapter folders (`weights` names a payload: same payload, same
    sha256, same cache identity)."""
    evalset = tmp_path / "ev"
    if not evalset.exists():
        write_evalset(evalset)
    folders = {}
    for name, weights in adapters.items():
        folder = tmp_path / "adapters" / weights
        if not folder.exists():
            make_adapter(folder, payload=weights.encode())
        folders[name] = str(folder)
    return RunConfig.model_validate(
        {
            "model": "Qwen/Qwen3-4B",
            "enable_thinking": False,
            "backend": "openai",
            "evalset": str(evalset),
            "adapters": folders,
            "out": str(tmp_path / "run"),
            **extra,
        }
    )


class EchoRunner(Runner):
    """Answers with the adapter's name in the text, except adapters named `same*`."""

    calls: ClassVar[list[int]] = []

    def __init__(self, setup: RunnerSetup) -> None:
        pass

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        type(self).calls.append(len(jobs))
        for job in jobs:
            who = "base" if job.adapter.startswith("same") else job.adapter
            sink([job.record(f"{job.entry_id} by {who}")])


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> type[EchoRunner]:
    EchoRunner.calls = []
    monkeypatch.setattr(runners_pkg, "get_runner", lambda name: EchoRunner)
    return EchoRunner


@pytest.mark.openai
def test_renamed_adapter_results_carry_the_new_name(tmp_path: Path, echo: Any) -> None:
    execute_run(plan_run(cfg(tmp_path, {"r1": "weights-a"})))
    # The same weights under another name: cached, yet labelled r2.
    outcome = execute_run(plan_run(cfg(tmp_path, {"r2": "weights-a"})))
    assert outcome.generated == 0
    assert {r.adapter for r in outcome.records} == {BASE_ADAPTER, "r2"}


@pytest.mark.openai
def test_two_names_for_the_same_weights_are_generated_once(tmp_path: Path, echo: Any) -> None:
    plan = plan_run(cfg(tmp_path, {"a1": "weights-a", "a2": "weights-a"}))
    outcome = execute_run(plan)
    assert sum(echo.calls) == 2 * len(ENTRY_IDS)  # base + one of the two names
    names = [r.adapter for r in outcome.records]
    assert names.count("a1") == names.count("a2") == len(ENTRY_IDS)
    texts = {(r.entry_id, r.adapter): r.text for r in outcome.records}
    assert all(texts[(e, "a1")] == texts[(e, "a2")] for e in ENTRY_IDS)


@pytest.mark.openai
def test_an_adapter_equal_to_the_base_everywhere_is_flagged(tmp_path: Path, echo: Any) -> None:
    outcome = execute_run(plan_run(cfg(tmp_path, {"same": "weights-s", "real": "weights-r"})))
    check = outcome.manifest.self_check
    assert check is not None
    assert check.identical_to_base == {"same": 1.0, "real": 0.0}
    (warning,) = check.warnings
    assert "'same'" in warning and "not applied" in warning
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["schema_version"] == MANIFEST_SCHEMA_VERSION
    assert manifest["self_check"]["identical_to_base"]["same"] == 1.0


def test_probe_agreement_tolerates_late_rounding_only() -> None:
    assert _agree("abc", "abc")
    assert _agree("the same start, then x", "the same start, then y")
    assert not _agree("completely different", "another text")


def _plan(adapters: int = 1) -> Any:
    return SimpleNamespace(
        backend="vllm",
        config=SimpleNamespace(include_base=True, sampling=SimpleNamespace(greedy=True)),
        setup=SimpleNamespace(adapters=[object()] * adapters),
    )


def _job(entry: str) -> PromptJob:
    return PromptJob(
        entry_id=entry,
        adapter=BASE_ADAPTER,
        sample=0,
        prompt="p",
        messages=[],
        prompt_sha256="s",
        cache_key=f"k-{entry}",
    )


class FixedRunner:
    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        sink([j.record(self.text) for j in jobs])


def test_base_probe_catches_an_engine_that_mixes_up_adapters() -> None:
    jobs = [_job(e) for e in ("A-001", "B-001", "C-001", "D-001")]
    done = {
        j.cache_key: GenerationRecord(entry_id=j.entry_id, adapter="base", sample=0, text="ok")
        for j in jobs
    }
    good = _base_probe(_plan(), jobs, done, FixedRunner("ok"))
    assert good is not None and good.entries == ["A-001", "B-001", "C-001"] and not good.differing
    bad = _base_probe(_plan(), jobs, done, FixedRunner("adapter speaking"))
    assert bad is not None and bad.differing == ["A-001", "B-001", "C-001"]
    assert _base_probe(_plan(adapters=0), jobs, done, FixedRunner("x")) is None


def test_self_check_is_empty_without_a_base(tmp_path: Path) -> None:
    plan = SimpleNamespace(
        config=SimpleNamespace(sampling=SimpleNamespace(greedy=True)),
        setup=SimpleNamespace(adapters=[]),
    )
    assert self_check(plan, [], None).identical_to_base == {}  # type: ignore[arg-type]
