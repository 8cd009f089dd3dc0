"""`compare_runs` leaves the runs it is given as they were, and a comparison's headlines
are computed from its figures, not stored into it after it was built."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from loragate.results.compare import Comparison, compare_runs, headline
from loragate.results.gate import evaluate_gate, load_policy
from loragate.results.runs import LoadedRun, load_run
from tests._casestudy import ROUND1_LOG, ROUND2_LOG, build_rounds

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def two_named_alike(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadedRun, LoadedRun]:
    """Round 1 and round 2 in two folders of the same name, `a/round` and `b/round`."""
    tmp = tmp_path_factory.mktemp("alike")
    r1, r2 = build_rounds(tmp / "built")
    shutil.copytree(r1, tmp / "a" / "round")
    shutil.copytree(r2, tmp / "b" / "round")
    return (
        load_run(str(tmp / "a" / "round"), ROUND1_LOG),
        load_run(str(tmp / "b" / "round"), ROUND2_LOG),
    )


def test_compare_does_not_relabel_the_callers_runs(
    two_named_alike: tuple[LoadedRun, LoadedRun],
) -> None:
    before, after = two_named_alike
    assert before.label == after.label == "round"
    comparison = compare_runs([before, after])
    assert [r.label for r in comparison.runs] == [before.ref.text, after.ref.text]
    assert comparison.baseline == before.ref.text
    assert (before.label, after.label) == ("round", "round")  # the caller's, untouched


def test_a_loaded_run_cannot_be_relabelled_in_place(
    two_named_alike: tuple[LoadedRun, LoadedRun],
) -> None:
    run = two_named_alike[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.label = "other"  # type: ignore[misc]
    assert dataclasses.replace(run, label="other").label == "other" and run.label == "round"


def test_the_gate_names_the_runs_as_the_comparison_does(
    two_named_alike: tuple[LoadedRun, LoadedRun],
) -> None:
    before, after = two_named_alike
    policy = REPO / "configs" / "gates" / "default.yaml"
    result = evaluate_gate(load_policy(policy), after, before, policy_path=policy)
    assert (result.run, result.baseline) == (after.ref.text, before.ref.text)
    assert after.label == "round"


def test_headlines_are_computed_from_the_figures(
    two_named_alike: tuple[LoadedRun, LoadedRun],
) -> None:
    comparison = compare_runs(list(two_named_alike))
    assert "headlines" not in Comparison.model_fields  # nothing to store or to go stale
    assert comparison.headlines == [headline(comparison, 1)]
    assert "should_not_call +75 pt (p = 0.03)" in comparison.headlines[0]
    dumped = json.loads(comparison.model_dump_json())
    assert dumped["headlines"] == comparison.headlines  # still in `compare --json`
    fewer = comparison.model_copy(update={"families": []})
    assert fewer.headlines != comparison.headlines  # follows the figures it is made of
