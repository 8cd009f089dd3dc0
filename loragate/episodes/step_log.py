"""`trajectories.jsonl` during a live run: every (episode, adapter, sample, step) once.

The file is the episodes' cache and their record. A rerun can take another path than
the run before it through the same positions: a tool server that crashed mid-episode
(its call recorded as a 502 result) answers now, so the cached output of that step
meets another result and the next step is another prompt. Appending would then leave
two steps at one position - the old one and the new. `StepLog` appends what is new,
skips what is on file unchanged, and when a trajectory's step differs from the one on
file it first rewrites the file (atomically) without that trajectory's old steps from
there on: the file always holds one step per position, the one this run judged, and
a run killed at any moment leaves a file the next run reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from loragate.common.files import atomic_write_text
from loragate.formats.runfolder import GenerationWriter, drop_torn_tail
from loragate.formats.trajectories import StepRecord

Position = tuple[str, str, int, int]
"""(episode variant, adapter, sample, step)."""


def position(step: StepRecord) -> Position:
    return (step.episode_id, step.adapter, step.sample, step.step)


def _line(step: StepRecord) -> str:
    return step.model_dump_json(by_alias=True) + "\n"


class StepLog:
    """Appends a live run's steps to `path`, each position once (see the module doc).
    `old` are the steps the file holds (read by the caller); close it when done."""

    def __init__(self, path: Path, old: Iterable[StepRecord]) -> None:
        self.path = path
        self.lines: dict[Position, str] = {}
        """Every position on file and its line, in file order."""
        count = 0
        for step in old:
            count += 1
            self.lines[position(step)] = _line(step)  # a later copy wins
        self._writer: GenerationWriter | None = None
        self._checked_tail = False
        if count > len(self.lines):  # a file with a position twice (an older loragate)
            self._rewrite()

    def write(self, steps: Iterable[StepRecord]) -> None:
        """Record `steps`: new positions are appended, unchanged ones skipped, and a
        changed one replaces its trajectory's steps from there on."""
        fresh: dict[Position, str] = {}
        changed: dict[tuple[str, str, int], int] = {}
        for step in steps:
            pos, line = position(step), _line(step)
            on_file = self.lines.get(pos)
            if on_file == line:
                continue
            if on_file is not None:
                key = pos[:3]
                changed[key] = min(changed.get(key, pos[3]), pos[3])
            fresh[pos] = line
        if not fresh:
            return
        if changed:
            for pos in [p for p in self.lines if p[:3] in changed and p[3] >= changed[p[:3]]]:
                del self.lines[pos]
            self._rewrite()
        if self._writer is None:
            if not self._checked_tail:
                drop_torn_tail(self.path)  # a kill mid-line must not leave a bad line inside
                self._checked_tail = True
            self._writer = GenerationWriter(self.path)
        self._writer.append_lines(fresh.values())
        self.lines.update(fresh)

    def _rewrite(self) -> None:
        """Replace the file by the steps of `lines`; the append handle is reopened on the
        new file."""
        self.close()
        atomic_write_text(self.path, "".join(self.lines.values()))
        self._checked_tail = True

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
