"""The episode commands: `validate` on episodes, `score-episodes`, `run --episodes`
options, and the committed trajectories fixture."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loragate.cli.app import main
from loragate.cli.run import parse_episodes_option
from loragate.common.errors import BadInput
from loragate.episodes.stage import pick_episodes, run_episode_set
from loragate.evalset.load import load_evalset
from loragate.formats.trajectories import EPISODE_RESULTS, EPISODES_SUMMARY, TRAJECTORIES
from loragate.generate.config import load_config
from tests._episodes import FIXTURE, PAY, REPO, build_fixture, evalset_with

AGENT20 = str(REPO / "evalsets" / "agent20")


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["loragate", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code or 0)


def test_fixture_is_what_the_scripts_give(tmp_path: Path) -> None:
    build_fixture(tmp_path)
    assert (tmp_path / TRAJECTORIES).read_text() == FIXTURE.read_text()


def test_score_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["score-episodes", "--trajectories", str(FIXTURE), "--evalset", AGENT20]
    assert run_main(monkeypatch, *args, "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "survival (share whose first n steps all passed" in printed
    assert "recovery: timeout" in printed and "hazard (fails at step i" in printed
    summary = json.loads((out / EPISODES_SUMMARY).read_text())
    round0, round1 = summary["adapters"]["round0"], summary["adapters"]["round1"]
    assert round1["success"]["rate"] == 1.0 and round1["recovery"]["timeout"]["rate"] == 1.0
    assert round0["recovery"]["timeout"]["rate"] == 0.0
    assert round0["success_by_fault"]["clean"]["rate"] == 1.0
    assert len((out / EPISODE_RESULTS).read_text().splitlines()) == 2 * 112
    assert len((out / TRAJECTORIES).read_text().splitlines()) == len(
        FIXTURE.read_text().splitlines()
    )


def test_score_episodes_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    missing = [
        "--trajectories",
        str(tmp_path / "nope.jsonl"),
        "--evalset",
        AGENT20,
        "--out",
        str(out),
    ]
    assert run_main(monkeypatch, "score-episodes", *missing) == 2
    other = evalset_with(tmp_path, [PAY])
    wrong = ["--trajectories", str(FIXTURE), "--evalset", str(other), "--out", str(out)]
    assert run_main(monkeypatch, "score-episodes", *wrong) == 2
    err = capsys.readouterr().err
    assert "EP-0" in err and "fix:" in err and "Traceback" not in err
    assert not (out / EPISODES_SUMMARY).exists()


def test_validate_lists_episodes_and_their_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_main(monkeypatch, "validate", AGENT20) == 0
    assert "OK: 37 episodes (112 with their fault variants)" in capsys.readouterr().out
    bad = dict(PAY, tools=["get_invoice", "pay_invoce", "request_confirmation"])
    root = evalset_with(tmp_path, [PAY | {"id": "EP-OK"}, bad])
    assert run_main(monkeypatch, "validate", str(root)) == 2
    printed = capsys.readouterr().out
    assert "episodes.jsonl:2: tools[1]: unknown tool 'pay_invoce'" in printed
    assert "did you mean 'pay_invoice'" in printed


def test_episode_options() -> None:
    assert parse_episodes_option("3") == 3 and parse_episodes_option("all") == "all"
    assert parse_episodes_option(None) is None and parse_episodes_option("0") == 0
    for bad in ("-1", "some", "\u0663"):
        with pytest.raises(BadInput, match="--episodes"):
            parse_episodes_option(bad)
    ev = load_evalset(AGENT20)
    assert {e.base_id for e in pick_episodes(ev, 2).episodes} == {"EP-01", "EP-02"}
    assert len(pick_episodes(ev, "all").episodes) == 112
    with pytest.raises(BadInput, match="episodes"):
        load_config(None, {"episodes": -1})


def test_the_embedded_default_runs_two_episodes(tmp_path: Path) -> None:
    ev = load_evalset(AGENT20)
    default = run_episode_set(ev, load_config(REPO / "configs" / "default.yaml"))
    bare = run_episode_set(ev, load_config(None))
    assert default is not None and bare is not None
    assert [e.id for e in default.episodes] == [e.id for e in bare.episodes]
    assert {e.base_id for e in bare.episodes} == {"EP-01", "EP-02"} and len(bare.episodes) == 7
    assert run_episode_set(ev, load_config(None, {"episodes": 0})) is None
    assert run_episode_set(ev, load_config(None, {"model": "Qwen/Qwen3-4B"})) is None
    assert run_episode_set(ev, load_config(None, {"backend": "replay"})) is None
    three = run_episode_set(ev, load_config(None, {"model": "Qwen/Qwen3-4B", "episodes": 3}))
    assert three is not None and len({e.base_id for e in three.episodes}) == 3
    # an evalset without episodes: the default subset is simply not there
    root = evalset_with(tmp_path, [PAY])
    (root / "episodes.jsonl").unlink()
    assert run_episode_set(load_evalset(root), load_config(None)) is None


def test_episodes_option_without_episodes(tmp_path: Path) -> None:
    root = evalset_with(tmp_path, [PAY])
    (root / "episodes.jsonl").unlink()
    with pytest.raises(BadInput, match=r"no episodes\.jsonl"):
        pick_episodes(load_evalset(root), 1)


def test_docs_episode_example_validates(tmp_path: Path) -> None:
    text = (REPO / "docs" / "episodes.md").read_text(encoding="utf-8")
    block = text.split("<!-- episode-example -->\n```json\n", 1)[1].split("```", 1)[0]
    root = evalset_with(tmp_path, [block.strip()])
    episodes = pick_episodes(load_evalset(root), "all")
    assert [e.id for e in episodes.episodes] == ["EP-DOC", "EP-DOC~rate_limit", "EP-DOC~error"]


def test_survival_line_wording() -> None:
    from loragate.formats.trajectories import EpisodeAdapterSummary, Rate, SurvivalPoint
    from loragate.results.episode_report import survival_line

    empty = Rate(n=0, passes=0, rate=None, ci_low=None, ci_high=None)
    adapter = EpisodeAdapterSummary(
        success=empty,
        pass_hat_k=None,
        k=1,
        per_step=Rate(n=10, passes=9, rate=0.9, ci_low=0.6, ci_high=0.98),
        tool_error_rate=None,
        survival=[
            SurvivalPoint(
                steps=1,
                observed=Rate(n=2, passes=1, rate=0.5, ci_low=0.1, ci_high=0.9),
                at_risk=2,
                pooled=0.9,
                positions=0.95,
            ),
            SurvivalPoint(
                steps=3,
                observed=Rate(n=4, passes=3, rate=0.75, ci_low=0.3, ci_high=0.95),
                at_risk=3,
                pooled=0.729,
                positions=0.6,
            ),
        ],
    )
    line = survival_line(adapter)
    assert line == (
        "survival (share whose first n steps all passed / r^n / product of per-position "
        "rates; r = 90.0 %): 1 step 50.0 % / 90.0 % / 95.0 %; "
        "3 steps 75.0 % / 72.9 % / 60.0 %"
    )
