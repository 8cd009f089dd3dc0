"""Reading trajectory files: a run's `trajectories.jsonl` (`read_steps`), and the file a
user hands to `score-episodes` (`read_trajectory_input`), which may also be written by
hand - one whole trajectory a line (`{"episode_id", "outputs": [...]}`) or one step a
line - with no `parse` or `verdict` fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loragate.calls.parsing import parse_output
from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.jsonl import ReadReport, read_objects
from loragate.formats.records import Verdict
from loragate.formats.runfolder import read_jsonl
from loragate.formats.trajectories import StepRecord

HAND_ADAPTER = "hand"
"""The adapter name of a hand-written trajectory that names none."""
_FIX = 'write {"episode_id": ID, "outputs": [...]} or a run\'s trajectories.jsonl line'
_WHOLE_FIELDS = {"episode_id", "outputs", "adapter", "sample"}


def read_steps(path: Path, report: ReadReport | None = None) -> list[StepRecord]:
    """Every step of a `trajectories.jsonl` (a torn last line from a kill dropped; text
    that is not UTF-8 or holds lone surrogates mended, counted in `report`)."""
    if not path.is_file():
        return []
    return read_jsonl(path, StepRecord, tolerate_torn_tail=True, report=report)


def _whole_trajectory(
    obj: dict[str, Any], path: Path, lineno: int
) -> tuple[list[dict[str, Any]], Problem | None]:
    """The steps of a `{"episode_id", "outputs": [...]}` line, or the line's problem."""
    outputs = obj.get("outputs")
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        return [], Problem(
            str(path), "`outputs` must be a list of texts", line=lineno, field="outputs", fix=_FIX
        )
    extra = sorted(set(obj) - _WHOLE_FIELDS)
    if extra:
        return [], Problem(
            str(path), f"unknown field {extra[0]!r}", line=lineno, field=extra[0], fix=_FIX
        )
    steps = [
        {
            "episode_id": obj.get("episode_id"),
            "step": i,
            "text": text,
            "adapter": obj.get("adapter", HAND_ADAPTER),
            "sample": obj.get("sample", 0),
        }
        for i, text in enumerate(outputs, 1)
    ]
    return steps, None


def _with_defaults(raw: dict[str, Any]) -> dict[str, Any]:
    """A hand-written step with the fields a run writes and a rescore recomputes."""
    if "parse" in raw and "verdict" in raw:
        return raw
    text = raw.get("text")
    return {
        "adapter": HAND_ADAPTER,
        "sample": 0,
        **raw,
        "parse": parse_output(text if isinstance(text, str) else "", "strict"),
        "verdict": Verdict.ok(),
    }


def read_trajectory_input(path: Path, report: ReadReport | None = None) -> list[StepRecord]:
    """The steps to rescore from `path`: a run's `trajectories.jsonl`, or a file written
    by hand (docs/episodes.md, dry-running your own trajectories) whose lines are
    either one whole trajectory, `{"episode_id": "EP-01", "outputs": ["<tool_call>...",
    "Paid ..."]}`, or one step, `{"episode_id": "EP-01", "step": 1, "text": "..."}`;
    `adapter` (default `hand`) and `sample` (default 0) are optional, `parse`,
    `verdict` and the other fields of a run's steps are not needed. A torn last line
    (a run killed mid-write) is dropped; with `report`, text that is not UTF-8 or holds
    lone surrogates is mended and counted there."""
    problems: list[Problem] = []
    out: list[StepRecord] = []
    for lineno, obj in read_objects(
        path,
        what="trajectories file",
        report=report,
        tolerate_torn_tail=True,
        problems=problems,
    ):
        steps = [obj]
        if "outputs" in obj:
            steps, problem = _whole_trajectory(obj, path, lineno)
            if problem is not None:
                problems.append(problem)
                continue
        for raw in steps:
            try:
                out.append(StepRecord.model_validate(_with_defaults(raw)))
            except ValidationError as exc:
                problems += validation_problems(exc, str(path), line=lineno, fix=_FIX)
    if problems:
        raise BadInput(f"{path}: {len(problems)} bad line(s)", problems)
    return out


__all__ = ["HAND_ADAPTER", "read_steps", "read_trajectory_input"]
