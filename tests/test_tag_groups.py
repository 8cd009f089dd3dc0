"""Tags as a grouping beside families: paired rows per BFCL category in `compare`, gate
rules per tag, and a per-tag table in `card`, on two scored runs of an imported BFCL
evalset (`multiple`: 200 entries, `irrelevance`: 240)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.evalset.bfcl import data_dir, read_category
from loragate.formats.runfolder import read_summary
from loragate.formats.versions import COMPARISON_SCHEMA_VERSION, SUMMARY_SCHEMA_VERSION
from loragate.results.card import build_card
from loragate.results.compare import compare_runs
from loragate.results.compare_render import render_markdown, render_terminal
from loragate.results.gate import GatePolicy, evaluate_gate
from loragate.results.runs import load_run
from loragate.score.aggregate import grouping_tags
from tests._bfcl import ANSWER_TEXT, correct_calls, tool_call_text
from tests._casestudy import cli_exit_code, run_cli

MULTIPLE, IRRELEVANCE = "bfcl:multiple", "bfcl:irrelevance"


def _main(*args: str) -> None:
    assert cli_exit_code(list(args)) == 0


def _score(root: Path, ev: Path, name: str, right: int, irrelevant_calls: int) -> Path:
    """A run where the first `right` `multiple` entries are answered correctly and the
    first `irrelevant_calls` `irrelevance` entries call a tool (the rest answer)."""
    lines = []
    raws, answers = read_category(data_dir(), "multiple")
    for i, raw in enumerate(raws):
        text = tool_call_text(correct_calls(answers[raw["id"]])) if i < right else ANSWER_TEXT
        lines.append({"entry_id": raw["id"], "adapter": "m", "sample": 0, "text": text})
    for i, raw in enumerate(read_category(data_dir(), "irrelevance")[0]):
        call = [(raw["function"][0]["name"], {})]
        text = tool_call_text(call) if i < irrelevant_calls else ANSWER_TEXT
        lines.append({"entry_id": raw["id"], "adapter": "m", "sample": 0, "text": text})
    gens = root / f"{name}.jsonl"
    gens.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = root / name
    _main("score", "--generations", str(gens), "--evalset", str(ev), "--out", str(run))
    return run


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tag-rounds")
    ev = root / "ev"
    _main("import", "bfcl", "--categories", "multiple,irrelevance", "--out", str(ev))
    # round 2 gets 50 more `multiple` entries right and calls a tool on 40 irrelevant ones
    return _score(root, ev, "round1", 10, 0), _score(root, ev, "round2", 60, 40)


def _policy(**fields: object) -> GatePolicy:
    return GatePolicy.model_validate({"version": 1, **fields})


def test_grouping_tags_are_the_namespaced_ones() -> None:
    tags = ["finance", "bfcl:multiple", "a:b c", ":x", "x:", "bfcl:irrelevance", "multi-turn"]
    assert grouping_tags(tags) == ["bfcl:irrelevance", "bfcl:multiple"]


@pytest.mark.bfcl
def test_summary_lists_the_entries_of_each_tag(rounds: tuple[Path, Path]) -> None:
    summary = read_summary(rounds[0])
    assert summary.schema_version == SUMMARY_SCHEMA_VERSION
    assert list(summary.tag_entries) == [IRRELEVANCE, MULTIPLE]
    assert len(summary.tag_entries[MULTIPLE]) == 200
    assert summary.tag_entries[MULTIPLE] == sorted(summary.tag_entries[MULTIPLE])


@pytest.mark.bfcl
def test_compare_pairs_each_bfcl_category(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    c = compare_runs([load_run(str(r1)), load_run(str(r2))])
    assert [row.tag for row in c.tags] == [IRRELEVANCE, MULTIPLE]
    multiple, irrelevance = c.tag(MULTIPLE), c.tag(IRRELEVANCE)
    assert multiple.entries == 200 and irrelevance.entries == 240
    d = multiple.deltas[0]
    assert d.diff_points == pytest.approx(25.0)
    assert (len(d.improved), len(d.regressed)) == (50, 0)
    assert d.test is not None and d.test.method == "mcnemar_exact" and d.test.p_value < 1e-9
    d = irrelevance.deltas[0]
    assert d.diff_points == pytest.approx(-100 * 40 / 240)
    assert (len(d.improved), len(d.regressed)) == (0, 40)
    # the per-tag figures are the summary's
    assert multiple.stats[1] == load_run(str(r2)).stats.tags[MULTIPLE]
    md = render_markdown(c)
    by_tag = md.split("By tag:")[1]
    assert "| bfcl:multiple | 200 | 5.0 % (10/200)" in by_tag
    assert "| +25 pt | " in by_tag and "| +50 / -0 |" in by_tag
    from rich.console import Console

    console = Console(width=160, record=True)
    console.print(render_terminal(c))
    assert "bfcl:irrelevance" in console.export_text()


@pytest.mark.bfcl
def test_compare_json_and_cli_carry_tag_rows(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    code, out, err = run_cli(["compare", str(r1), str(r2), "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["schema_version"] == COMPARISON_SCHEMA_VERSION
    assert [t["tag"] for t in data["tags"]] == [IRRELEVANCE, MULTIPLE]


@pytest.mark.bfcl
def test_compare_on_a_summary_without_tag_entries_says_to_rescore(
    rounds: tuple[Path, Path], tmp_path: Path
) -> None:
    r1, r2 = rounds
    old = tmp_path / "round1"
    shutil.copytree(r1, old)
    raw = json.loads((old / "summary.json").read_text())
    raw["schema_version"] = 2
    del raw["tag_entries"]
    (old / "summary.json").write_text(json.dumps(raw))
    c = compare_runs([load_run(str(old)), load_run(str(r2))])
    assert c.tags == []
    assert any("re-score" in n and "per tag" in n for n in c.notes)


def test_compare_shows_no_tag_rows_for_plain_tags(tmp_path: Path) -> None:
    from tests._casestudy import build_rounds

    r1, r2 = build_rounds(tmp_path)
    c = compare_runs([load_run(str(r1)), load_run(str(r2))])
    assert c.tags == [] and "By tag" not in render_markdown(c)


@pytest.mark.bfcl
def test_gate_rules_per_tag(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    policy = _policy(
        tags={
            "bfcl:*": {"min_pass_at_1": 0.5, "no_significant_drop": True},
            MULTIPLE: {"min_pass_at_1": 0.25},  # overrides the pattern's floor only
        }
    )
    result = evaluate_gate(policy, load_run(str(r2)), load_run(str(r1)))
    rules = {(r.tag, r.rule): r for r in result.rules}
    assert all(r.family is None for r in result.rules)
    assert set(rules) == {
        (IRRELEVANCE, "min_pass_at_1"),
        (IRRELEVANCE, "no_significant_drop"),
        (MULTIPLE, "min_pass_at_1"),
        (MULTIPLE, "no_significant_drop"),
    }
    assert rules[(MULTIPLE, "min_pass_at_1")].status == "PASS"  # 30 % >= 25 %
    assert rules[(MULTIPLE, "min_pass_at_1")].threshold == 0.25
    assert rules[(MULTIPLE, "no_significant_drop")].status == "PASS"  # it improved
    assert rules[(IRRELEVANCE, "min_pass_at_1")].status == "PASS"  # 200/240
    assert rules[(IRRELEVANCE, "no_significant_drop")].status == "FAIL"  # 40 regressed
    assert result.exit_code == 1
    from loragate.results.gate_render import render_markdown as gate_markdown

    assert "| tag bfcl:irrelevance | no_significant_drop |" in gate_markdown(result)


@pytest.mark.bfcl
def test_gate_tag_rules_through_the_cli(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    policy = r1.parent / "drop-policy.yaml"
    policy.write_text("version: 1\ntags:\n  bfcl:multiple:\n    max_drop_points: 5\n")
    out = r1.parent / "gate-multiple.json"
    args = ["gate", str(r1), "--policy", str(policy), "--baseline", str(r2), "-w", str(out)]
    code, stdout, _ = run_cli(args, capsys)
    assert code == 1 and "tag bfcl:multiple" in stdout
    g = json.loads(out.read_text())
    assert g["schema_version"] == 3
    [rule] = g["rules"]
    assert (rule["family"], rule["tag"], rule["rule"], rule["status"]) == (
        None,
        MULTIPLE,
        "max_drop_points",
        "FAIL",
    )
    assert rule["figure"] == pytest.approx(-25.0)
    # Without a baseline the only rule is skipped: a gate that checks nothing is bad input.
    code, _, err = run_cli(["gate", str(r1), "--policy", str(policy)], capsys)
    assert code == 2 and "no rule could be evaluated" in err


@pytest.mark.parametrize(
    ("key", "message"),
    [("bfcl:multipel", "did you mean 'bfcl:multiple'"), ("live_*", "a matching tag")],
)
@pytest.mark.bfcl
def test_gate_tag_key_that_matches_nothing_is_bad_input(
    rounds: tuple[Path, Path], key: str, message: str
) -> None:
    policy = _policy(tags={key: {"min_pass_at_1": 0.5}})
    with pytest.raises(BadInput) as info:
        evaluate_gate(policy, load_run(str(rounds[0])))
    assert message in str(info.value) + " ".join(p.fix or "" for p in info.value.problems)
    assert info.value.problems[0].field == f"tags.{key}"


def test_policy_with_only_tag_rules_is_a_policy() -> None:
    assert _policy(tags={"x:y": {"min_pass_at_1": 0.5}}).tags["x:y"].min_pass_at_1 == 0.5
    assert _policy(tags={"x:y": {"max_drop_points": 3}}).needs_baseline()
    with pytest.raises(ValueError, match="defines no rule"):
        _policy(tags={"x:y": {}})


@pytest.mark.bfcl
def test_card_has_a_table_per_tag(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    section = build_card(load_run(str(r2)), load_run(str(r1)), chart=None).section
    by_tag = section.split("### By tag")[1].split("###")[0]
    assert "| Tag | Entries | pass@1 [95 % CI] | pass^k | round1 pass@1 | Δ | p |" in by_tag
    assert "| bfcl:multiple | 200 | 30.0 % (60/200)" in by_tag
    assert "| +25 pt |" in by_tag
    alone = build_card(load_run(str(r2)), chart=None).section
    assert "| bfcl:irrelevance | 240 | 83.3 % (200/240)" in alone


@pytest.mark.bfcl
def test_card_caps_the_tag_rows(rounds: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("loragate.results.card.CARD_MAX_TAG_ROWS", 1)
    section = build_card(load_run(str(rounds[1])), chart=None).section
    assert "| bfcl:irrelevance |" in section and "| bfcl:multiple |" not in section
    assert "1 more tag in the run's report.md." in section
