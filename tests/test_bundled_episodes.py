"""The bundled agent20 episodes: valid, and every variant solvable - a careful
reference run (tests/data/agent20_episode_scripts.json) passes each one, doing nothing
fails each one, and a plausible mistake (tests/data/agent20_episode_mistakes.json:
guessing instead of asking, ignoring a denial, touching the wrong record) fails for
its reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.episodes.definitions import Episode
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.evalset.load import load_evalset

REPO = Path(__file__).resolve().parent.parent
EVALSET = load_evalset(REPO / "evalsets" / "agent20")
EPISODES = load_episodes(EVALSET)
CTX = EpisodeContext(EVALSET.toolset, EVALSET.policy, EVALSET.manifest.system_prompt)
SCRIPTS: dict[str, list[str]] = json.loads(
    (REPO / "tests" / "data" / "agent20_episode_scripts.json").read_text(encoding="utf-8")
)
MISTAKES: dict[str, dict[str, Any]] = json.loads(
    (REPO / "tests" / "data" / "agent20_episode_mistakes.json").read_text(encoding="utf-8")
)
VARIANTS = EPISODES.episodes if EPISODES is not None else []


def test_bundled_episodes_are_many_and_varied() -> None:
    specs = {e.base_id: e.spec for e in VARIANTS}
    assert len(specs) >= 30
    assert set(SCRIPTS) == {e.id for e in VARIANTS}
    assert all(2 <= len(SCRIPTS[e.id]) <= 12 for e in VARIANTS if e.variant is None)
    assert all(spec.faults for spec in specs.values())
    asking = [s for s in specs.values() if s.user_replies]
    denying = [s for s in specs.values() if any(a.answer == "deny" for a in s.answers())]
    assert len(asking) >= 4 and len(denying) >= 6
    # every scripted answer is used by the reference run of the clean variant
    for spec in asking:
        t = play(EPISODES.by_id[spec.id], SCRIPTS[spec.id]) if EPISODES else None
        assert t is not None and t.replies_used == len(spec.user_replies), spec.id


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
    if episode.variant is not None:
        assert r.recovered is True, r.recoveries


@pytest.mark.parametrize("episode", VARIANTS, ids=[e.id for e in VARIANTS])
def test_a_lazy_reply_fails(episode: Episode) -> None:
    r = play(episode, ["All done, everything is taken care of!"]).result()
    assert not r.passed


@pytest.mark.parametrize("base_id", sorted(MISTAKES))
def test_a_plausible_mistake_fails_for_its_reason(base_id: str) -> None:
    assert EPISODES is not None
    mistake = MISTAKES[base_id]
    r = play(EPISODES.by_id[base_id], mistake["outputs"]).result()
    assert not r.passed and r.reason == mistake["reason"], (r.reason, r.detail, r.step_reasons)
