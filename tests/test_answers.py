"""agent20's answers file: every right answer passes and every near miss fails
(labels written before any scorer ran; see docs/writing-entries.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from loragate.episodes.answer_replay import episode_verdicts
from loragate.episodes.episodes_file import load_episodes
from loragate.evalset import load_evalset
from loragate.evalset.answers import AnswerVerdict, entry_verdicts, read_answers
from loragate.formats.evalset import FAULT_SEPARATOR

AGENT20 = Path(__file__).resolve().parent.parent / "evalsets" / "agent20"
EVALSET = load_evalset(AGENT20)
EPISODES = load_episodes(EVALSET)
ANSWERS = AGENT20 / "answers.jsonl"
VERDICTS: list[AnswerVerdict] = entry_verdicts(EVALSET, ANSWERS) + episode_verdicts(
    EVALSET, EPISODES, ANSWERS
)
MIN_EACH = 3


def test_the_manifest_names_the_answers() -> None:
    assert EVALSET.manifest.answers == "answers.jsonl"


def test_every_scored_entry_and_episode_has_right_and_near_miss_answers() -> None:
    rows = [a for _, a in read_answers(ANSWERS)]
    # An episode's answers count with its fault variants' (EP-32~write_timeout: EP-32).
    per = Counter(
        (a.entry_id or str(a.episode_id).split(FAULT_SEPARATOR)[0], a.expect_pass) for a in rows
    )
    entries = {e.id for e in EVALSET.entries}
    episodes = {e.base_id for e in (EPISODES.episodes if EPISODES else [])}
    thin = [
        i for i in sorted(entries | episodes) if min(per[(i, True)], per[(i, False)]) < MIN_EACH
    ]
    assert thin == []


@pytest.mark.parametrize(
    "verdict",
    VERDICTS,
    ids=[f"{v.line}:{v.answer.entry_id or v.answer.episode_id}" for v in VERDICTS],
)
def test_verdict_agrees_with_the_label(verdict: AnswerVerdict) -> None:
    assert verdict.agrees, str(verdict.problem())
