"""The episodes of `loragate run`: pick them, key them like generations, run the loop
on the run's engine (with the evalset's tool servers open for the episodes that use
them), write the episode files of the run folder.

`EpisodeRunner` is the run's lazy runner with the episodes' first step folded into
the entries' batch: the first `generate` call (the entries) also carries the first
step of every trajectory, so an engine that batches (vLLM) decodes them beside the
entries instead of in a round of their own afterwards; the loop then finds them
ready (`prefetched`). A model that ends its episodes at step 1 costs no round.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal

from loragate import runners  # the registry, read at call time (tests stand in runners)
from loragate.calls.parsing import DEFAULT_STACK, ServingStack, parse_output
from loragate.common.errors import BadInput, Problem
from loragate.common.jsonl import ReadReport
from loragate.episodes.definitions import (
    Episode,
    EpisodeSet,
    ServerBackend,
    select_episodes,
)
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.loop import (
    STEP_SEPARATOR,
    USER_JOB_SUFFIX,
    KeyFn,
    SeedFn,
    first_round_jobs,
    replay_episodes,
    run_episodes,
    write_episode_results,
)
from loragate.episodes.rewards import require_rewards
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.steps_file import read_steps, read_trajectory_input
from loragate.episodes.trajectory import EpisodeContext
from loragate.evalset.load import Evalset
from loragate.formats.manifest import BASE_ADAPTER, cache_key, sample_seed
from loragate.formats.records import EvalsetRef, GenerationRecord, ParseMode
from loragate.formats.trajectories import TRAJECTORIES, EpisodesSummary, StepRecord, UserMode
from loragate.generate.config import RunConfig
from loragate.generate.embedded import EMBEDDED, embedded_name
from loragate.generate.pipeline import LazyRunner, RunPlan
from loragate.runners import PromptJob, Runner, Sink

EpisodeCount = int | Literal["all"]


def pick_episodes(evalset: Evalset, count: EpisodeCount) -> EpisodeSet:
    """The first `count` episodes of the evalset (all their variants), or all."""
    episodes = load_episodes(evalset)
    if episodes is None:
        raise BadInput(
            f"evalset {evalset.root} has no episodes.jsonl",
            [
                Problem(
                    "--episodes",
                    "no episodes to run",
                    fix="drop --episodes, or add episodes.jsonl to the evalset (docs/episodes.md)",
                )
            ],
        )
    return select_episodes(episodes, limit=None if count == "all" else count)


def run_episode_set(evalset: Evalset, config: RunConfig) -> EpisodeSet | None:
    """The episodes a run runs: the config's `episodes` (0: none), else the embedded
    model's default subset when the evalset has episodes (not for `replay`, which has
    only what its generations file holds); None for none."""
    if config.episodes is not None:
        return pick_episodes(evalset, config.episodes) if config.episodes != 0 else None

    name = embedded_name(config.model, config.embedded)
    count = EMBEDDED[name].episodes if name is not None and config.backend != "replay" else 0
    episodes = load_episodes(evalset) if count else None
    return select_episodes(episodes, limit=count) if episodes is not None else None


def context(
    evalset: Evalset,
    parse_mode: ParseMode,
    servers: ToolServers | None = None,
    stack: ServingStack = DEFAULT_STACK,
    user_mode: UserMode | None = None,
) -> EpisodeContext:
    identity = EvalsetRef(name=evalset.name, version=evalset.version, sha256=evalset.sha256)
    return EpisodeContext(
        evalset.toolset,
        evalset.policy,
        evalset.manifest.system_prompt,
        parse_mode,
        servers,
        stack=stack,
        evalset=identity,
        user_mode=user_mode,
    )


def for_user_mode(episodes: EpisodeSet, mode: UserMode) -> tuple[EpisodeSet, list[str]]:
    """The episodes that can run under the user mode `mode` (those with no user in the
    loop, and those whose `user` offers the mode), and the ids of those left out."""
    kept = [e for e in episodes.episodes if e.spec.user is None or mode in e.spec.user.modes()]
    left = sorted({e.base_id for e in episodes.episodes} - {e.base_id for e in kept})
    return dataclasses.replace(episodes, episodes=kept), left


def check_user_mode(trajectories: Path, mode: UserMode) -> None:
    """`BadInput` when the run folder already holds steps another user mode answered: a
    step is cached by its prompt, so a second mode would reuse the first one's turns."""
    if not trajectories.is_file():
        return
    found = recorded_user_mode(trajectories, read_steps(trajectories))
    if found is not None and found != mode:
        raise BadInput(
            f"{trajectories} holds trajectories whose user was `{found}`, and this run's "
            f"user is `{mode}`",
            fix=f"run with `--user {found}`, or into another folder (`--out`)",
        )


def recorded_user_mode(trajectories: Path, steps: Sequence[StepRecord]) -> UserMode | None:
    """The user mode the steps were answered by (None: no user in the loop answered);
    `BadInput` when they mix two."""
    modes = sorted({s.user for s in steps if s.user is not None})
    if len(modes) > 1:
        raise BadInput(
            f"{trajectories} mixes user modes {', '.join(modes)}",
            fix="rescore each run's own trajectories.jsonl (a run has one user mode)",
        )
    return modes[0] if modes else None


def _names(plan: RunPlan) -> list[str]:
    """The model variants of the plan: the base (when included), then the adapters."""
    base = [BASE_ADAPTER] if plan.config.include_base else []
    return base + [a.name for a in plan.setup.adapters]


def _keys(plan: RunPlan) -> tuple[KeyFn, SeedFn]:
    """Cache key and seed of an episode step, made as the entries' are."""
    config = plan.config
    manifest = plan.manifest
    sampling = config.sampling.model_dump()

    def key(sha: str, adapter: str, sample: int) -> str:
        return cache_key(
            prompt_sha256=sha,
            model_id=manifest.model.id,
            revision=manifest.model.revision,
            adapter=plan.setup.adapter(adapter),
            sampling=sampling,
            sample=sample,
        )

    def seed(sha: str, sample: int) -> int | None:
        return None if config.sampling.greedy else sample_seed(config.sampling.seed, sha, sample)

    return key, seed


class _FirstCallAlso(Runner):
    """A runner whose first `generate` also generates `extra` jobs into `got`."""

    def __init__(self, inner: Runner, extra: list[PromptJob], got: dict[str, GenerationRecord]):
        self.inner = inner
        self.name = inner.name
        self.extra = extra
        self.got = got

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        own = {j.cache_key for j in jobs}
        extra = [j for j in self.extra if j.cache_key not in own]
        self.extra = []
        if not extra:
            self.inner.generate(jobs, sink)
            return
        wanted = {j.cache_key for j in extra}

        def split(records: list[GenerationRecord]) -> None:
            self.got.update((r.cache_key, r) for r in records if r.cache_key in wanted)
            mine = [r for r in records if r.cache_key not in wanted]
            if mine:
                sink(mine)

        self.inner.generate([*jobs, *extra], split)

    def close(self) -> None:
        self.inner.close()

    def warnings(self) -> list[str]:
        return self.inner.warnings()


class EpisodeRunner(LazyRunner):
    """The run's lazy runner; its first `generate` call also makes the first step of
    every episode trajectory (see the module doc), kept in `prefetched`."""

    def __init__(self, plan: RunPlan, episodes: EpisodeSet) -> None:
        super().__init__(plan.backend, plan.setup)
        key, seed = _keys(plan)
        self.first_steps = first_round_jobs(
            episodes.episodes,
            context(plan.evalset, plan.config.parse_mode, stack=plan.stack),
            adapters=_names(plan),
            samples=plan.config.sampling.samples,
            renderer=plan.renderer,
            key=key,
            seed=seed,
            out_dir=plan.out_dir,
        )
        self.prefetched: dict[str, GenerationRecord] = {}
        self._wrapped: Runner | None = None

    def get(self) -> Runner:
        inner = super().get()
        if self._wrapped is None or getattr(self._wrapped, "inner", None) is not inner:
            self._wrapped = _FirstCallAlso(inner, self.first_steps, self.prefetched)
            self.first_steps = []
        return self._wrapped


def server_uses(episodes: Sequence[Episode]) -> dict[str, set[str]]:
    """Tool server -> the tools (the server's names of them) the episodes call on it."""
    uses: dict[str, set[str]] = {}
    for ep in episodes:
        for name, backend in ep.spec.backend.items():
            if isinstance(backend, ServerBackend) and name in ep.spec.tools:
                uses.setdefault(backend.server, set()).add(backend.tool or name)
    return uses


def preflight_episodes(plan: RunPlan, episodes: EpisodeSet) -> None:
    """Everything a run's episodes need, checked before the run writes its first file:
    every tool server they use starts (or answers) and lists their tools (its `mcp`
    extra installed, its command on PATH, its header variables set), and - for the
    replay backend - the generations file scripts every step the episodes will take."""
    require_rewards(k for e in episodes.episodes for k in e.spec.reward_kinds())
    check_user_mode(plan.out_dir / TRAJECTORIES, plan.config.user)
    uses = server_uses(episodes.episodes)
    if uses:
        evalset = plan.evalset
        with ToolServers(evalset.manifest.tool_servers, root=evalset.root) as servers:
            servers.check(uses)
    if plan.backend == "replay":
        _check_replay_scripts(plan, episodes)


def _check_replay_scripts(plan: RunPlan, episodes: EpisodeSet) -> None:
    """The replayed generations hold every step: the episodes without tool servers are
    played through once, in a scratch folder, under the run's user mode (the simulator
    and the recorded user turns are deterministic, so the run takes the same steps and
    asks its model user the same turns); an episode with a tool server (whose answers are
    not known before the run) must at least not end its script on a tool call, and under
    a model user every message of its script to the user must have the user's answer."""
    runner = runners.get_runner("replay")(plan.setup)
    simulated = [e for e in episodes.episodes if not e.spec.servers()]
    key, seed = _keys(plan)
    if simulated:
        with tempfile.TemporaryDirectory(prefix="loragate-preflight-") as tmp:
            done = plan.out_dir / TRAJECTORIES
            if done.is_file():  # steps a killed run made are not generated again
                shutil.copy(done, Path(tmp) / TRAJECTORIES)
            run_episodes(
                simulated,
                context(
                    plan.evalset,
                    plan.config.parse_mode,
                    stack=plan.stack,
                    user_mode=plan.config.user,
                ),
                adapters=_names(plan),
                samples=plan.config.sampling.samples,
                renderer=plan.renderer,
                key=key,
                generate=runner.generate,
                out_dir=Path(tmp),
                seed=seed,
            )
    for ep in episodes.episodes:
        if ep.spec.servers():
            for adapter in _names(plan):
                for sample in range(plan.config.sampling.samples):
                    _check_server_script(plan, runner, ep, adapter, sample)


def _check_server_script(
    plan: RunPlan, runner: Runner, ep: Episode, adapter: str, sample: int
) -> None:
    """One script of an episode with a tool server (see `_check_replay_scripts`)."""
    by_key = getattr(runner, "by_key", {})
    source = plan.setup.generations_file

    def record(entry_id: str, adapter: str) -> GenerationRecord | None:
        return by_key.get((entry_id, adapter, sample, None))  # type: ignore[no-any-return]

    steps = [
        n for n in range(1, ep.spec.max_steps) if record(f"{ep.id}{STEP_SEPARATOR}{n}", adapter)
    ]
    if not steps:
        return
    model_user = ep.spec.user is not None and plan.config.user == "model"
    for n in steps:
        last = record(f"{ep.id}{STEP_SEPARATOR}{n}", adapter)
        assert last is not None
        calls = parse_output(last.text, plan.config.parse_mode, stack=plan.stack).calls
        wanted = f"{ep.id}{STEP_SEPARATOR}{n}{USER_JOB_SUFFIX}"
        if model_user and not calls and record(wanted, BASE_ADAPTER) is None:
            raise BadInput(
                f"{source} lacks the model user's answer {wanted} ({BASE_ADAPTER}, sample "
                f"{sample}): step {n} of {ep.id} ({adapter}) goes to the user",
                [
                    Problem(
                        str(source),
                        f"no record for {wanted}/{BASE_ADAPTER}/{sample}",
                        fix="add the user's turn (a `stop` marker ends the call), or run "
                        "with `--user scripted` or a model backend",
                    )
                ],
            )
        if n == steps[-1] and calls:
            step = f"{ep.id}{STEP_SEPARATOR}{n + 1}"
            raise BadInput(
                f"{source} lacks step {step} ({adapter}, sample {sample}): the "
                f"script of {ep.id} ends on a tool call at step {n}, below "
                f"its max_steps {ep.spec.max_steps}",
                [
                    Problem(
                        str(source),
                        f"no record for {step}/{adapter}/{sample}",
                        fix="add the step (a final reply ends the episode), or run "
                        "those with a model backend",
                    )
                ],
            )


@contextlib.contextmanager
def _warnings(servers: ToolServers, warn: Callable[[str], None] | None) -> Iterator[None]:
    try:
        yield
    finally:
        for warning in servers.warnings():
            if warn is not None:
                warn(warning)


def run_plan_episodes(
    plan: RunPlan,
    episodes: EpisodeSet,
    runner: LazyRunner,
    *,
    on_round: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> EpisodesSummary:
    """Run the episodes for every model variant and sample of the plan; write
    `trajectories.jsonl`, `episode_results.jsonl` and `episodes_summary.json`. An
    `EpisodeRunner` hands over the first steps it made with the entries. `warn` hears
    what went wrong with the tool servers without stopping the run (crashes, deadlines,
    text that had to be mended), also when the run stops."""
    config = plan.config
    key, seed = _keys(plan)
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    evalset = plan.evalset
    said = set(runner.warnings())  # the entries' generation said these already
    # Started on first use, stopped when the loop ends (also on an error or Ctrl-C).
    with (
        ToolServers(
            evalset.manifest.tool_servers, root=evalset.root, log_dir=plan.out_dir
        ) as servers,
        _warnings(servers, warn),
    ):
        trajs = run_episodes(
            episodes.episodes,
            context(evalset, config.parse_mode, servers, plan.stack, config.user),
            adapters=_names(plan),
            samples=config.sampling.samples,
            renderer=plan.renderer,
            key=key,
            generate=lambda jobs, sink: runner.get().generate(jobs, sink),
            out_dir=plan.out_dir,
            seed=seed,
            on_round=on_round,
            prefetched=runner.prefetched if isinstance(runner, EpisodeRunner) else None,
        )
    for warning in runner.warnings():
        if warn is not None and warning not in said:
            warn(warning)
    return write_episode_results(
        trajs, plan.out_dir, episodes_sha256=episodes.sha256, k=config.sampling.samples
    )[1]


def rescore_episodes(
    trajectories: Path,
    evalset: Evalset,
    out_dir: Path,
    parse_mode: ParseMode,
    notes: list[str] | None = None,
    stack: ServingStack = DEFAULT_STACK,
) -> EpisodesSummary:
    """Judge a `trajectories.jsonl` again (offline, no model): every trajectory in it is
    replayed against the simulator (a tool server's results as recorded: no server is
    started); the episode files are written into `out_dir`. The steps must have been
    made on `evalset` (by name; another version or content is said in `notes`, with what
    had to be mended in the file). `stack`: the serving stack the steps are judged as
    (the run's, from its manifest)."""
    episodes = load_episodes(evalset)
    report = ReadReport()
    steps: list[StepRecord] = (
        read_trajectory_input(trajectories, report) if trajectories.is_file() else []
    )
    if notes is not None:
        notes += report.warnings(trajectories)
    if episodes is None or not steps:
        what = "no episodes.jsonl in the evalset" if episodes is None else "no steps"
        raise BadInput(
            f"nothing to rescore: {what}",
            fix="pass the evalset the trajectories were made with, and a trajectories.jsonl",
        )
    said = check_identity(trajectories, steps, evalset)
    if notes is not None:
        notes += said
    wanted = {s.episode_id for s in steps}
    unknown = sorted(wanted - set(episodes.by_id))
    if unknown:
        raise BadInput(
            f"{trajectories}: episode {unknown[0]!r} is not in {episodes.path}",
            fix="rescore with the evalset the run used",
        )
    adapters = list(dict.fromkeys(s.adapter for s in steps))
    samples = max(s.sample for s in steps) + 1  # below MAX_SAMPLES: the records check it
    chosen = [e for e in episodes.episodes if e.id in wanted]
    require_rewards(k for e in chosen for k in e.spec.reward_kinds())  # before any write
    out_dir.mkdir(parents=True, exist_ok=True)
    trajs = replay_episodes(
        chosen,
        context(
            evalset, parse_mode, stack=stack, user_mode=recorded_user_mode(trajectories, steps)
        ),
        steps=steps,
        adapters=adapters,
        samples=samples,
        out_dir=out_dir,
        source=trajectories,
    )
    return write_episode_results(trajs, out_dir, episodes_sha256=episodes.sha256, k=samples)[1]


def check_identity(trajectories: Path, steps: Sequence[StepRecord], evalset: Evalset) -> list[str]:
    """`BadInput` when the steps were made on another evalset (by name) or on several;
    notes when on another version of it, or when steps carry no identity (files before
    trajectories version 3)."""
    made = {
        (s.evalset.name, s.evalset.version, s.evalset.sha256)
        for s in steps
        if s.evalset is not None
    }
    if len(made) > 1:
        names = ", ".join(f"{n} {v} ({sha[:12]})" for n, v, sha in sorted(made))
        raise BadInput(
            f"{trajectories} mixes steps of {len(made)} evalsets: {names}",
            fix="rescore each run's own trajectories.jsonl, with the evalset that run used",
        )
    notes: list[str] = []
    here = EvalsetRef(name=evalset.name, version=evalset.version, sha256=evalset.sha256)
    if made:
        name, version, sha = next(iter(made))
        if name != evalset.name:
            raise BadInput(
                f"{trajectories} was made on evalset {name!r} {version}, but --evalset "
                f"{evalset.root} is {evalset.name!r} {evalset.version}: episode ids may "
                "match, the episodes are not the same",
                fix="pass the evalset the run used (its manifest.json names it)",
            )
        differs = EvalsetRef(name=name, version=version, sha256=sha).differs(here)
        if differs is not None:
            notes.append(
                f"{trajectories} was made on evalset {name}, {differs} (the run's vs "
                f"{evalset.root}); rescored with the episodes as they are now"
            )
    if any(s.evalset is None for s in steps):
        notes.append(
            f"{trajectories}: steps without an evalset identity (a file older than "
            f"trajectories version 3) were not checked against {evalset.name}"
        )
    return notes
