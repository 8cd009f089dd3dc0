"""A whole sweep: plan every run folder, generate what is missing on Ray, score, summarise.

Each run folder is planned with `plan_run` (the cache keys and layout of `loragate
run`), the pending jobs of all of them are generated on Ray (`loragate.sweep.ray_stage`),
and then every run folder is finished by `loragate.evaluation.run` itself, whose cache now
holds everything (no runner starts; no episodes, which do not run on Ray), so a sweep's
run folders and verdicts are those of `run`. `sweep.json` and `sweep.md` go
into the sweep's folder.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from loragate.common.files import atomic_write_text
from loragate.common.locking import writing
from loragate.common.third_party import third_party_output
from loragate.evaluation import run as run_one
from loragate.formats.records import GenerationRecord
from loragate.generate.pipeline import plan_run
from loragate.sweep import ray_stage
from loragate.sweep.logs import SWEEP_LOG
from loragate.sweep.ray_stage import import_ray
from loragate.sweep.spec import SweepConfig, SweepRun, run_configs, sweep_out
from loragate.sweep.summary import SweepSummary, render_sweep_markdown, summarize_sweep

SWEEP_JSON = "sweep.json"
SWEEP_MD = "sweep.md"


@dataclass
class SweepOutcome:
    runs: list[SweepRun]
    jobs: int
    cached: int
    generated: int
    summary: SweepSummary
    out: Path


def run_sweep(
    sweep: SweepConfig,
    source: str,
    *,
    on_planned: Callable[[int, int], None] | None = None,
    on_records: Callable[[list[GenerationRecord]], None] | None = None,
    quiet_third_party: Callable[[TextIO], None] | None = None,
) -> SweepOutcome:
    """Run the sweep `sweep` (read from `source`), holding every run folder's write lock.
    Everything is checked first - evalsets, adapters, the backend's extra, Ray when
    anything is to be generated - before any folder is made. `on_planned(jobs,
    cached)` is told the totals before generation starts. With `quiet_third_party`,
    what Ray and the engines write to stdout and stderr goes to `sweep.log` in the
    sweep's folder (`third_party_output`) while they run; the callback is handed the
    stream to the terminal for loragate's own progress (and None... afterwards: see
    `loragate.common.third_party`)."""
    runs = run_configs(sweep, source)
    # The pre-flight, before any folder is made: every evalset, adapter, backend extra
    # (and Ray, when anything is to be generated) is there.
    plans = [plan_run(run.config) for run in runs]
    if any(p.to_generate for p in plans):
        import_ray()
    with contextlib.ExitStack() as stack:
        for run in runs:
            stack.enter_context(writing(Path(run.config.out or "")))
        plans = [plan_run(run.config) for run in runs]  # again: another writer may have added
        jobs = sum(len(p.jobs) for p in plans)
        cached = sum(len(p.cached) for p in plans)
        capture: contextlib.AbstractContextManager[TextIO | None] = contextlib.nullcontext()
        if quiet_third_party is not None and any(p.to_generate for p in plans):
            capture = third_party_output(sweep_out(sweep) / SWEEP_LOG)
        with capture as terminal:
            if terminal is not None and quiet_third_party is not None:
                quiet_third_party(terminal)
            if on_planned is not None:
                on_planned(jobs, cached)
            generated = ray_stage.generate_on_ray(plans, sweep.cluster, on_records=on_records)
        for run in runs:  # everything is cached now: no runner starts
            run_one(run.config, episodes=False, lock=False)
    out = sweep_out(sweep)
    summary = summarize_sweep([(r.evalset, Path(r.config.out or "")) for r in runs], sweep.baseline)
    atomic_write_text(out / SWEEP_JSON, summary.model_dump_json(indent=2) + "\n")
    atomic_write_text(out / SWEEP_MD, render_sweep_markdown(summary))
    return SweepOutcome(
        runs=runs, jobs=jobs, cached=cached, generated=generated, summary=summary, out=out
    )
