"""Every public entry point of `loragate` checks its arguments' types (issue 43 point 8):
a wrong type is one `BadInput` naming each wrong argument and its fix - a path where a
loaded object belongs names the loader to call - never an `AttributeError` or a
`TypeError` from inside loragate. Nothing runs: each call is refused first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loragate
from tests._casestudy import CASE, score_rounds

REPO = Path(__file__).resolve().parent.parent
POLICY = REPO / "configs" / "gates" / "default.yaml"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return score_rounds(tmp_path_factory.mktemp("runs"))


def _refused(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(loragate.BadInput) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_compare_runs_refuses_a_path_and_names_load_run() -> None:
    text = _refused(loragate.compare_runs, "r1")
    assert "baseline" in text and "loragate.load_run('r1')" in text


def test_compare_runs_refuses_a_none_among_the_runs(scored: dict[str, Any]) -> None:
    with pytest.warns(DeprecationWarning):
        text = _refused(loragate.compare_runs, [scored["round1"], None])
    assert "runs[0]" in text and "got None" in text


def test_compare_runs_refuses_a_path_as_a_later_run(scored: dict[str, Any]) -> None:
    text = _refused(loragate.compare_runs, scored["round1"], Path("runs/round2"))
    assert "runs[0]" in text and "loragate.load_run('runs/round2')" in text


def test_compare_runs_names_every_wrong_argument(scored: dict[str, Any]) -> None:
    text = _refused(loragate.compare_runs, 3, scored["round2"], alpha="0.05", tags="x")
    assert all(name in text for name in ("baseline", "alpha", "tags"))
    assert "pass ['x']" in text


def test_evaluate_gate_refuses_none_none() -> None:
    text = _refused(loragate.evaluate_gate, None, None)
    assert "policy" in text and "run" in text and "GatePolicy" in text


def test_evaluate_gate_refuses_a_path_where_the_policy_belongs(scored: dict[str, Any]) -> None:
    text = _refused(loragate.evaluate_gate, str(POLICY), scored["round2"])
    assert f"loragate.load_policy({str(POLICY)!r})" in text


def test_evaluate_gate_refuses_a_path_where_the_run_belongs() -> None:
    policy = loragate.load_policy(POLICY)
    text = _refused(loragate.evaluate_gate, policy, "runs/round2", "runs/round1")
    assert "loragate.load_run('runs/round2')" in text
    assert "loragate.load_run('runs/round1')" in text


def test_evaluate_refuses_overrides_as_a_list() -> None:
    text = _refused(loragate.evaluate, overrides=["sampling.samples=4"])
    assert "overrides" in text and "got list" in text and "vllm.max_model_len" in text


def test_evaluate_refuses_adapters_as_a_list() -> None:
    text = _refused(loragate.evaluate, adapters=["out/round1"])
    assert "adapters" in text and '{"round1": "out/round1"}' in text


def test_evaluate_refuses_an_adapter_path_that_is_not_a_path() -> None:
    text = _refused(loragate.evaluate, adapters={"round1": 1})
    assert "{'round1': int}" in text


def test_evaluate_refuses_families_as_one_string_and_a_bool_limit() -> None:
    text = _refused(loragate.evaluate, families="abstain", limit=True, samples=2.5)
    assert "pass ['abstain']" in text and "limit" in text and "samples" in text


def test_run_refuses_a_path_and_names_load_config() -> None:
    text = _refused(loragate.run, "run.yaml")
    assert "loragate.load_config('run.yaml')" in text


def test_run_refuses_a_dict_config() -> None:
    text = _refused(loragate.run, {"model": "x"})
    assert "expected a RunConfig, got dict" in text and "load_config" in text


def test_score_generations_refuses_non_paths() -> None:
    text = _refused(loragate.score_generations, None, 3, ["out"])
    assert all(name in text for name in ("generations", "evalset", "out"))


def test_load_policy_load_config_and_load_run_refuse_non_paths() -> None:
    assert "path" in _refused(loragate.load_policy, {"defaults": {}})
    assert "overrides" in _refused(loragate.load_config, None, ["sampling.samples"])
    assert "training_log" in _refused(loragate.load_run, "runs/x", training_log=3)
    assert "ref" in _refused(loragate.load_run, None)


def test_a_multi_adapter_outcome_says_which_side_to_pass(tmp_path: Path) -> None:
    lines = []
    for name in ("round1", "round2"):
        for line in (CASE / name / "generations.jsonl").read_text(encoding="utf-8").splitlines():
            lines.append(json.dumps({**json.loads(line), "adapter": name}))
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = loragate.score_generations(both, CASE / "evalset", tmp_path / "both")
    text = _refused(loragate.compare_runs, outcome, outcome)
    assert "2 adapters (round1, round2)" in text and "outcome.side('round1')" in text


def test_every_problem_has_a_fix_and_names_the_function() -> None:
    with pytest.raises(loragate.BadInput) as caught:
        loragate.evaluate(adapters=[], overrides=[1], limit="4")
    problems = caught.value.problems
    assert [p.field for p in problems] == ["adapters", "limit", "overrides"]
    assert all(p.fix and p.file == "loragate.evaluate" for p in problems)


def test_right_types_still_pass_the_checks(scored: dict[str, Any]) -> None:
    comparison = loragate.compare_runs(scored["round1"], scored["round2"])
    assert comparison.runs[1].label == "round2"


def test_read_summary_and_read_results_refuse_non_paths() -> None:
    assert "run_dir" in _refused(loragate.read_summary, None)
    text = _refused(loragate.read_results, 3, report="x")
    assert "run_dir" in text and "report" in text


def test_a_number_of_another_numeric_type_is_a_number() -> None:
    """A number of another numeric type (an int subclass, a `Fraction`; numpy's numbers
    register with `numbers` the same way) passes; a float where an int belongs does not."""
    from fractions import Fraction

    from loragate.common import arguments

    class Count(int):
        pass

    assert arguments.number("samples", Count(4)) is None
    assert arguments.number("temperature", Fraction(1, 2), (float, int)) is None
    problem = arguments.number("samples", 2.5)
    assert problem is not None and problem.message == "expected int or None, got float"
