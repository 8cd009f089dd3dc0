"""Replay backend: "generates" by reading a `generations.jsonl` made elsewhere.

Lets a run folder be rebuilt (and re-scored) from generations produced on another
machine or by another tool: each job is answered by the record with the same
(entry_id, adapter, sample, harness variant). Records keep their text, finish reason
and token counts (reasoning tokens included); the cache key and prompt sha256 become the
current job's, so the rebuilt
folder is a valid cache. A job with no record is an error listing what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from loragate.common.errors import BadInput, Problem
from loragate.common.jsonl import ReadReport
from loragate.formats.records import GenerationRecord
from loragate.formats.runfolder import read_generations
from loragate.runners._runner import Backend, PromptJob, Runner, RunnerSetup, Sink


class ReplayRunner(Runner):
    """Answers jobs from a generations file."""

    name = "replay"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.report = ReadReport()
        records = read_generations(path, tolerate_torn_tail=True, report=self.report)
        self.by_key: dict[tuple[str, str, int, str | None], GenerationRecord] = {}
        for r in records:
            self.by_key.setdefault((r.entry_id, r.adapter, r.sample, r.harness), r)

    def warnings(self) -> list[str]:
        return self.report.warnings(self.path)

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        missing = [
            j for j in jobs if (j.entry_id, j.adapter, j.sample, j.harness) not in self.by_key
        ]
        if missing:
            shown = ", ".join(
                f"{j.entry_id}/{j.adapter}/{j.sample}" + (f"/{j.harness}" if j.harness else "")
                for j in missing[:10]
            )
            raise BadInput(
                f"{self.path} lacks {len(missing)} of {len(jobs)} generations",
                [
                    Problem(
                        str(self.path),
                        f"no record for (entry, adapter, sample[, harness]): {shown}"
                        + (" ..." if len(missing) > 10 else ""),
                        fix="replay a complete generations file, or run those with a model backend",
                    )
                ],
            )
        out = []
        for j in jobs:
            r = self.by_key[(j.entry_id, j.adapter, j.sample, j.harness)]
            out.append(
                j.record(
                    r.text,
                    finish_reason=r.finish_reason,
                    prompt_tokens=r.prompt_tokens,
                    completion_tokens=r.completion_tokens,
                    reasoning_tokens=r.reasoning_tokens,
                )
            )
        sink(out)


def create(setup: RunnerSetup) -> Runner:
    """The replay runner for a checked run setup."""
    if setup.generations_file is None:
        raise BadInput(
            "the replay backend needs a generations file",
            [Problem("config", "not set", field="generations", fix="set `generations: FILE`")],
        )
    return ReplayRunner(setup.generations_file)


class ReplayBackend(Backend):
    """`backend: replay`: the generations of a file (`generations`), no model."""

    name: ClassVar[str] = "replay"

    def create(self, setup: RunnerSetup) -> Runner:
        return create(setup)
