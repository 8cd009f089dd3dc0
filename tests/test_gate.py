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


def test_improving_round_ships(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    out = tmp_path / "gate.json"
    code, stdout, err = run_cli(
        ["gate", str(r2), "--policy", str(DEFAULT), "--baseline", str(r1), "-o", str(out)], capsys
    )
    assert code == 0, stdout + err
    assert "SHIP" in stdout
    g = json.loads(out.read_text())
    assert g["passed"] is True and g["exit_code"] == 0 and g["baseline"] == "round1"
    assert all(r["status"] == "PASS" for r in g["rules"])
    # 3 families x (floor, drop, significance) + unparseable.
    assert len(g["rules"]) == 10


def test_regressing_round_fails(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    code, stdout, _ = run_cli(
        ["gate", str(r1), "--policy", str(DEFAULT), "--baseline", str(r2)], capsys
    )
    assert code == 1
    assert "BLOCK (5 rules failed)" in stdout
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
    assert unp["shown"] == "2/24 = 8.3 %"


def test_without_baseline_rules_are_skipped_not_passed(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r1, r2 = rounds
    code, stdout, _ = run_cli(
        ["gate", str(r2), "-p", str(DEFAULT), "-o", str(tmp_path / "g.json")], capsys
    )
    assert code == 0
    g = json.loads((tmp_path / "g.json").read_text())
    statuses = [r["status"] for r in g["rules"]]
    assert statuses.count("SKIP") == 6 and "FAIL" not in statuses
    assert "6 baseline rule(s) skipped" in stdout
    code, _, _ = run_cli(
        ["gate", str(r1), "-p", str(DEFAULT), "-o", str(tmp_path / "g1.json")], capsys
    )
    assert code == 1


def test_strict_requires_baseline(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r1, r2 = rounds
    code, _, err = run_cli(
        ["gate", str(r2), "-p", str(STRICT), "-o", str(tmp_path / "g.json")], capsys
    )
    assert code == 2 and "require_baseline" in err
    code, _, _ = run_cli(
        ["gate", str(r2), "-p", str(STRICT), "-b", str(r1), "-o", str(tmp_path / "g.json")], capsys
    )
    assert code == 0


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
    # p = 0.03125 is not below alpha 0.03: no significant drop, the gate passes.
    res = evaluate_gate(policy, load_run(str(r1)), load_run(str(r2)))
    assert res.passed
    policy = GatePolicy.model_validate({"defaults": {"no_significant_drop": True}, "alpha": 0.05})
    res = evaluate_gate(policy, load_run(str(r1)), load_run(str(r2)))
    assert [(r.family, r.status) for r in res.rules if r.status == "FAIL"] == [
        ("should_not_call", "FAIL")
    ]


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
    code, stdout, err = run_cli(["gate", str(r2), "-p", str(p), "-o", str(out)], capsys)
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
    from loragate.formats.runfolder import read_generations
    from loragate.run import finish_run
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
        ["gate", str(r1), "-p", str(DEFAULT), "-b", str(r2), "-o", str(tmp_path / "g.json")], capsys
    )
    assert code == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, not overwritten
    assert (
        "### loragate gate: BLOCK (5 rules failed): round1 against round2, policy default" in text
    )
    assert (
        "| should_not_call | no_significant_drop | -75 pt, p = 0.03 | no drop at p &lt; 0.05 | **FAIL** |"
        in text
    )


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
            "--markdown",
            "-o",
            str(tmp_path / "g.json"),
        ],
        capsys,
    )
    assert code == 0
    assert "| should_not_call | min_pass_at_1 | 87.5 % (7/8) | ≥ 75.0 % | PASS |  |" in out


def test_exit_codes_through_the_console_script(rounds: tuple[Path, Path], tmp_path: Path) -> None:
    """The real process exit status, not only what main() raises."""
    r1, r2 = rounds

    def status(*args: str) -> int:
        return subprocess.run(
            [sys.executable, "-m", "loragate", "gate", *args, "-o", str(tmp_path / "g.json")],
            capture_output=True,
            text=True,
            timeout=120,
        ).returncode

    assert status(str(r2), "-p", str(DEFAULT), "-b", str(r1)) == 0
    assert status(str(r1), "-p", str(DEFAULT), "-b", str(r2)) == 1
    assert status(str(r2), "-p", str(tmp_path / "missing.yaml")) == 2


def test_unknown_family_raises_bad_input_in_library(rounds: tuple[Path, Path]) -> None:
    _, r2 = rounds
    policy = GatePolicy.model_validate({"families": {"nope": {"min_pass_at_1": 0.1}}})
    with pytest.raises(BadInput, match="unknown family 'nope'"):
        evaluate_gate(policy, load_run(str(r2)))


def test_every_policy_rule_has_a_check() -> None:
    from loragate.results.gate import FAMILY_RULES, RUN_RULES, FamilyRules, GatePolicy

    assert list(FAMILY_RULES) == list(FamilyRules.model_fields)
    assert set(RUN_RULES) <= set(GatePolicy.model_fields)
    assert {"max_unparseable", "max_unparseable_repaired"} == set(RUN_RULES)
