"""Family H `abstain` in the reports like every other family: the run's summary,
compare, gate (a shipped floor with `if_present`), card and view."""

from __future__ import annotations

from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.results.card import build_card
from loragate.results.compare import compare_runs
from loragate.results.compare_render import render_markdown
from loragate.results.gate import GatePolicy, evaluate_gate, load_policy
from loragate.results.runs import load_run
from loragate.results.view.page_data import load_sides, view_data
from tests._casestudy import build_rounds
from tests._view_runs import agent20, agent20_run

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "configs" / "gates" / "default.yaml"
STRICT = REPO / "configs" / "gates" / "strict.yaml"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return agent20_run(tmp_path_factory.mktemp("abstain") / "a20", ("base", "round2"))


def test_the_summary_has_an_abstain_row(run: Path) -> None:
    stats = load_run(f"{run}:round2").stats.families["abstain"]
    assert stats.entries == 14 and stats.pass_at_1 == 1.0
    assert load_run(f"{run}:base").stats.families["abstain"].pass_at_1 < 1.0


def test_compare_pairs_the_family_with_its_letter(run: Path) -> None:
    c = compare_runs([load_run(f"{run}:base"), load_run(f"{run}:round2")])
    row = next(r for r in c.families if r.family == "abstain")
    assert row.letter == "H" and (row.deltas[0].diff_points or 0) > 0
    assert "| H | abstain |" in render_markdown(c)


def test_shipped_policies_floor_abstain_when_the_run_has_it(run: Path) -> None:
    for path in (DEFAULT, STRICT):
        rules = load_policy(path).families["abstain"]
        assert rules.if_present and rules.min_pass_at_1 is not None
    res = evaluate_gate(load_policy(DEFAULT), load_run(f"{run}:round2"))
    floor = next(r for r in res.rules if r.family == "abstain" and r.rule == "min_pass_at_1")
    assert floor.status == "PASS" and floor.shown == "100.0 % (14/14)"
    res = evaluate_gate(load_policy(DEFAULT), load_run(f"{run}:base"))
    floor = next(r for r in res.rules if r.family == "abstain" and r.rule == "min_pass_at_1")
    assert floor.status == "FAIL"


def test_if_present_skips_a_family_the_run_lacks_and_says_so(tmp_path: Path) -> None:
    _, round2 = build_rounds(tmp_path)  # the case study: families A, D and F only
    res = evaluate_gate(load_policy(DEFAULT), load_run(str(round2)))
    assert not any(r.family == "abstain" for r in res.rules)
    assert any("no entries of abstain" in n for n in res.notes)
    strict = GatePolicy.model_validate({"families": {"abstain": {"min_pass_at_1": 0.5}}})
    with pytest.raises(BadInput, match="family 'abstain' has rules but the run has no entry"):
        evaluate_gate(strict, load_run(str(round2)))


def test_card_and_view_show_the_family(run: Path) -> None:
    card = build_card(load_run(f"{run}:round2"), load_run(f"{run}:base"), chart=None)
    assert "| H | abstain |" in card.section
    data = view_data(load_sides([str(run)]), agent20())
    assert ["abstain", "H"] in data["families"]
    h = [e for e in data["entries"] if e["id"].startswith("H-")]
    assert len(h) == 14 and all(e["family"] == "abstain" for e in h)
