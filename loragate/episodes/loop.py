"""The episode loop over a runner: generate, parse, run the calls, append the
results, generate again, until every trajectory has a final reply or hits its cap.

Each round hands every live trajectory (episode variant x adapter x sample) to one
`generate` call, so a vLLM engine batches them all with a per-prompt LoRA request.
Every step is appended to `trajectories.jsonl` (flushed and fsynced) as it is
judged, each (episode, adapter, sample, step) once (`StepLog`: a step that took another
path than the one on file replaces it). The file is the cache: a step whose cache key
(prompt, model, adapter, sampling, sample) is already there is taken from it, so a
killed run resumes at the step it reached, and a rerun with nothing changed generates nothing. The simulator
is deterministic, so replaying the recorded outputs rebuilds every trajectory:
`replay_episodes` is how `rescore` judges a trajectories file offline (matched by
episode, adapter, sample and step); tools answered by a tool server are not called
then, their recorded results are replayed. Both walk a trajectory the same way
(`Trajectory.advance`, one output a step); the files are read by
`loragate.episodes.steps_file`.

A shared tool server (MCP, HTTP) has one state for the whole run, so trajectories that
use one take their steps one trajectory at a time (per server, in order); the others -
simulated tools, and isolated servers (tau2: an environment per trajectory) - are
batched.

`first_round_jobs` gives the first step of every trajectory ahead
of the loop, so a caller can generate them in the entries' batch and hand the
records back as `prefetched`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from loragate.common.errors import BadInput, Problem
from loragate.common.files import atomic_write_json, atomic_write_text
from loragate.episodes.definitions import Episode
from loragate.episodes.stats import summarize_episodes
from loragate.episodes.step_log import StepLog, position
from loragate.episodes.steps_file import read_steps
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.episodes.users import model_user_messages, recorded_turn
from loragate.formats.manifest import BASE_ADAPTER
from loragate.formats.records import GenerationRecord
from loragate.formats.runfolder import dump_jsonl
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
USER_JOB_SUFFIX = ":user"
"""A model user's job is `EPISODE@STEP:user`: its answer to that step."""


def live_trajectories(trajs: Sequence[Trajectory]) -> list[Trajectory]:
    """The unfinished trajectories that may step this round: every one on simulated
    tools or isolated servers (a tau2 environment of its own), and per shared tool server
    only the first unfinished one that uses it."""
    held: set[str] = set()
    out = []
    for t in trajs:
        if t.done:
            continue
        pool = t.ctx.servers
        servers = {s for s in t.episode.spec.servers() if pool is None or not pool.isolated(s)}
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


def _user_job(
    t: Trajectory, renderer: ChatRenderer | None, key: KeyFn, seed: SeedFn | None
) -> PromptJob:
    """The job of a model user's answer to a trajectory's held step: the user's chat
    (`model_user_messages`) on the engine's base model (no adapter), seeded by its
    prompt and the trajectory's sample like any step."""
    spec, held = t.episode.spec.user, t.awaiting_user
    assert spec is not None and held is not None  # only held trajectories get here
    said = [*t.messages, {"role": "assistant", "content": held.answer}]
    messages = model_user_messages(spec, said)
    if renderer is not None:
        prompt = renderer.render_prompt(messages)
    else:
        prompt = json.dumps({"messages": messages}, sort_keys=True, ensure_ascii=False)
    sha = prompt_sha256(prompt)
    return PromptJob(
        entry_id=f"{t.episode.id}{STEP_SEPARATOR}{len(t.steps)}{USER_JOB_SUFFIX}",
        adapter=BASE_ADAPTER,
        sample=t.sample,
        prompt=prompt,
        messages=messages,
        tools=[],
        prompt_sha256=sha,
        cache_key=key(sha, BASE_ADAPTER, t.sample),
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


class _StepCache:
    """The run folder's `trajectories.jsonl` as the loop's cache: the steps made so far by
    cache key (those of an earlier run, then every step as it is judged), written through
    a `StepLog` (each position once: a step that took another path replaces the old)."""

    def __init__(self, path: Path) -> None:
        old = read_steps(path)
        self.by_key = {s.cache_key: s for s in old if s.cache_key}
        self._log = StepLog(path, old)

    def add(self, steps: Sequence[StepRecord]) -> None:
        """Record `steps` (the log skips those on file unchanged); index them by key."""
        for s in steps:
            if s.cache_key:
                self.by_key[s.cache_key] = s
        self._log.write(steps)

    def close(self) -> None:
        self._log.close()


class _Round:
    """One round's generations: cache key -> the job and the trajectories waiting for
    its output (trajectories with the same prompt - a fault variant before its fault,
    greedy samples - share one job)."""

    def __init__(self) -> None:
        self.jobs: _Jobs = {}
        self.user_keys: set[str] = set()
        """The jobs that are a model user's answers."""

    def wait(self, t: Trajectory, job: PromptJob, *, user: bool = False) -> None:
        if user:
            self.user_keys.add(job.cache_key)
        if job.cache_key in self.jobs:
            self.jobs[job.cache_key][1].append(t)
        else:
            self.jobs[job.cache_key] = (job, [t])

    def finish(self, records: Sequence[GenerationRecord], cache: _StepCache) -> None:
        """Advance every trajectory waiting for one of `records`; the new steps go to
        `cache` (a record this round did not ask for, or a second one, is ignored)."""
        fresh: list[StepRecord] = []
        for r in records:
            found = self.jobs.pop(r.cache_key or "", None)
            if found is None:
                continue
            job, waiting = found
            if job.cache_key in self.user_keys:
                fresh += [t.hear_user(r.text) for t in waiting]
                continue
            for t in waiting:
                step = t.advance(
                    r.text,
                    prompt_sha256=job.prompt_sha256,
                    cache_key=job.cache_key,
                    finish_reason=r.finish_reason,
                )
                if t.awaiting_user is None:  # a held step is written once it is answered
                    fresh.append(step)
        cache.add(fresh)

    def check_done(self) -> None:
        if self.jobs:
            first = next(iter(self.jobs.values()))[0]
            raise RuntimeError(
                f"the runner returned no generation for {len(self.jobs)} episode step(s), "
                f"e.g. {first.entry_id}/{first.adapter}/{first.sample}"
            )


def _trajectories(
    episodes: Sequence[Episode], ctx: EpisodeContext, adapters: Sequence[str], samples: int
) -> list[Trajectory]:
    """One trajectory per (episode variant, adapter, sample), in that order."""
    return [
        Trajectory(ep, ctx, adapter, sample)
        for ep in episodes
        for adapter in adapters
        for sample in range(samples)
    ]


def _take_cached(
    t: Trajectory, renderer: ChatRenderer | None, key: KeyFn, cache: _StepCache
) -> tuple[list[StepRecord], tuple[str, str, str]]:
    """Advance `t` through every step the cache already holds; the steps taken and the
    (prompt, sha256, cache key) of the next one."""
    taken: list[StepRecord] = []
    while True:
        prompt, sha, ck = _next_prompt(t, renderer, key)
        cached = cache.by_key.get(ck)
        if cached is not None and cached.user not in (None, t.ctx.user_mode):
            cached = None  # answered by another user mode: not this run's step
        if t.done or cached is None:
            return taken, (prompt, sha, ck)
        taken.append(
            t.advance(
                cached.text,
                prompt_sha256=sha,
                cache_key=ck,
                finish_reason=cached.finish_reason,
                user_turn=recorded_turn(cached),
            )
        )


def run_episodes(
    episodes: Sequence[Episode],
    ctx: EpisodeContext,
    *,
    adapters: Sequence[str],
    samples: int,
    renderer: ChatRenderer | None,
    key: KeyFn,
    generate: Generate,
    out_dir: Path,
    seed: SeedFn | None = None,
    on_round: Callable[[int, int], None] | None = None,
    prefetched: Mapping[str, GenerationRecord] | None = None,
) -> list[Trajectory]:
    """Run every (episode, adapter, sample) to its end on `generate`; returns the
    trajectories. A step whose cache key the run folder's `trajectories.jsonl` holds is
    taken from it; every new step is appended to it as it is judged. `on_round(round,
    jobs)` sees each round that generates, before it does. `prefetched` holds
    generations made already, by cache key (e.g. `first_round_jobs` generated with the
    entries): a job found there is not generated again."""
    trajs = _trajectories(episodes, ctx, adapters, samples)
    cache = _StepCache(out_dir / TRAJECTORIES)
    with contextlib.closing(cache):
        round_no = 0
        while live := live_trajectories(trajs):
            round_no += 1
            this_round = _Round()
            for t in live:
                if t.awaiting_user is not None:
                    this_round.wait(t, _user_job(t, renderer, key, seed), user=True)
                    continue
                taken, (prompt, sha, ck) = _take_cached(t, renderer, key, cache)
                cache.add(taken)
                if not t.done:
                    this_round.wait(t, _step_job(t, prompt, sha, ck, seed))
            if not this_round.jobs:
                continue
            ready = [prefetched[ck] for ck in this_round.jobs if prefetched and ck in prefetched]
            if on_round is not None and len(ready) < len(this_round.jobs):
                on_round(round_no, len(this_round.jobs) - len(ready))
            this_round.finish(ready, cache)
            if this_round.jobs:
                jobs = [job for job, _ in this_round.jobs.values()]
                generate(jobs, functools.partial(this_round.finish, cache=cache))
            this_round.check_done()
    return trajs


def replay_episodes(
    episodes: Sequence[Episode],
    ctx: EpisodeContext,
    *,
    steps: Sequence[StepRecord],
    adapters: Sequence[str],
    samples: int,
    out_dir: Path,
    source: Path,
) -> list[Trajectory]:
    """Judge recorded steps again: every (episode, adapter, sample) is replayed from
    `steps` (read from `source`), matched by episode, adapter, sample and step, against
    the simulator (a tool server's results as recorded); nothing is generated.
    `trajectories.jsonl` in `out_dir` is written anew with the fresh verdicts."""
    by_position = {position(s): s for s in steps}
    trajs = _trajectories(episodes, dataclasses.replace(ctx, replay=True), adapters, samples)
    for t in trajs:
        while not t.done:
            at = (t.episode.id, t.adapter, t.sample, len(t.steps) + 1)
            recorded = by_position.get(at)
            if recorded is None:
                raise BadInput(
                    f"{source} lacks step {at[3]} of {t.episode.id}/{t.adapter}/{t.sample}",
                    [
                        Problem(
                            str(source),
                            "the trajectory stops before its end",
                            fix="rescore a complete trajectories file (or finish the run)",
                        )
                    ],
                )
            t.advance(
                recorded.text,
                prompt_sha256=recorded.prompt_sha256,
                cache_key=recorded.cache_key,
                finish_reason=recorded.finish_reason,
                recorded=recorded.results,
                user_turn=recorded_turn(recorded),
            )
            if t.awaiting_user is not None:
                raise BadInput(
                    f"{source}: step {at[3]} of {t.episode.id}/{t.adapter}/{t.sample} "
                    "went to the user, and the file holds no user turn for it (a replay "
                    "makes up no user turn)",
                    fix="rescore the run's own trajectories.jsonl as it wrote it (each step "
                    "the user answered keeps `user`, `user_reply`, `user_stop`), or run the "
                    "episode again",
                )
    atomic_write_text(out_dir / TRAJECTORIES, dump_jsonl(s for t in trajs for s in t.steps))
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
