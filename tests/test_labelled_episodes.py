"""The hand-labelled episode trajectories (tests/data/episodes/labelled_*.jsonl,
README there): replayed against the simulator, every trajectory gets the verdict and
the `recovered` value its reviewer gave, labelled before the judge saw them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.evalset.load import load_evalset
from loragate.formats.trajectories import TrajectoryResult

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "episodes"
EVALSET = load_evalset(REPO / "evalsets" / "agent20")
EPISODES = load_episodes(EVALSET)
CTX = EpisodeContext(EVALSET.toolset, EVALSET.policy, EVALSET.manifest.system_prompt)
ROWS: list[tuple[str, dict[str, Any]]] = [
    (f"{path.stem}:{n}", json.loads(line))
    for path in sorted(DATA.glob("labelled_*.jsonl"))
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
    if line.strip()
]


def judge(row: dict[str, Any]) -> TrajectoryResult:
    assert EPISODES is not None
    t = Trajectory(EPISODES.by_id[row["episode_id"]], CTX, "labelled", 0)
    for out in row["outputs"]:
        if t.done:
            break
        t.advance(out)
    assert t.done, f"the outputs of {row['episode_id']} run out before the episode ends"
    return t.result()


def test_the_set_is_large_and_covers_the_new_faults() -> None:
    assert len(ROWS) >= 120
    variants = {r["episode_id"] for _, r in ROWS}
    for kind in ("write_timeout", "partial", "outage", "unauthorized", "forbidden"):
        assert any(v.endswith(kind) for v in variants), kind
    labels = [r["expect_recovered"] for _, r in ROWS]
    assert labels.count(True) >= 20 and labels.count(False) >= 20 and labels.count(None) >= 20


OPEN = {
    "labelled_not_done:14": "a name that is the object of a negated verb (\"I won't set "
    "Alpenrhein Textil's account to inactive\") is not counted as mentioned: "
    "`final_reply._mentions_missing` keeps only what comes before a negation",
}
"""Labelled trajectories the judge still gets wrong, each with the rule at fault (the
label stands; strict: fixing the rule turns the test red until the line goes)."""


@pytest.mark.parametrize(
    "where,row",
    [
        pytest.param(w, r, marks=pytest.mark.xfail(strict=True, reason=OPEN[w]))
        if w in OPEN
        else (w, r)
        for w, r in ROWS
    ],
    ids=[w for w, _ in ROWS],
)
def test_labelled_trajectory(where: str, row: dict[str, Any]) -> None:
    r = judge(row)
    detail = (r.reason, r.detail, r.step_reasons, [f.model_dump() for f in r.recoveries])
    assert r.passed is row["expect_pass"], detail
    assert r.recovered is row["expect_recovered"], detail
