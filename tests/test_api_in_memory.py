"""The Python API in memory (issue 44): compare and gate take what `score_generations`
and `evaluate` return as well as a `LoadedRun`, with no write and no `load_run` back;
a `GatePolicy` keeps the file it came from, and `gate.json` records it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import loragate
from tests._casestudy import CASE, score_rounds, texts
from tests._mini_evalset import gen, write_generations

REPO = Path(__file__).resolve().parent.parent
POLICY = REPO / "configs" / "gates" / "default.yaml"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return score_rounds(tmp_path_factory.mktemp("runs"))


def test_a_loaded_policy_keeps_its_file_and_the_gate_records_it(scored: dict[str, Any]) -> None:
    policy = loragate.load_policy(POLICY)
    assert policy.source == str(POLICY)
    assert loragate.evaluate_gate(policy, scored["round2"]).policy == str(POLICY)
    again = loragate.evaluate_gate(policy, scored["round2"], policy_path="gates/mine.yaml")
    assert again.policy == "gates/mine.yaml"


def test_a_policy_built_in_code_is_recorded_as_such(scored: dict[str, Any]) -> None:
    policy = loragate.GatePolicy.model_validate({"defaults": {"min_pass_at_1": 0.1}})
    assert policy.source is None
    result = loragate.evaluate_gate(policy, scored["round2"])
    assert result.policy == "<memory>" and "policy.yaml" not in result.model_dump_json()


def test_source_is_no_key_of_a_policy_file(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("source: x\ndefaults: {min_pass_at_1: 0.5}\n", encoding="utf-8")
    with pytest.raises(loragate.BadInput, match="source"):
        loragate.load_policy(bad)


def test_compare_and_gate_read_scored_runs_in_memory(
    scored: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = scored["round1"], scored["round2"]
    from_disk = loragate.compare_runs(
        loragate.load_run(before.out_dir), loragate.load_run(after.out_dir)
    )
    import loragate.results.runs as runs  # where load_run reads a folder back

    def no_reading(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read back from disk")

    monkeypatch.setattr(runs, "read_summary", no_reading)
    monkeypatch.setattr(runs, "read_results", no_reading)
    with pytest.raises(AssertionError):
        loragate.load_run(before.out_dir)
    in_memory = loragate.compare_runs(before, after)
    assert in_memory.headlines == from_disk.headlines
    assert [r.label for r in in_memory.runs] == ["round1", "round2"]
    gate = loragate.evaluate_gate(loragate.load_policy(POLICY), after, before)
    assert (gate.verdict, gate.exit_code) == ("INCONCLUSIVE", 6)


def test_the_old_list_form_still_works_with_a_warning(scored: dict[str, Any]) -> None:
    before, after = scored["round1"], scored["round2"]
    with pytest.warns(DeprecationWarning, match=r"compare_runs\(baseline, run"):
        old = loragate.compare_runs([before, after])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = loragate.compare_runs(before, after)
    assert old.headlines == new.headlines


def test_compare_needs_a_run_beside_the_baseline(scored: dict[str, Any]) -> None:
    with pytest.raises(loragate.BadInput, match="at least two runs"):
        loragate.compare_runs(scored["round1"])


def test_an_evaluate_outcome_is_compared_and_gated_as_it_is(
    tmp_path: Path, scored: dict[str, Any]
) -> None:
    outputs = [gen(entry, text) for entry, text in texts("round1").items()]
    outcome = loragate.evaluate(
        "Qwen/Qwen3-4B",
        backend="replay",
        generations=write_generations(tmp_path / "gens.jsonl", outputs),
        evalset=CASE / "evalset",
        out=tmp_path / "run",
        overrides={"enable_thinking": False},
    )
    side = outcome.side()
    assert isinstance(side, loragate.LoadedRun) and side.adapter == "base"
    comparison = loragate.compare_runs(outcome, scored["round2"])
    assert comparison.runs[0].label == "run"
    gate = loragate.evaluate_gate(loragate.load_policy(POLICY), scored["round2"], outcome)
    assert gate.baseline == "run"
    with pytest.raises(loragate.BadInput, match="no adapter 'round9'"):
        outcome.side("round9")


def test_the_gate_result_holds_one_verdict_and_derives_the_rest(scored: dict[str, Any]) -> None:
    assert not {"passed", "exit_code"} & set(loragate.GateResult.model_fields)
    policy = loragate.load_policy(POLICY)
    result = loragate.evaluate_gate(policy, scored["round2"], scored["round1"])
    shipped = result.model_copy(update={"verdict": "SHIP"})
    assert (shipped.passed, shipped.exit_code) == (True, 0)
    blocked = result.model_copy(update={"verdict": "BLOCK"})
    assert (blocked.passed, blocked.exit_code) == (False, 1)
    written = json.loads(result.model_dump_json())
    assert list(written)[8:12] == ["rules", "passed", "exit_code", "notes"]  # as gate.json had
    assert (written["passed"], written["exit_code"], written["verdict"]) == (
        False,
        6,
        "INCONCLUSIVE",
    )
    assert loragate.GateResult.model_validate(written) == result
    older = {k: v for k, v in written.items() if k != "verdict"} | {"schema_version": 2}
    assert loragate.GateResult.model_validate({**older, "passed": True}).verdict == "SHIP"
    assert loragate.GateResult.model_validate({**older, "passed": False}).verdict == "BLOCK"
