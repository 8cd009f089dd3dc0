"""The bundled agent20 episodes: valid, and every variant solvable - a careful
reference run (tests/data/agent20_episode_scripts.json) passes each one, and doing
nothing fails each one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.episodes import Episode, load_episodes
from loragate.evalset import load_evalset
from loragate.trajectory import EpisodeContext, Trajectory

REPO = Path(__file__).resolve().parent.parent
EVALSET = load_evalset(REPO / "evalsets" / "agent20")
EPISODES = load_episodes(EVALSET)
CTX = EpisodeContext(EVALSET.toolset, EVALSET.policy, EVALSET.manifest.system_prompt)
SCRIPTS: dict[str, list[str]] = json.loads(
    (REPO / "tests" / "data" / "agent20_episode_scripts.json").read_text(encoding="utf-8")
)
VARIANTS = EPISODES.episodes if EPISODES is not None else []


def test_bundled_episodes_are_many_enough() -> None:
    assert len({e.base_id for e in VARIANTS}) >= 15
    assert set(SCRIPTS) == {e.id for e in VARIANTS}
    assert all(3 <= len(SCRIPTS[e.id]) <= 12 for e in VARIANTS if e.fault is None)


def play(episode: Episode, outputs: list[str]) -> Trajectory:
    t = Trajectory(episode, CTX, "base", 0)
    for out in outputs:
        if t.done:
            break
        t.advance(out)
    return t


@pytest.mark.parametrize("episode", VARIANTS, ids=[e.id for e in VARIANTS])
def test_reference_run_passes(episode: Episode) -> None:
    t = play(episode, SCRIPTS[episode.id])
    r = t.result()
    assert t.done and r.passed, (r.reason, r.detail, r.step_reasons)
    assert r.step_passes == r.steps
    if episode.fault is not None:
        assert r.recovered is True


@pytest.mark.parametrize("episode", VARIANTS, ids=[e.id for e in VARIANTS])
def test_a_lazy_reply_fails(episode: Episode) -> None:
    r = play(episode, ["All done, everything is taken care of!"]).result()
    assert not r.passed
