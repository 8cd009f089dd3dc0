"""The run stage: `run(config) -> RunOutcome`, the whole of `loragate run` as one call
(`loragate.run` is this function).

`run` is what `loragate run` does, as a library call for a notebook, a script or a
training loop: plan (load and check the evalset, the model and the adapters, render
every prompt, find what the run folder's cache already holds) -> generate what is
missing -> run the episodes -> score -> write the report and the page, holding the run
folder's write lock throughout. `loragate sweep` finishes each of its run folders with
it, and the CLI adds only its console output (`RunHooks`).

    import loragate

    if __name__ == "__main__":  # the vllm backend's workers import the script again
        outcome = loragate.run(loragate.load_config("configs/default.yaml"))
        print(outcome.summary.adapters["base"].overall.pass_at_1, outcome.out_dir)

`finish_run` is the last two steps on generations already made (`loragate score`):
score them and write `results.jsonl`, `report.md`, `view.html` and `summary.json`.
`evaluate_jobs` is the in-memory form for weights that are being trained: generate with
an open runner and judge, writing nothing (the training callback).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Literal, Protocol

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.common import arguments as arg
from loragate.common.errors import BadInput, Problem
from loragate.common.jsonl import ReadReport
from loragate.common.locking import writing
from loragate.episodes.definitions import EpisodeSet
from loragate.episodes.stage import (
    EpisodeRunner,
    for_user_mode,
    preflight_episodes,
    run_episode_set,
    run_plan_episodes,
)
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.manifest import RunManifest
from loragate.formats.records import (
    DEFAULT_PARSE_MODE,
    GenerationRecord,
    ParseMode,
    ResultRecord,
    Summary,
)
from loragate.formats.runfolder import (
    REPORT,
    VIEW,
    check_one_run,
    clear_run,
    other_run_in,
    read_episodes_summary,
    read_generations,
    refuse_foreign_folder,
)
from loragate.formats.trajectories import EpisodesSummary
from loragate.generate.config import RunConfig, load_config
from loragate.generate.harness_apply import AppliedVariant
from loragate.generate.pipeline import LazyRunner, RunPlan, execute_run, plan_run, run_folder
from loragate.results.report import render_markdown
from loragate.results.runs import LoadedRun, side_of
from loragate.results.view.page_data import run_view_page
from loragate.runners import PromptJob, Runner
from loragate.score.scoring import ScoredRun, score_run, write_scored


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

    def side(
        self, adapter: str | None = None, training_log: str | PathLike[str] | None = None
    ) -> LoadedRun:
        """One adapter's side of the run (None: its only adapter), with the training
        log of that round, as `compare_runs` and `evaluate_gate` read it - in memory."""
        arg.check_arguments(
            "RunOutcome.side",
            arg.instance("adapter", adapter, str, optional=True),
            arg.path("training_log", training_log, optional=True),
        )
        return side_of(self, adapter, training_log)


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
    arg.check_arguments(
        "loragate.run",
        arg.instance("config", config, RunConfig, loader="load_config"),
        arg.path("config_path", config_path, optional=True),
        arg.number("limit", limit),
        arg.names("families", families),
        arg.flag("episodes", episodes),
        arg.flag("lock", lock),
        arg.names("harness", harness),
    )
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
        episodes, left = for_user_mode(episodes, config.user)
        if left:
            hooks.warning(
                f"{len(left)} episode(s) have no {config.user} user and are left out "
                f"(`--user`): {', '.join(left[:8])}{' ...' if len(left) > 8 else ''}"
            )
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
    parse_mode: ParseMode = DEFAULT_PARSE_MODE,
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


def evaluate(
    model: str | None = None,
    *,
    adapters: Mapping[str, str | PathLike[str]] | None = None,
    evalset: str | PathLike[str] | None = None,
    out: str | PathLike[str] | None = None,
    backend: str | None = None,
    limit: int | None = None,
    families: Sequence[str] | None = None,
    episodes: int | Literal["all"] | None = None,
    samples: int | None = None,
    temperature: float | None = None,
    max_new_tokens: int | None = None,
    include_base: bool | None = None,
    parse_mode: ParseMode | None = None,
    harness: Sequence[str] | None = None,
    generations: str | PathLike[str] | None = None,
    config: str | PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    hooks: RunHooks | None = None,
) -> RunOutcome:
    """A run from plain arguments: builds the run config and calls `run`.

    `model` is the base model (a local folder or a hub id; None: the config's, by default
    the embedded SmolLM2-135M), `adapters` maps a name to an adapter folder, `evalset` is
    an evalset folder (default: the bundled agent20), `out` the run folder (default
    `runs/<name>`). `backend` is `vllm`, `hf`, `openai`, `replay`, a plugin's or `auto`;
    `generations` is the replay backend's `generations.jsonl`. `limit` and `families`
    narrow the entries, `episodes` is a count of episodes (0: none) or `all`, `samples`,
    `temperature` and `max_new_tokens` set the sampling, `include_base` whether the bare
    base model is scored too, `parse_mode` `served`, `strict` or `lenient`, `harness`
    the harness variants beside the default one. `config` is a run config file the
    arguments override; `overrides` sets any other field by its dotted name
    (`{"vllm.max_model_len": 8192}`). An argument left at None keeps the config's value.
    Raises `BadInput` naming every problem before anything is generated.
    """
    arg.check_arguments(
        "loragate.evaluate",
        arg.instance("model", model, str, optional=True),
        arg.mapping("adapters", adapters, (str, PathLike), example='{"round1": "out/round1"}'),
        *(arg.path(n, v, optional=True) for n, v in _paths(evalset, out, generations, config)),
        arg.instance("backend", backend, str, optional=True),
        arg.number("limit", limit),
        arg.names("families", families),
        arg.instance("episodes", episodes, (int, str), optional=True),
        arg.number("samples", samples),
        arg.number("temperature", temperature, (float, int)),
        arg.number("max_new_tokens", max_new_tokens),
        arg.flag("include_base", include_base, optional=True),
        arg.instance("parse_mode", parse_mode, str, optional=True),
        arg.names("harness", harness),
        arg.mapping("overrides", overrides, example='{"vllm.max_model_len": 8192}'),
    )
    given: dict[str, Any] = {
        "model": model,
        "adapters": {name: str(path) for name, path in adapters.items()} if adapters else None,
        "evalset": _text(evalset),
        "out": _text(out),
        "backend": backend,
        "episodes": episodes,
        "sampling.samples": samples,
        "sampling.temperature": temperature,
        "sampling.max_new_tokens": max_new_tokens,
        "include_base": include_base,
        "parse_mode": parse_mode,
        "generations": _text(generations),
    }
    path = Path(config) if config is not None else None
    cfg = load_config(path, {**given, **(overrides or {})})
    return run(cfg, config_path=path, limit=limit, families=families, hooks=hooks, harness=harness)


def _paths(evalset: Any, out: Any, generations: Any, config: Any) -> list[tuple[str, Any]]:
    return [("evalset", evalset), ("out", out), ("generations", generations), ("config", config)]


def _text(path: str | PathLike[str] | None) -> str | None:
    return None if path is None else str(path)


def score_generations(
    generations: str | PathLike[str],
    evalset: str | PathLike[str],
    out: str | PathLike[str],
    *,
    parse_mode: ParseMode = DEFAULT_PARSE_MODE,
    k: int | None = None,
    allow_missing: bool = False,
    jobs: int = 1,
    stack: ServingStack = DEFAULT_STACK,
    warn: Callable[[str], None] | None = None,
    overwrite: bool = False,
) -> ScoredRun:
    """Score a `generations.jsonl` made anywhere against an evalset folder into the run
    folder `out` (what `loragate score` does): `results.jsonl`, `summary.json`,
    `report.md`, `view.html`, and the generations when `out` has none yet.

    `out` holds one run: the same generations of the same evalset are scored again in
    place; another run there is `BadInput`, unless `overwrite` removes it first.

    Everything is read and checked before anything is written, under the folder's write
    lock. The samples of harness variants are left out (a run with the config and
    `harness` scores them). `warn` is told of what was mended or left out (default: the
    `loragate` logger). Raises `BadInput` on bad input, `ScorerError` when a family
    scorer crashes; either way `out` is left as it was.
    """
    arg.check_arguments(
        "loragate.score_generations",
        arg.path("generations", generations),
        arg.path("evalset", evalset),
        arg.path("out", out),
        arg.instance("parse_mode", parse_mode, str),
        arg.number("k", k),
        arg.flag("allow_missing", allow_missing),
        arg.number("jobs", jobs, optional=False),
        arg.instance("stack", stack, ServingStack),
        arg.flag("overwrite", overwrite),
    )
    say = warn or logging.getLogger("loragate").warning
    source, folder = Path(generations), Path(out)
    loaded = load_evalset(Path(evalset))
    mended = ReadReport()
    records = read_generations(source, report=mended)
    if not records:
        raise BadInput(
            f"{source} holds no generation records",
            [Problem(str(source), "empty", fix="generate some with `loragate run`")],
        )
    for warning in mended.warnings(source):
        say(warning)
    variants = sorted({r.harness for r in records if r.harness is not None})
    if variants:  # their prompts are built from a run config: `loragate run` scores them
        records = [r for r in records if r.harness is None]
        say(
            f"the samples of harness variants {', '.join(variants)} are left out: "
            "`loragate run` with the run's config and --harness scores them (a rerun reuses "
            "every cached generation; docs/harness.md)"
        )
    if folder.exists() and not folder.is_dir():
        raise BadInput(
            f"--out {folder} exists and is not a folder",
            [Problem(str(folder), "a file, not a run folder", fix="pass a run folder path")],
        )
    # before the lock: nothing is written; --overwrite replaces a run, and there is none
    refuse_foreign_folder(folder, "score --overwrite" if overwrite else "score")
    with writing(folder):
        other = other_run_in(folder, source, records, loaded.name, loaded.sha256)
        if other and not overwrite:
            raise BadInput(
                f"--out {folder} holds another run ({other}); scoring into it would mix two runs",
                fix=f"pass a new --out folder, or add --overwrite to replace the run in {folder}",
            )
        if other:
            say(f"--overwrite: removed {folder}'s run ({', '.join(clear_run(folder))})")
        return finish_run(
            loaded,
            records,
            folder,
            parse_mode,
            k,
            allow_missing=allow_missing,
            source=source,
            include_generations=True,
            jobs=jobs,
            stack=stack,
        )


@dataclass(frozen=True)
class Evaluation:
    """What `evaluate_jobs` found: the summary and every scored output."""

    summary: Summary
    results: list[ResultRecord]


def evaluate_jobs(
    evalset: Evalset,
    jobs: Sequence[PromptJob],
    runner: Runner,
    *,
    parse_mode: ParseMode = DEFAULT_PARSE_MODE,
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


__all__ = [
    "Evaluation",
    "NoHooks",
    "RunHooks",
    "RunOutcome",
    "evaluate",
    "evaluate_jobs",
    "finish_run",
    "run",
    "score_generations",
]
