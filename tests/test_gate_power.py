"""What the gate can see (issue 28): INCONCLUSIVE, non-inferiority, the detectable drop
beside each baseline rule, confident floors, the plan, and bad input.

The fixture case: round 3 makes 3 of round 2's 8 passing governance entries call a
destructive tool without confirmation (`tests/data/casestudy/round3`): governance drops
37.5 points, p = 0.25 on 8 paired entries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.formats.runfolder import read_generations
from loragate.results.gate import GatePolicy, GateResult, evaluate_gate
from loragate.results.gate_render import render_markdown
from loragate.results.runs import load_run
from tests._casestudy import CASE, build_round, k_sample_generations, replay, run_cli

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "configs" / "gates" / "default.yaml"


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("power-rounds")
    return {name: build_round(tmp, name) for name in ("round1", "round2", "round3")}


def _gate(policy: dict[str, object], run: Path, baseline: Path | None) -> GateResult:
    return evaluate_gate(
        GatePolicy.model_validate(policy),
        load_run(str(run)),
        load_run(str(baseline)) if baseline is not None else None,
    )


def _rule(result: GateResult, family: str, rule: str) -> dict[str, object]:
    found = [r for r in result.rules if r.family == family and r.rule == rule]
    assert len(found) == 1, (family, rule)
    return found[0].model_dump()


def test_the_fixture_case_is_inconclusive_and_states_the_75_point_drop(
    rounds: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The issue's policy: no_significant_drop alone. Before: PASS, -37.5 pt, p = 0.25,
    SHIP. Now: INCONCLUSIVE, exit 6, and the 75-point detectable drop is stated."""
    policy = tmp_path / "sig.yaml"
    policy.write_text("defaults:\n  no_significant_drop: true\n", encoding="utf-8")
    out = tmp_path / "g.json"
    args = ["gate", str(rounds["round3"]), "-p", str(policy), "-b", str(rounds["round2"])]
    code, stdout, err = run_cli([*args, "-o", str(out)], capsys)
    assert code == 6, stdout + err
    text = " ".join(stdout.split())
    assert "INCONCLUSIVE (3 rules cannot decide at this size)" in text
    assert "sees ≥ 75 pt" in text
    assert "on 8 entries the test sees only drops ≥ 75 pt: a 15 pt drop would pass unseen" in text
    gov = next(r for r in json.loads(out.read_text())["rules"] if r["family"] == "governance")
    assert gov["status"] == "INCONCLUSIVE" and gov["shown"] == "-37.5 pt, p = 0.25"
    assert gov["detectable_points"] == 75.0
    assert "≥ 40 entries (1 sample each) or ≥ 5 samples per entry" in gov["needs"]


def test_the_fixture_case_under_non_inferiority_blocks(rounds: dict[str, Path]) -> None:
    res = _gate(
        {"defaults": {"max_drop_points": 15, "non_inferiority": True}},
        rounds["round3"],
        rounds["round2"],
    )
    assert res.verdict == "BLOCK" and res.exit_code == 1
    ni = _rule(res, "governance", "non_inferiority")
    assert ni["status"] == "FAIL"
    assert ni["figure"] == pytest.approx(69.4, abs=0.05)  # Tango, 3 of 8 regressed
    assert ni["detectable_points"] == pytest.approx(32.4, abs=0.05)
    assert "≥ 22 entries" in str(ni["needs"])
    md = render_markdown(res)
    assert (
        "| governance | non_inferiority | -37.5 pt, drop ≤ 69.4 pt | 95 % bound &lt; 15 pt |" in md
    )
    assert "> non_inferiority in tool_call, governance, should_not_call: needs ≥ 22 entries" in md


def test_non_inferiority_passes_a_round_that_shows_it_did_not_drop(
    rounds: dict[str, Path],
) -> None:
    """Round 2 vs round 1: should_not_call +75 pt (6 of 8 improved) clears a 15-point
    margin even on 8 entries; +12.5 pt (1 of 8) does not."""
    res = _gate(
        {"defaults": {"max_drop_points": 15, "non_inferiority": True}},
        rounds["round2"],
        rounds["round1"],
    )
    assert _rule(res, "should_not_call", "non_inferiority")["status"] == "PASS"
    assert _rule(res, "tool_call", "non_inferiority")["status"] == "FAIL"


def test_the_margin_comes_from_max_drop_points_or_margin_points(rounds: dict[str, Path]) -> None:
    res = _gate(
        {"defaults": {"no_significant_drop": True}, "margin_points": 80},
        rounds["round3"],
        rounds["round2"],
    )
    # A margin of 80 points is one the test can see on 8 entries (75): no verdict change.
    assert {r.status for r in res.rules} == {"PASS"} and res.verdict == "SHIP"
    res = _gate(
        {"defaults": {"no_significant_drop": True, "max_drop_points": 80}, "margin_points": 5},
        rounds["round3"],
        rounds["round2"],
    )
    assert _rule(res, "governance", "no_significant_drop")["status"] == "PASS"


def test_a_margin_of_zero_for_a_test_is_bad_input(rounds: dict[str, Path]) -> None:
    for rule in ("non_inferiority", "no_significant_drop"):
        with pytest.raises(BadInput, match="margin of 0 points") as info:
            _gate(
                {"defaults": {"max_drop_points": 0, rule: True}}, rounds["round3"], rounds["round2"]
            )
        assert "docs/gate.md" in str(info.value)


def test_non_inferiority_without_a_baseline_is_skipped_not_passed(rounds: dict[str, Path]) -> None:
    res = _gate(
        {"defaults": {"min_pass_at_1": 0.5, "non_inferiority": True}}, rounds["round2"], None
    )
    assert _rule(res, "governance", "non_inferiority")["status"] == "SKIP"
    with pytest.raises(BadInput, match="no rule could be evaluated"):
        _gate({"defaults": {"non_inferiority": True}}, rounds["round2"], None)


def test_confident_floors(rounds: dict[str, Path]) -> None:
    """`confidence: 0.95`: 8/8 has a Wilson lower bound of 67.6 %: it clears 50 %,
    not 90 % (35 entries would); a point estimate below the floor stays a FAIL."""
    res = _gate(
        {
            "defaults": {"min_pass_at_1": 0.5},
            "families": {"governance": {"min_pass_at_1": 0.9}},
            "confidence": 0.95,
        },
        rounds["round2"],
        None,
    )
    assert _rule(res, "tool_call", "min_pass_at_1")["status"] == "PASS"
    gov = _rule(res, "governance", "min_pass_at_1")
    assert gov["status"] == "INCONCLUSIVE" and gov["sees"] == "CI low 67.6 %"
    assert gov["needs"] == "≥ 35 entries at this pass rate"
    assert res.verdict == "INCONCLUSIVE" and res.exit_code == 6
    res = _gate(
        {"families": {"governance": {"min_pass_at_1": 0.9}}, "confidence": 0.95},
        rounds["round1"],
        None,
    )
    assert _rule(res, "governance", "min_pass_at_1")["status"] == "FAIL"  # 7/8 < 90 %
    # Without `confidence` the floor compares the point estimate, as before.
    res = _gate({"families": {"governance": {"min_pass_at_1": 0.9}}}, rounds["round2"], None)
    assert res.verdict == "SHIP"


def test_warn_ships_only_beside_rules_that_passed(rounds: dict[str, Path]) -> None:
    policy = {
        "defaults": {"min_pass_at_1": 0.5, "no_significant_drop": True},
        "inconclusive": "warn",
    }
    res = _gate(policy, rounds["round2"], rounds["round1"])
    assert res.verdict == "SHIP" and res.exit_code == 0 and res.passed
    assert len(res.undecided) == 3
    res = _gate(
        {**policy, "defaults": {"no_significant_drop": True}}, rounds["round2"], rounds["round1"]
    )
    assert res.verdict == "INCONCLUSIVE"  # nothing passed: warn does not ship that


def test_samples_per_entry_lower_the_detectable_drop(tmp_path: Path) -> None:
    """k = 4 in both runs: one lost sample in each of six entries is already significant
    (p = 0.03), so the test sees drops of 6 / (4 * 8) = 18.75 points."""
    base = replay(tmp_path / "k4a", k_sample_generations("a", {}, 4))
    worse = {f"F-00{i}": 3 for i in range(2, 8)}
    run = replay(tmp_path / "k4b", k_sample_generations("b", worse, 4))
    snc = {"families": {"should_not_call": {"no_significant_drop": True}}}
    res = _gate(snc, run, base)
    rule = _rule(res, "should_not_call", "no_significant_drop")
    assert rule["status"] == "FAIL" and rule["detectable_points"] == 18.75
    assert rule["shown"] == "-18.8 pt, p = 0.03"
    res = _gate(
        {"families": {"should_not_call": {"no_significant_drop": True, "max_drop_points": 20}}},
        run,
        base,
    )
    assert _rule(res, "should_not_call", "no_significant_drop")["sees"] == "≥ 18.8 pt"


def test_baseline_with_another_sample_count_is_still_paired_per_entry(
    rounds: dict[str, Path], tmp_path: Path
) -> None:
    """Baseline k = 1 (round 2), run k = 4: the rules compare per-entry pass rates, say
    so in a note, and the smallest step of an entry is 1/4."""
    run = replay(tmp_path / "k4", k_sample_generations("v4", {"F-002": 2}, 4))
    res = _gate(
        {"defaults": {"no_significant_drop": True, "non_inferiority": True, "max_drop_points": 15}},
        run,
        rounds["round2"],
    )
    assert not any(r.status == "SKIP" for r in res.rules)
    assert any("samples per entry differ" in n for n in res.notes)
    assert _rule(res, "should_not_call", "no_significant_drop")["detectable_points"] == 18.75


def test_runs_over_different_entries_are_refused(rounds: dict[str, Path], tmp_path: Path) -> None:
    from loragate.evaluation import finish_run
    from tests._casestudy import casestudy_evalset

    gens = [
        g for g in read_generations(CASE / "round3" / "generations.jsonl") if g.entry_id != "D-008"
    ]
    partial = tmp_path / "partial"
    finish_run(casestudy_evalset(), gens, partial, allow_missing=True, progress=False)
    with pytest.raises(BadInput, match="not over the same entries"):
        _gate({"defaults": {"non_inferiority": True}}, partial, rounds["round2"])


def test_gate_json_of_version_2_still_reads() -> None:
    old = {
        "schema_version": 2,
        "policy": "p.yaml",
        "policy_name": None,
        "run": "r",
        "run_dir": "/r",
        "adapter": "a",
        "baseline": None,
        "alpha": 0.05,
        "rules": [
            {
                "rule": "min_pass_at_1",
                "family": "tool_call",
                "tag": None,
                "threshold": 0.5,
                "figure": 0.1,
                "shown": "10 %",
                "requirement": "≥ 50 %",
                "status": "FAIL",
                "detail": "",
            }
        ],
        "passed": False,
        "exit_code": 1,
        "notes": [],
    }
    g = GateResult.model_validate(old)
    assert g.verdict == "BLOCK" and g.rules[0].sees == ""
    assert GateResult.model_validate({**old, "passed": True, "exit_code": 0}).verdict == "SHIP"


def test_validate_prints_the_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    evalset = CASE / "evalset"
    code, out, err = run_cli(["validate", str(evalset), "--policy", str(DEFAULT)], capsys)
    assert code == 0, err
    assert "gate plan (default, 1 sample per entry):" in out
    assert (
        "BLIND governance (8 entries) no_significant_drop: sees ≥ 75 pt; needs ≥ 40 "
        "entries (1 sample each) or ≥ 5 samples per entry" in out
    )
    assert "3 of 6 rules cannot decide at this size" in out
    code, out, _ = run_cli(
        ["validate", str(evalset), "--policy", str(DEFAULT), "--samples", "5"], capsys
    )
    assert "all 6 rules can decide at this size" in out
    ni = tmp_path / "ni.yaml"
    ni.write_text(
        "defaults:\n  max_drop_points: 10\n  non_inferiority: true\nconfidence: 0.95\n"
        "families:\n  governance:\n    min_pass_at_1: 0.9\n",
        encoding="utf-8",
    )
    code, out, _ = run_cli(["validate", str(evalset), "--policy", str(ni)], capsys)
    assert code == 0
    assert "BLIND tool_call (8 entries) non_inferiority: sees ≥ 32.4 pt; needs ≥ 35" in out
    assert (
        "BLIND governance (8 entries) min_pass_at_1: sees CI low ≤ 67.6 %; needs ≥ 35 entries"
        in out
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("tags:\n  nope:*:\n    min_pass_at_1: 0.5\n", encoding="utf-8")
    code, _, err = run_cli(["validate", str(evalset), "--policy", str(bad)], capsys)
    assert code == 2 and "nope:*" in err


def test_the_view_shows_the_detectable_drop_and_an_inconclusive_gate(
    rounds: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from loragate.results.view.page_data import load_sides, view_data

    code, _, _ = run_cli(
        ["gate", str(rounds["round2"]), "-p", str(DEFAULT), "-b", str(rounds["round1"])], capsys
    )
    assert code == 6
    data = view_data(load_sides([str(rounds["round1"]), str(rounds["round2"])]), None)
    first, second = data["sides"]
    assert first["detectable"] is None  # the baseline of the page
    assert second["detectable"] == {
        "overall": 25.0,
        "tool_call": 75.0,
        "governance": 75.0,
        "should_not_call": 75.0,
    }
    gate = second["gate"]
    assert gate["verdict"] == "INCONCLUSIVE" and gate["exit_code"] == 6
    assert {r["sees"] for r in gate["rules"] if r["rule"] == "no_significant_drop"} == {"≥ 75 pt"}
