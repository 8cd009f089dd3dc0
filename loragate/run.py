"""One run, from Python: `loragate.run(config) -> RunOutcome`.

`run` is what `loragate run` does, as a library call for a notebook, a script or a
training loop: plan (load and check the evalset, the model and the adapters, render
every prompt, find what the run folder's cache already holds) -> generate what is
missing -> run the episodes -> score -> write the report and the page, holding the run
folder's write lock throughout. `loragate sweep` finishes each of its run folders with
it, and the CLI adds only its console output (`RunHooks`).

    import loragate
    from loragate.generate.config import load_config

    if __name__ == "__main__":  # the vllm backend's workers import the script again
        outcome = loragate.run(load_config("configs/default.yaml"))
        print(outcome.summary.adapters["base"].overall.pass_at_1, outcome.out_dir)

`finish_run` is the last two steps on generations already made (`loragate score`):
score them and write `results.jsonl`, `report.md`, `view.html` and `summary.json`.
`evaluate` is the in-memory form for weights that are being trained: generate with an
open runner and judge, writing nothing (the training callback).

`loragate.run` is this module; it is callable, so `loragate.run(config)` and
`from loragate import run; run(config)` both call `run`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
import time
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.common.errors import BadInput
from loragate.common.locking import writing
from loragate.episodes.definitions import EpisodeSet
from loragate.episodes.run import (
    EpisodeRunner,
    preflight_episodes,
    run_episode_set,
    run_plan_episodes,
)
from loragate.evalset.load import Evalset
from loragate.formats.manifest import RunManifest
from loragate.formats.records import GenerationRecord, ResultRecord, Summary
from loragate.formats.runfolder import REPORT, VIEW, check_one_run, read_episodes_summary
from loragate.formats.trajectories import EpisodesSummary
from loragate.generate.config import RunConfig
from loragate.generate.harness_apply import AppliedVariant
from loragate.generate.pipeline import LazyRunner, RunPlan, execute_run, plan_run, run_folder
from loragate.results.report import render_markdown
from loragate.results.view.data import run_view_page
from loragate.runners import PromptJob, Runner
from loragate.score.scoring import ScoredRun, score_run, write_scored

ParseMode = Literal["strict", "repaired"]


class RunHooks(Protocol):
    """What a caller sees of a run while it goes (the CLI prints these). Subclass
    `NoHooks` to implement only some."""

    def planned(self, plan: RunPlan, episodes: EpisodeSet | None) -> None:
        """Everything is checked and planned; nothing is generated yet."""

    def generating(self, plan: RunPlan) -> AbstractContextManager[Callable[[int], None]]:
        """Around the generation of `plan.pending`: yields `advance(n)`, told of every
        batch of records written."""
        ...

    def started(self, plan: RunPlan) -> None:
        """The backend is up (only when something is generated)."""

    def model_stage(self, plan: RunPlan) -> AbstractContextManager[None]:
        """Around the model's whole part of the run - the backend's start, the
        generation, the episodes and the backend's stop - entered whether or not anything
        is generated (the CLI sends third-party output to the folder's `run.log` there)."""
        ...

    def episodes_started(self, episodes: EpisodeSet, prefetched: int) -> None:
        """The episode loop starts; `prefetched` first steps came with the entries."""

    def episode_round(self, number: int, jobs: int) -> None:
        """An episode round generates `jobs` steps."""

    def warning(self, text: str) -> None:
        """Something went wrong that did not stop the run (a tool server crashed or
        reached its deadline during a call)."""


class NoHooks:
    """`RunHooks` that do nothing."""

    def planned(self, plan: RunPlan, episodes: EpisodeSet | None) -> None:
        return None

    @contextlib.contextmanager
    def generating(self, plan: RunPlan) -> Iterator[Callable[[int], None]]:
        yield lambda n: None

    def started(self, plan: RunPlan) -> None:
        return None

    def model_stage(self, plan: RunPlan) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def episodes_started(self, episodes: EpisodeSet, prefetched: int) -> None:
        return None

    def episode_round(self, number: int, jobs: int) -> None:
        return None

    def warning(self, text: str) -> None:
        logging.getLogger("loragate").warning("%s", text)


@dataclass(frozen=True)
class RunOutcome:
    """What a run wrote and found."""

    out_dir: Path
    """The run folder (generations, results, summary, report, page, manifest)."""
    summary: Summary
    """`summary.json`: pass rates per adapter, family, fault and tag."""
    results: list[ResultRecord]
    """`results.jsonl`: every generation with its parse and verdict."""
    episodes: EpisodesSummary | None
    """`episodes_summary.json`, when the run ran episodes."""
    manifest: RunManifest
    """`manifest.json`: model, adapters, sampling, backend, self-check, warnings."""
    jobs: int
    """Generations the run asked for (entries x adapters x samples)."""
    cached: int
    """Of those, already in the run folder's cache."""
    generated: int
    """Of those, generated now (a name the cache shares with another counts once)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per stage: `plan`, `generate`, `episodes`, `score`, `report`."""


def run(
    config: RunConfig,
    *,
    config_path: Path | None = None,
    limit: int | None = None,
    families: Sequence[str] | None = None,
    episodes: bool = True,
    lock: bool = True,
    hooks: RunHooks | None = None,
    harness: Sequence[str] | None = None,
) -> RunOutcome:
    """Plan, generate, run the episodes, score, and write the run folder of `config`.

    `config_path` names the run folder when the config does not (`runs/<its stem>`);
    `limit` and `families` narrow the entries as `--limit` and `--families` do.
    `episodes=False` skips the config's episodes (a sweep generates on Ray, where no
    episode runs). `lock=False` when the caller already holds the folder's write lock.
    `harness` names the harness variants generated beside the default harness in the
    same batch (`--harness`; None: the config's `harness.run`; docs/harness.md).
    Bad input raises `BadInput` before anything is generated; a rerun reuses every
    cached generation.
    """
    folder = run_folder(config, config_path)
    held = writing(folder) if lock else contextlib.nullcontext(folder)
    with held:
        return _run(config, config_path, limit, families, episodes, hooks or NoHooks(), harness)


def _run(
    config: RunConfig,
    config_path: Path | None,
    limit: int | None,
    families: Sequence[str] | None,
    with_episodes: bool,
    hooks: RunHooks,
    harness: Sequence[str] | None = None,
) -> RunOutcome:
    timings: dict[str, float] = {}
    clock = _Clock(timings)
    plan = plan_run(
        config,
        config_path=config_path,
        limit=limit,
        families=list(families or []) or None,
        harness=list(harness) if harness is not None else None,
    )
    episodes = run_episode_set(plan.evalset, config) if with_episodes else None
    if episodes is not None:
        preflight_episodes(plan, episodes)  # servers, extras, scripts: before any file
    clock.lap("plan")
    hooks.planned(plan, episodes)
    runner = (
        LazyRunner(plan.backend, plan.setup) if episodes is None else EpisodeRunner(plan, episodes)
    )
    episode_summary = None
    with hooks.model_stage(plan):
        try:
            with hooks.generating(plan) as advance:
                generation = execute_run(
                    plan,
                    on_records=lambda records: advance(len(records)),
                    runner=runner,
                    on_started=lambda: hooks.started(plan),
                )
            if generation.replaced:
                hooks.warning(generation.replaced)
            clock.lap("generate")
            if episodes is not None:
                made = len(runner.prefetched) if isinstance(runner, EpisodeRunner) else 0
                hooks.episodes_started(episodes, made)
                episode_summary = run_plan_episodes(
                    plan, episodes, runner, on_round=hooks.episode_round, warn=hooks.warning
                )
                clock.lap("episodes")
        finally:
            runner.close()
    scored = score_run(
        plan.evalset,
        generation.records,
        config.parse_mode,
        k=config.sampling.samples,
        variants=plan.variants,
        stack=plan.stack,
    )
    clock.lap("score")
    _write(plan.out_dir, plan.evalset, scored)
    clock.lap("report")
    return RunOutcome(
        out_dir=plan.out_dir,
        summary=scored.summary,
        results=scored.results,
        episodes=episode_summary,
        manifest=generation.manifest,
        jobs=len(plan.jobs),
        cached=generation.cached,
        generated=generation.generated,
        timings=timings,
    )


def finish_run(
    evalset: Evalset,
    generations: Sequence[GenerationRecord],
    out_dir: Path,
    parse_mode: ParseMode = "strict",
    k: int | None = None,
    *,
    allow_missing: bool = False,
    source: Path | None = None,
    progress: bool | None = None,
    include_generations: bool = False,
    jobs: int = 1,
    variants: Sequence[AppliedVariant] = (),
    stack: ServingStack = DEFAULT_STACK,
) -> ScoredRun:
    """Score `generations`, summarise, and write `results.jsonl`, `summary.json`,
    `report.md` and `view.html` (`loragate view`'s page) into the run folder `out_dir`.

    Everything is checked and scored before anything is written, so bad input
    (`BadInput`) or a scorer bug (`ScorerError`) leaves `out_dir` untouched. Other files
    in an existing `out_dir` (manifest.json, generations.jsonl) are kept; scores that
    would disagree with the folder's `manifest.json` (another run's) are `BadInput`: a
    run folder holds one run. `k` is the k
    of pass^k / pass@k (default: the smallest per-entry sample count). `source` is the
    file the generations were read from, in order, so problems can name its lines.
    `include_generations` also writes the generations as `generations.jsonl` when the
    folder has none (so a run folder scored from a loose file is self-contained).
    `jobs`: processes judging the distinct outputs (see `score_records`). `stack`: the
    serving stack the outputs are judged as (see `loragate.calls.parsing`). `variants`:
    the harness variants the generations were made under (`plan.variants`).
    """
    scored = score_run(
        evalset,
        generations,
        parse_mode,
        k,
        allow_missing=allow_missing,
        source=source,
        progress=progress,
        jobs=jobs,
        variants=variants,
        stack=stack,
    )
    if out_dir.is_dir():  # a run folder holds one run
        check_one_run(out_dir, scored.summary, to_write=True)
    _write(out_dir, evalset, scored, generations if include_generations else None)
    return dataclasses.replace(scored, out_dir=out_dir)


def _write(
    out_dir: Path,
    evalset: Evalset,
    scored: ScoredRun,
    generations: Sequence[GenerationRecord] | None = None,
) -> None:
    """The scored run folder: results, the report and the page, then the summary."""
    files = {
        REPORT: render_markdown(scored.summary, scored.results, _episodes_of(out_dir)),
        VIEW: run_view_page(
            out_dir, scored.summary, [*scored.results, *scored.variant_results], evalset
        ),
    }
    write_scored(out_dir, scored, generations=generations, files=files)


def _episodes_of(out_dir: Path) -> EpisodesSummary | None:
    """The run folder's episode figures for report.md (None: no episodes, or a summary
    this loragate cannot read - the report goes without it)."""
    try:
        return read_episodes_summary(out_dir)
    except BadInput:
        return None


@dataclass(frozen=True)
class Evaluation:
    """What `evaluate` found: the summary and every scored output."""

    summary: Summary
    results: list[ResultRecord]


def evaluate(
    evalset: Evalset,
    jobs: Sequence[PromptJob],
    runner: Runner,
    *,
    parse_mode: ParseMode = "strict",
    stack: ServingStack = DEFAULT_STACK,
) -> Evaluation:
    """Generate `jobs` with the open `runner` and judge them, in memory: no run folder,
    no cache (the weights change between calls: the training callback). Entries of the
    evalset without a job are left out of the summary."""
    records: list[GenerationRecord] = []
    runner.generate(jobs, records.extend)
    scored = score_run(
        evalset, records, parse_mode, allow_missing=True, progress=False, stack=stack
    )
    return Evaluation(summary=scored.summary, results=scored.results)


@dataclass
class _Clock:
    timings: dict[str, float]
    started: float = field(default_factory=time.perf_counter)

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round(now - self.started, 3)
        self.started = now


class _CallableModule(types.ModuleType):
    """`loragate.run` is this module and, called, the function `run`."""

    def __call__(self, *args: Any, **kwargs: Any) -> RunOutcome:
        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["Evaluation", "NoHooks", "RunHooks", "RunOutcome", "evaluate", "finish_run", "run"]
