"""The episodes of `loragate view`: each side's trajectories step by step, as plain data.

For every side (run folder, adapter) that ran episodes, `episode_data` reads
`trajectories.jsonl`, `episode_results.jsonl` and `episodes_summary.json` and returns
(the page's script reads it; output texts go into the shared `texts` table):

- `variants`: `{id, base_id, variant, task}` in first-seen order;
- `trajectories`: one compact row a trajectory,
  `[variant, side, sample, pass, reason, detail, recovered, recoveries, steps]`, with
  `recoveries` `[[kind, tool, step, recovered, why], ...]` and `steps`
  `[[step, text, calls, results, pass, reason, detail, user_reply, final, faults], ...]`
  where `results` are `[name, arguments, text, failed, fault]`;
- `summaries`: per side, the adapter's episode figures (`EpisodeAdapterSummary`:
  survival curve and hazard table included) or None;
- `problems`: what could not be read (the page says so; the rest still shows).

Nothing here renders HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from loragate.common.errors import BadInput
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.loop import read_steps
from loragate.formats.runfolder import read_episodes_summary, read_jsonl
from loragate.formats.trajectories import EPISODE_RESULTS, TRAJECTORIES, TrajectoryResult


class Side(Protocol):
    """What the episodes payload reads of a page's side (`view.page_data.Side`)."""

    @property
    def run_dir(self) -> Path: ...

    @property
    def adapter(self) -> str: ...

    @property
    def label(self) -> str: ...


MAX_RESULT_CHARS = 4000
"""A tool result longer than this is cut in the page (the run folder has it whole)."""


def episode_data(sides: Sequence[Side], text_index: Callable[[str], int]) -> dict[str, Any] | None:
    """The episodes payload of the page, or None when no side ran episodes."""
    variants: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    rows: list[list[Any]] = []
    summaries: list[Any] = []
    problems: list[str] = []
    found = False
    for side_no, side in enumerate(sides):
        summary = None
        try:
            whole = read_episodes_summary(side.run_dir)
            summary = whole.adapters.get(side.adapter) if whole is not None else None
            results_path = side.run_dir / EPISODE_RESULTS
            steps_path = side.run_dir / TRAJECTORIES
            if not results_path.is_file() or not steps_path.is_file():
                summaries.append(None if summary is None else summary.model_dump(mode="json"))
                continue
            results = [
                r for r in read_jsonl(results_path, TrajectoryResult) if r.adapter == side.adapter
            ]
            steps = [s for s in read_steps(steps_path) if s.adapter == side.adapter]
        except BadInput as exc:
            problems.append(f"{side.label}: {exc}")
            summaries.append(None)
            continue
        found = found or bool(results)
        summaries.append(None if summary is None else summary.model_dump(mode="json"))
        by_traj: dict[tuple[str, int], list[Any]] = {}
        for s in sorted(steps, key=lambda x: (x.episode_id, x.sample, x.step)):
            by_traj.setdefault((s.episode_id, s.sample), []).append(
                [
                    s.step,
                    text_index(s.text),
                    [{"name": c.name, "arguments": c.arguments} for c in s.parse.calls],
                    [
                        [
                            r.name,
                            r.arguments,
                            text_index(r.text[:MAX_RESULT_CHARS]),
                            r.failed,
                            r.fault,
                        ]
                        for r in s.results
                    ],
                    1 if s.verdict.passed else 0,
                    s.verdict.reason.value,
                    s.verdict.detail,
                    s.user_reply,
                    s.final,
                    list(s.faults),
                ]
            )
        for r in results:
            if r.episode_id not in index:
                index[r.episode_id] = len(variants)
                variants.append(
                    {"id": r.episode_id, "base_id": r.base_id, "variant": r.fault, "task": None}
                )
            rows.append(
                [
                    index[r.episode_id],
                    side_no,
                    r.sample,
                    1 if r.passed else 0,
                    r.reason,
                    r.detail,
                    None if r.recovered is None else (1 if r.recovered else 0),
                    [[f.kind, f.tool, f.step, f.recovered, f.why] for f in r.recoveries],
                    by_traj.get((r.episode_id, r.sample), []),
                ]
            )
    if not found:
        return None
    return {
        "variants": variants,
        "trajectories": rows,
        "summaries": summaries,
        "problems": problems,
    }


def add_tasks(payload: dict[str, Any], evalset: Any) -> None:
    """Fill each variant's `task` (the user's messages) from the evalset's episodes."""
    try:
        episodes = load_episodes(evalset)
    except BadInput:
        return
    if episodes is None:
        return
    for v in payload["variants"]:
        ep = episodes.by_id.get(v["id"])
        if ep is not None:
            v["task"] = "\n\n".join(m.content or "" for m in ep.spec.task)


__all__ = ["MAX_RESULT_CHARS", "add_tasks", "episode_data"]
