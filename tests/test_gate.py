"""`loragate gate`: every exit code on replayed case-study rounds, and policy validation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.results.gate import GatePolicy, evaluate_gate, load_policy
from loragate.results.runs import load_run
from tests._casestudy import CASE, build_rounds, run_cli

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "configs" / "gates" / "default.yaml"
STRICT = REPO / "configs" / "gates" / "strict.yaml"


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_rounds(tmp_path_factory.mktemp("gate-rounds"))


def _policy(tmp: Path, text: str) -> Path:
    p = tmp / "policy.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_shipped_policies_validate() -> None:
    d = load_policy(DEFAULT)
    s = load_policy(STRICT)
    assert d.name == "default" and d.needs_baseline() and not d.require_baseline
    assert s.require_baseline and s.max_unparseable == 0.0


def test_improving_round_is_inconclusive_at_eight_entries(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Round 2 improves on round 1 everywhere, but with 8 entries a family the paired
    test cannot see the default policy's 15-point margin (it sees drops >= 75 pt):
    INCONCLUSIVE, exit 6, and the line says what would make it conclusive."""
    r1, r2 = rounds
    out = tmp_path / "gate.json"
    code, stdout, err = run_cli(
        ["gate", str(r2), "--policy", str(DEFAULT), "--baseline", str(r1), "-w", str(out)], capsys
    )
    assert code == 6, stdout + err
    assert "INCONCLUSIVE (3 rules cannot decide at this size)" in stdout
    assert "conclusive with ≥ 40 entries (1 sample each) or ≥ 5 samples per entry" in stdout
    g = json.loads(out.read_text())
    assert g["schema_version"] == 3 and g["verdict"] == "INCONCLUSIVE"
    assert g["passed"] is False and g["exit_code"] == 6 and g["baseline"] == "round1"
    assert g["inconclusive"] == "block"
    # 3 families x (floor, drop, significance) + unparseable; the figures are unchanged.
    assert len(g["rules"]) == 10
    status = {(r["family"], r["rule"]): r["status"] for r in g["rules"]}
    assert {k for k, v in status.items() if v != "PASS"} == {
        (f, "no_significant_drop") for f in ("tool_call", "governance", "should_not_call")
    }
    assert set(status.values()) == {"PASS", "INCONCLUSIVE"}
    sig = next(r for r in g["rules"] if r["rule"] == "no_significant_drop")
    assert sig["detectable_points"] == 75.0 and sig["sees"] == "≥ 75 pt"
    snc = next(
        r
        for r in g["rules"]
        if r["rule"] == "no_significant_drop" and r["family"] == "should_not_call"
    )
    assert snc["shown"] == "+75 pt, p = 0.03"  # the case study's figures stay


def test_warn_ships_an_improving_round_with_its_inconclusive_rules_listed(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    text = DEFAULT.read_text(encoding="utf-8").replace("inconclusive: block", "inconclusive: warn")
    assert "inconclusive: warn" in text
    p = _policy(tmp_path, text)
    out = tmp_path / "gate.json"
    code, stdout, err = run_cli(
        ["gate", str(r2), "-p", str(p), "-b", str(r1), "-w", str(out)], capsys
    )
    assert code == 0, stdout + err
    assert "SHIP (3 rules inconclusive, policy says warn)" in stdout
    assert "INCONCLUSIVE no_significant_drop in tool_call, governance, should_not_call" in stdout
    g = json.loads(out.read_text())
    assert g["verdict"] == "SHIP" and g["passed"] is True and g["exit_code"] == 0


def test_regressing_round_fails(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    code, stdout, _ = run_cli(
        ["gate", str(r1), "--policy", str(DEFAULT), "--baseline", str(r2)], capsys
    )
    assert code == 1
    assert "BLOCK (5 rules failed, 2 inconclusive)" in stdout
    g = json.loads((r1 / "gate.json").read_text())  # default location: the run folder
    failed = {(r["family"], r["rule"]) for r in g["rules"] if r["status"] == "FAIL"}
    assert failed == {
        ("governance", "min_pass_at_1"),
        ("should_not_call", "min_pass_at_1"),
        ("should_not_call", "max_drop_points"),
        ("should_not_call", "no_significant_drop"),
        (None, "max_unparseable"),
    }
    sig = next(
        r
        for r in g["rules"]
        if r["rule"] == "no_significant_drop" and r["family"] == "should_not_call"
    )
    assert sig["figure"] == pytest.approx(0.03125)
    assert sig["shown"] == "-75 pt, p = 0.03"
    assert "F-002" in sig["detail"]
    unp = next(r for r in g["rules"] if r["rule"] == "max_unparseable")
    assert unp["shown"] == "2/24 = 8.3 % (served)"


def test_without_baseline_rules_are_skipped_not_passed(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r1, r2 = rounds
    code, stdout, _ = run_cli(
        ["gate", str(r2), "-p", str(DEFAULT), "-w", str(tmp_path / "g.json")], capsys
    )
    assert code == 0
    g = json.loads((tmp_path / "g.json").read_text())
    statuses = [r["status"] for r in g["rules"]]
    assert statuses.count("SKIP") == 6 and "FAIL" not in statuses
    assert "6 baseline rule(s) skipped" in stdout
    code, _, _ = run_cli(
        ["gate", str(r1), "-p", str(DEFAULT), "-w", str(tmp_path / "g1.json")], capsys
    )
    assert code == 1


def test_strict_requires_baseline(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r1, r2 = rounds
    code, _, err = run_cli(
        ["gate", str(r2), "-p", str(STRICT), "-w", str(tmp_path / "g.json")], capsys
    )
    assert code == 2 and "require_baseline" in err
    code, _, _ = run_cli(
        ["gate", str(r2), "-p", str(STRICT), "-b", str(r1), "-w", str(tmp_path / "g.json")], capsys
    )
    # Non-inferiority at a 5-point margin: on 8 entries a family as good as its
    # baseline bounds its drop at 25.3 pt (90 % interval; 52 entries would do); only
    # should_not_call's +75 pt shows it did not drop.
    assert code == 1
    g = json.loads((tmp_path / "g.json").read_text())
    ni = {r["family"]: r for r in g["rules"] if r["rule"] == "non_inferiority"}
    assert {f: r["status"] for f, r in ni.items()} == {
        "tool_call": "FAIL",
        "governance": "FAIL",
        "should_not_call": "PASS",
    }
    assert all("≥ 52 entries" in r["needs"] for r in ni.values()), ni
    assert ni["tool_call"]["detectable_points"] == pytest.approx(25.27, abs=0.01)


def test_floor_is_inclusive(rounds: tuple[Path, Path], tmp_path: Path) -> None:
    _, r2 = rounds
    policy = GatePolicy.model_validate({"families": {"should_not_call": {"min_pass_at_1": 0.875}}})
    res = evaluate_gate(policy, load_run(str(r2)))
    assert res.passed and res.rules[0].shown == "87.5 % (7/8)"
    policy = GatePolicy.model_validate({"families": {"should_not_call": {"min_ci_low": 0.53}}})
    res = evaluate_gate(policy, load_run(str(r2)))
    # Wilson lower bound of 7/8 is 0.529: just below.
    assert not res.passed and res.exit_code == 1


def test_significance_alone(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    policy = GatePolicy.model_validate({"defaults": {"no_significant_drop": True}, "alpha": 0.03})
    # p = 0.03125 is not below alpha 0.03: no significant drop, but at alpha 0.03 the
    # test needs 7 same-way flips (87.5 pt on 8 entries): it cannot decide, and a gate
    # whose every rule is undecided never ships, even under `warn`.
    res = evaluate_gate(policy, load_run(str(r1)), load_run(str(r2)))
    assert not res.passed and res.verdict == "INCONCLUSIVE" and res.exit_code == 6
    assert {r.status for r in res.rules} == {"INCONCLUSIVE"}
    assert {r.detectable_points for r in res.rules} == {87.5}
    warn = policy.model_copy(update={"inconclusive": "warn"})
    assert evaluate_gate(warn, load_run(str(r1)), load_run(str(r2))).verdict == "INCONCLUSIVE"
    policy = GatePolicy.model_validate({"defaults": {"no_significant_drop": True}, "alpha": 0.05})
    res = evaluate_gate(policy, load_run(str(r1)), load_run(str(r2)))
    assert [(r.family, r.status) for r in res.rules if r.status == "FAIL"] == [
        ("should_not_call", "FAIL")
    ]
    assert res.verdict == "BLOCK" and res.exit_code == 1


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        (
            "families:\n  should_not_cal:\n    min_pass_at_1: 0.5\n",
            "did you mean 'should_not_call'",
        ),
        ("families:\n  clarify:\n    min_pass_at_1: 0.5\n", "has no entry of it"),
        ("defaults:\n  min_pass_at1: 0.5\n", "min_pass_at1"),
        ("defaults:\n  min_pass_at_1: 75\n", "less than or equal to 1"),
        ("", "defines no rule"),
        ("name: empty\ndefaults: {}\n", "defines no rule"),
        ("defaults: [1, 2\n", "not valid YAML"),
        ("- min_pass_at_1: 0.5\n", "must be a mapping"),
        ("defaults:\n  max_drop_points: 5\n", "no rule could be evaluated"),
        ("max_unparseable: 0.1\nalpha: 2\n", "alpha"),
        ("max_unparseable: 0.1\nalpha: 0.6\n", "less than or equal to 0.5"),
        ("max_unparseable: 0.1\nconfidence: 1.0\n", "confidence"),
        ("max_unparseable: 0.1\nconfidence: 0.3\n", "confidence"),
        ("max_unparseable: 0.1\nmargin_points: 0\n", "margin_points"),
        ("max_unparseable: 0.1\nmargin_points: 120\n", "margin_points"),
        ("max_unparseable: 0.1\ninconclusive: maybe\n", "inconclusive"),
        ("defaults:\n  non_inferiority: 1.5\n", "non_inferiority"),
    ],
)
def test_bad_policies_exit_2(
    rounds: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    msg: str,
) -> None:
    _, r2 = rounds
    p = _policy(tmp_path, text)
    out = tmp_path / "g.json"
    code, stdout, err = run_cli(["gate", str(r2), "-p", str(p), "-w", str(out)], capsys)
    assert code == 2, stdout + err
    assert msg in err, err
    assert "Traceback" not in err
    assert not out.exists()  # never a gate.json for a gate that did not run


def test_missing_policy_and_run(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, r2 = rounds
    code, _, err = run_cli(["gate", str(r2), "-p", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = run_cli(["gate", str(tmp_path / "norun"), "-p", str(DEFAULT)], capsys)
    assert code == 2 and "does not exist" in err


def test_baseline_over_other_entries_exit_2(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from loragate.evaluation import finish_run
    from loragate.formats.runfolder import read_generations
    from tests._casestudy import casestudy_evalset

    r1, _ = rounds
    gens = [
        g for g in read_generations(CASE / "round2" / "generations.jsonl") if g.entry_id != "F-008"
    ]
    partial = tmp_path / "partial"
    finish_run(casestudy_evalset(), gens, partial, allow_missing=True, progress=False)
    code, _, err = run_cli(["gate", str(partial), "-p", str(DEFAULT), "-b", str(r1)], capsys)
    assert code == 2 and "not over the same entries" in err


def test_github_step_summary(
    rounds: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r1, r2 = rounds
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, _ = run_cli(
        ["gate", str(r1), "-p", str(DEFAULT), "-b", str(r2), "-w", str(tmp_path / "g.json")], capsys
    )
    assert code == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, not overwritten
    assert (
        "### loragate gate: BLOCK (5 rules failed, 2 inconclusive): round1 against round2, "
        "policy default" in text
    )
    assert (
        "| should_not_call | no_significant_drop | -75 pt, p = 0.03 | no drop at p &lt; 0.05 "
        "| **FAIL** | ≥ 75 pt | worse: F-002" in text
    )
    assert (
        "| governance | no_significant_drop | -12.5 pt, p = 1.00 | no drop at p &lt; 0.05 "
        "| **INCONCLUSIVE** | ≥ 75 pt |" in text
    )
    assert "> INCONCLUSIVE no_significant_drop in tool_call, governance: on 8 entries" in text


def test_markdown_flag(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    code, out, _ = run_cli(
        [
            "gate",
            str(r2),
            "-p",
            str(DEFAULT),
            "-b",
            str(r1),
            "--format",
            "markdown",
            "-w",
            str(tmp_path / "g.json"),
        ],
        capsys,
    )
    assert code == 6
    assert "| should_not_call | min_pass_at_1 | 87.5 % (7/8) | ≥ 75.0 % | PASS |  |  |" in out


def test_exit_codes_through_the_console_script(rounds: tuple[Path, Path], tmp_path: Path) -> None:
    """The real process exit status, not only what main() raises."""
    r1, r2 = rounds

    def status(*args: str) -> int:
        return subprocess.run(
            [sys.executable, "-m", "loragate", "gate", *args, "-w", str(tmp_path / "g.json")],
            capture_output=True,
            text=True,
            timeout=120,
        ).returncode

    assert status(str(r2), "-p", str(DEFAULT)) == 0  # floors only: no baseline
    assert status(str(r1), "-p", str(DEFAULT), "-b", str(r2)) == 1
    assert status(str(r2), "-p", str(DEFAULT), "-b", str(r1)) == 6
    assert status(str(r2), "-p", str(tmp_path / "missing.yaml")) == 2


def test_unknown_family_raises_bad_input_in_library(rounds: tuple[Path, Path]) -> None:
    _, r2 = rounds
    policy = GatePolicy.model_validate({"families": {"nope": {"min_pass_at_1": 0.1}}})
    with pytest.raises(BadInput, match="unknown family 'nope'"):
        evaluate_gate(policy, load_run(str(r2)))


def test_every_policy_rule_has_a_check() -> None:
    from loragate.results.gate import FAMILY_RULES, RUN_RULES, FamilyRules, GatePolicy

    assert list(FAMILY_RULES) == [f for f in FamilyRules.model_fields if f != "if_present"]
    assert set(RUN_RULES) <= set(GatePolicy.model_fields)
    assert {"max_unparseable", "max_unparseable_lenient"} == set(RUN_RULES)
