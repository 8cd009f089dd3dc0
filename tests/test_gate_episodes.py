"""Gate rules on episodes: success, per-step rate, recovery per fault kind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loragate.cli.app import main
from loragate.episodes.stage import rescore_episodes
from loragate.evalset.load import load_evalset
from tests._episodes import FIXTURE, REPO

CASESTUDY = REPO / "tests" / "data" / "casestudy"


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["loragate", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code or 0)


def scored_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, played_by: str) -> Path:
    """The case study's round 2 (adapter round2), with the fixture's `played_by` episodes as
    round2's."""
    out = tmp_path / "run"
    gens = str(CASESTUDY / "round2" / "generations.jsonl")
    evalset = str(CASESTUDY / "evalset")
    assert (
        run_main(
            monkeypatch, "score", "--generations", gens, "--evalset", evalset, "--out", str(out)
        )
        == 0
    )
    lines = [json.loads(x) for x in FIXTURE.read_text().splitlines()]
    mine = [dict(x, adapter="round2") for x in lines if x["adapter"] == played_by]
    source = tmp_path / "trajectories.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in mine))
    rescore_episodes(source, load_evalset(REPO / "evalsets" / "agent20"), out, "strict")
    return out


POLICY = """
version: 1
episodes:
  min_success: 0.9
  min_per_step: 0.95
  min_recovery: 0.5
  recovery: {timeout: 0.75}
"""


@pytest.mark.parametrize("played_by,code", [("round1", 0), ("round0", 1)])
def test_episode_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, played_by: str, code: int
) -> None:
    run = scored_run(tmp_path, monkeypatch, played_by)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    assert run_main(monkeypatch, "gate", str(run), "--policy", str(policy)) == code
    gate = json.loads((run / "gate.json").read_text())
    rules = {r["rule"]: r for r in gate["rules"]}
    assert {"min_success", "min_per_step", "min_recovery:timeout", "min_recovery:error"} <= set(
        rules
    )
    assert rules["min_recovery:timeout"]["threshold"] == 0.75
    assert rules["min_recovery:error"]["threshold"] == 0.5


def test_episode_rules_need_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = scored_run(tmp_path, monkeypatch, "round1")
    (run / "episodes_summary.json").unlink()
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    assert run_main(monkeypatch, "gate", str(run), "--policy", str(policy)) == 2
    assert "--episodes" in capsys.readouterr().err


@pytest.mark.card
def test_card_and_compare_show_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = scored_run(tmp_path / "good", monkeypatch, "round1")
    bad = scored_run(tmp_path / "bad", monkeypatch, "round0")
    capsys.readouterr()
    assert run_main(monkeypatch, "card", str(good)) == 0
    card = (good / "card" / "card.md").read_text()
    assert "**Episodes**" in card and "survival (share whose first n steps all passed" in card
    assert "(loragate_survival.png)" in card and "Hazard per step" in card
    png = (good / "card" / "loragate_survival.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    assert run_main(monkeypatch, "compare", str(bad), str(good), "-f", "markdown") == 0
    printed = capsys.readouterr().out
    assert "success 33.0 % -> 100.0 % (+67 pt" in printed and "timeout 0/21 -> 21/21" in printed


def test_report_and_view_show_episodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from loragate.formats.records import Summary
    from loragate.formats.runfolder import read_episodes_summary, read_results
    from loragate.results.report import render_markdown
    from loragate.results.view.page_data import load_sides, view_data

    run = scored_run(tmp_path, monkeypatch, "round0")
    summary = Summary.model_validate_json((run / "summary.json").read_text())
    report = render_markdown(summary, read_results(run), read_episodes_summary(run))
    assert "## Episodes" in report and "### Survival: round2" in report
    assert "### Hazard per step: round2" in report and "first n steps all passed" in report
    data = view_data(load_sides([str(run)]), None)
    episodes = data["episodes"]
    assert episodes is not None and len(episodes["variants"]) == 112
    rows = {episodes["variants"][t[0]]["id"]: t for t in episodes["trajectories"]}
    row = rows["EP-32~write_timeout"]
    assert row[3] == 0 and row[6] == 0  # failed, not recovered
    steps = row[8]
    assert [s[9] for s in steps] == [[], [], ["write_timeout"], []]  # the faults of each step
    assert steps[-1][4] == 0 and steps[-1][5] == "claimed_success_after_error"
    assert episodes["summaries"][0]["hazard"][1]["hazard"]["n"] == 112
