"""The episode answers of an evalset's answers file (`loragate.evalset.answers`): each a whole
trajectory, played step by step against the simulator and judged as a run judges it."""

from __future__ import annotations

from pathlib import Path

from loragate.episodes.definitions import EpisodeSet
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.evalset.answers import AnswerVerdict, read_answers, unknown_ids
from loragate.evalset.load import Evalset


def episode_verdicts(
    evalset: Evalset, episodes: EpisodeSet | None, path: Path
) -> list[AnswerVerdict]:
    """Every episode answer of `path` played and judged; an unknown episode id is bad
    input. An answer whose outputs run out before the episode ends fails (`step_cap`
    in spirit: the trajectory never finished)."""
    rows = [(n, a) for n, a in read_answers(path) if a.episode_id is not None]
    by_id = {e.id: e for e in (episodes.episodes if episodes is not None else [])}
    unknown = [(n, str(a.episode_id)) for n, a in rows if a.episode_id not in by_id]
    if unknown:
        raise unknown_ids(path, "episode", unknown, "use an id of episodes.jsonl (EP-01~timeout)")
    ctx = EpisodeContext(evalset.toolset, evalset.policy, evalset.manifest.system_prompt)
    out = []
    for lineno, answer in rows:
        t = Trajectory(by_id[str(answer.episode_id)], ctx, "answers", 0)
        for text in answer.outputs or []:
            if t.done:
                break
            t.advance(text)
        if not t.done:
            out.append(
                AnswerVerdict(
                    str(path),
                    lineno,
                    answer,
                    False,
                    "unfinished",
                    "the outputs ran out before the episode ended",
                )
            )
            continue
        r = t.result()
        detail = r.detail or ", ".join(r.step_reasons)
        out.append(AnswerVerdict(str(path), lineno, answer, r.passed, r.reason, detail))
    return out


__all__ = ["episode_verdicts"]
