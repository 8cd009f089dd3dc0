"""The episode loop over a runner: generate, parse, run the calls, append the
results, generate again, until every trajectory has a final reply or hits its cap.

Each round hands every live trajectory (episode variant x adapter x sample) to one
`generate` call, so a vLLM engine batches them all with a per-prompt LoRA request.
Every step is appended to `trajectories.jsonl` (flushed and fsynced) as it is
judged, each (episode, adapter, sample, step) once (`StepLog`: a step that took another
path than the one on file replaces it). The file is the cache: a step whose cache key (prompt, model, adapter,
sampling, sample) is already there is taken from it, so a killed run resumes at the
step it reached, and a rerun with nothing changed generates nothing. The simulator
is deterministic, so replaying the recorded outputs rebuilds every trajectory; this
is how `rescore` judges a trajectories file offline (matched by episode, adapter,
sample and step). Tools answered by a tool server are not called then: their recorded
results are replayed.

A tool server has one state for the whole run, so trajectories that use a server take
their steps one trajectory at a time (per server, in order); the others are batched as
before.

`first_round_jobs` gives the first step of every trajectory ahead
of the loop, so a caller can generate them in the entries' batch and hand the
records back as `prefetched`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from loragate.calls.parsing import parse_output
from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.files import atomic_write_json, atomic_write_text
from loragate.common.jsonl import ReadReport, read_objects
from loragate.episodes.definitions import Episode
from loragate.episodes.stats import summarize_episodes
from loragate.episodes.step_log import StepLog
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.formats.records import GenerationRecord, Verdict
from loragate.formats.runfolder import dump_jsonl, read_jsonl
from loragate.formats.trajectories import (
    EPISODE_RESULTS,
    EPISODES_SUMMARY,
    TRAJECTORIES,
    EpisodesSummary,
    StepRecord,
    TrajectoryResult,
)
from loragate.generate.prompt import ChatRenderer, prompt_sha256
from loragate.runners import PromptJob

Generate = Callable[[Sequence[PromptJob], Callable[[list[GenerationRecord]], None]], None]
"""`Runner.generate`: jobs in, records handed to the sink as they finish."""
KeyFn = Callable[[str, str, int], str]
"""(prompt sha256, adapter name, sample) -> cache key."""
SeedFn = Callable[[str, int], "int | None"]

_Jobs = dict[str, tuple[PromptJob, list[Trajectory]]]
"""Cache key -> the job and the trajectories waiting for its output."""
STEP_SEPARATOR = "@"
"""Job ids are `EPISODE@STEP`."""


def read_steps(path: Path, report: ReadReport | None = None) -> list[StepRecord]:
    """Every step of a `trajectories.jsonl` (a torn last line from a kill dropped; text
    that is not UTF-8 or holds lone surrogates mended, counted in `report`)."""
    if not path.is_file():
        return []
    return read_jsonl(path, StepRecord, tolerate_torn_tail=True, report=report)


HAND_ADAPTER = "hand"
"""The adapter name of a hand-written trajectory that names none."""


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
    fix = 'write {"episode_id": ID, "outputs": [...]} or a run\'s trajectories.jsonl line'
    for lineno, obj in read_objects(
        path,
        what="trajectories file",
        report=report,
        tolerate_torn_tail=True,
        problems=problems,
    ):
        if "outputs" in obj:
            outputs = obj.get("outputs")
            if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
                problems.append(
                    Problem(
                        str(path),
                        "`outputs` must be a list of texts",
                        line=lineno,
                        field="outputs",
                        fix=fix,
                    )
                )
                continue
            extra = sorted(set(obj) - {"episode_id", "outputs", "adapter", "sample"})
            if extra:
                problems.append(
                    Problem(
                        str(path),
                        f"unknown field {extra[0]!r}",
                        line=lineno,
                        field=extra[0],
                        fix=fix,
                    )
                )
                continue
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
        else:
            steps = [obj]
        for raw in steps:
            if "parse" not in raw or "verdict" not in raw:
                text = raw.get("text")
                raw = {
                    "adapter": HAND_ADAPTER,
                    "sample": 0,
                    **raw,
                    "parse": parse_output(text if isinstance(text, str) else "", "strict"),
                    "verdict": Verdict.ok(),
                }
            try:
                out.append(StepRecord.model_validate(raw))
            except ValidationError as exc:
                problems += validation_problems(exc, str(path), line=lineno, fix=fix)
    if problems:
        raise BadInput(f"{path}: {len(problems)} bad line(s)", problems)
    return out


def live_trajectories(trajs: Sequence[Trajectory]) -> list[Trajectory]:
    """The unfinished trajectories that may step this round: every one on simulated
    tools, and per tool server only the first unfinished one that uses it."""
    held: set[str] = set()
    out = []
    for t in trajs:
        if t.done:
            continue
        servers = t.episode.spec.servers()
        if not servers & held:
            out.append(t)
        held |= servers
    return out


def _prompt(traj: Trajectory, renderer: ChatRenderer | None) -> str:
    if renderer is not None:
        return renderer.render_prompt(traj.chat_messages(), traj.tools())
    request = {"messages": traj.chat_messages("str"), "tools": traj.tools()}
    return json.dumps(request, sort_keys=True, ensure_ascii=False)


def _next_prompt(t: Trajectory, renderer: ChatRenderer | None, key: KeyFn) -> tuple[str, str, str]:
    """(prompt, its sha256, cache key) of a trajectory's next step."""
    prompt = _prompt(t, renderer)
    sha = prompt_sha256(prompt)
    return prompt, sha, key(sha, t.adapter, t.sample)


def _step_job(t: Trajectory, prompt: str, sha: str, ck: str, seed: SeedFn | None) -> PromptJob:
    """The job of a trajectory's next step (its prompt, sha256 and cache key made)."""
    return PromptJob(
        entry_id=f"{t.episode.id}{STEP_SEPARATOR}{len(t.steps) + 1}",
        adapter=t.adapter,
        sample=t.sample,
        prompt=prompt,
        messages=t.chat_messages("str"),
        tools=t.tools(),  # a server is sent the episode's tools, not the evalset's
        prompt_sha256=sha,
        cache_key=ck,
        seed=seed(sha, t.sample) if seed is not None else None,
    )


def first_round_jobs(
    episodes: Sequence[Episode],
    ctx: EpisodeContext,
    *,
    adapters: Sequence[str],
    samples: int,
    renderer: ChatRenderer | None,
    key: KeyFn,
    seed: SeedFn | None = None,
    out_dir: Path,
) -> list[PromptJob]:
    """The first step of every (episode, adapter, sample) not already in the run
    folder's `trajectories.jsonl`, one job per cache key (variants share them)."""
    cached = {s.cache_key for s in read_steps(out_dir / TRAJECTORIES) if s.step == 1}
    jobs: dict[str, PromptJob] = {}
    for ep in episodes:
        for adapter in adapters:
            for sample in range(samples):
                t = Trajectory(ep, ctx, adapter, sample)
                prompt, sha, ck = _next_prompt(t, renderer, key)
                if ck not in cached and ck not in jobs:
                    jobs[ck] = _step_job(t, prompt, sha, ck, seed)
    return list(jobs.values())


def run_episodes(
    episodes: Sequence[Episode],
    ctx: EpisodeContext,
    *,
    adapters: Sequence[str],
    samples: int,
    renderer: ChatRenderer | None,
    key: KeyFn,
    generate: Generate | None,
    out_dir: Path,
    seed: SeedFn | None = None,
    on_round: Callable[[int, int], None] | None = None,
    source: Path | None = None,
    prefetched: Mapping[str, GenerationRecord] | None = None,
) -> list[Trajectory]:
    """Run every (episode, adapter, sample) to its end; returns the trajectories.

    With `generate=None` nothing is generated: every step must be in `source` (default
    the run folder's `trajectories.jsonl`), matched by episode, adapter, sample and
    step (the replay), and `trajectories.jsonl` is rewritten with fresh verdicts.
    `on_round(round, jobs)` sees each round that generates, before it does. `prefetched` holds
    generations made already, by cache key (e.g. `first_round_jobs` generated with
    the entries): a job found there is not generated again.
    """
    path = out_dir / TRAJECTORIES
    source = source if source is not None else path
    # a source given to rescore was read and its mending said by the caller already
    old = read_steps(source) if source == path else read_trajectory_input(source, ReadReport())
    by_key = {s.cache_key: s for s in old if s.cache_key}
    by_pos = {(s.episode_id, s.adapter, s.sample, s.step): s for s in old}
    trajs = [
        Trajectory(ep, ctx, adapter, sample)
        for ep in episodes
        for adapter in adapters
        for sample in range(samples)
    ]
    log = StepLog(path, old) if generate is not None else None

    def write(steps: list[StepRecord]) -> None:
        if log is not None:
            log.write(steps)

    try:
        round_no = 0
        while True:
            live = live_trajectories(trajs)
            if not live:
                break
            round_no += 1
            # Trajectories with the same prompt (a fault variant before its fault,
            # greedy samples) share one job: the same cache key is the same generation.
            jobs: _Jobs = {}
            reused: list[StepRecord] = []
            for t in live:
                while not t.done:
                    prompt, sha, ck = _next_prompt(t, renderer, key)
                    step = len(t.steps) + 1
                    pos = (t.episode.id, t.adapter, t.sample, step)
                    cached = by_pos.get(pos) if generate is None else by_key.get(ck)
                    if cached is None:
                        break
                    replay = generate is None  # keep what the run recorded
                    record = t.advance(
                        cached.text,
                        prompt_sha256=cached.prompt_sha256 if replay else sha,
                        cache_key=cached.cache_key if replay else ck,
                        finish_reason=cached.finish_reason,
                        recorded=cached.results if replay else None,
                    )
                    if generate is not None:  # the log keeps what is on file unchanged
                        reused.append(record)
                if t.done:
                    continue
                if generate is None:
                    raise BadInput(
                        f"{source} lacks step {len(t.steps) + 1} of {t.episode.id}/{t.adapter}/"
                        f"{t.sample}",
                        [
                            Problem(
                                str(source),
                                "the trajectory stops before its end",
                                fix="rescore a complete trajectories file (or finish the run)",
                            )
                        ],
                    )
                if ck in jobs:
                    jobs[ck][1].append(t)
                    continue
                jobs[ck] = (_step_job(t, prompt, sha, ck, seed), [t])
            write(reused)
            if not jobs or generate is None:
                continue
            ready = [prefetched[ck] for ck in jobs if prefetched and ck in prefetched]
            if on_round is not None and len(ready) < len(jobs):
                on_round(round_no, len(jobs) - len(ready))

            def sink(records: list[GenerationRecord], jobs: _Jobs = jobs) -> None:
                fresh: list[StepRecord] = []
                for r in records:
                    found = jobs.pop(r.cache_key or "", None)
                    if found is None:
                        continue  # a duplicate or a job this round did not ask for
                    job, waiting = found
                    for t in waiting:
                        fresh.append(
                            t.advance(
                                r.text,
                                prompt_sha256=job.prompt_sha256,
                                cache_key=job.cache_key,
                                finish_reason=r.finish_reason,
                            )
                        )
                    by_key[job.cache_key] = fresh[-1]
                write(fresh)

            if ready:
                sink(ready)
            if jobs:
                generate([job for job, _ in jobs.values()], sink)
            if jobs:
                first = next(iter(jobs.values()))[0]
                raise RuntimeError(
                    f"the runner returned no generation for {len(jobs)} episode step(s), "
                    f"e.g. {first.entry_id}/{first.adapter}/{first.sample}"
                )
    finally:
        if log is not None:
            log.close()
    if generate is None:
        atomic_write_text(path, dump_jsonl(s for t in trajs for s in t.steps))
    return trajs


def write_episode_results(
    trajs: Sequence[Trajectory], out_dir: Path, *, episodes_sha256: str, k: int
) -> tuple[list[TrajectoryResult], EpisodesSummary]:
    """Score the finished trajectories; write `episode_results.jsonl` and
    `episodes_summary.json`."""
    results = [t.result() for t in trajs]
    summary = summarize_episodes(results, episodes_sha256=episodes_sha256, k=k)
    atomic_write_text(out_dir / EPISODE_RESULTS, dump_jsonl(results))
    atomic_write_json(out_dir / EPISODES_SUMMARY, summary.model_dump(mode="json", by_alias=True))
    return results, summary
