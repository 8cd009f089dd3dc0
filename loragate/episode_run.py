"""The episodes of `loragate run`: pick them, key them like generations, run the loop
on the run's engine (with the evalset's tool servers open for the episodes that use
them), write the episode files of the run folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from loragate.adapters import BASE_ADAPTER
from loragate.episode_loop import run_episodes, write_episode_results
from loragate.episode_records import EpisodesSummary, StepRecord
from loragate.episodes import EpisodeSet, load_episodes, select_episodes
from loragate.errors import BadInput, Problem
from loragate.evalset import Evalset
from loragate.manifest import cache_key, sample_seed
from loragate.pipeline import LazyRunner, RunPlan
from loragate.tool_servers import ToolServers
from loragate.trajectory import EpisodeContext

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
                    fix="drop --episodes, or add episodes.jsonl to the evalset (README: Episodes)",
                )
            ],
        )
    return select_episodes(episodes, limit=None if count == "all" else count)


def context(
    evalset: Evalset,
    parse_mode: Literal["strict", "repaired"],
    servers: ToolServers | None = None,
) -> EpisodeContext:
    return EpisodeContext(
        evalset.toolset, evalset.policy, evalset.manifest.system_prompt, parse_mode, servers
    )


def run_plan_episodes(
    plan: RunPlan,
    episodes: EpisodeSet,
    runner: LazyRunner,
    *,
    on_round: Callable[[int, int], None] | None = None,
) -> EpisodesSummary:
    """Run the episodes for every model variant and sample of the plan; write
    `trajectories.jsonl`, `episode_results.jsonl` and `episodes_summary.json`."""
    config = plan.config
    manifest = plan.manifest
    sampling = config.sampling.model_dump()
    names = ([BASE_ADAPTER] if config.include_base else []) + [a.name for a in plan.setup.adapters]

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

    plan.out_dir.mkdir(parents=True, exist_ok=True)
    evalset = plan.evalset
    # Started on first use, stopped when the loop ends (also on an error or Ctrl-C).
    with ToolServers(
        evalset.manifest.tool_servers, root=evalset.root, log_dir=plan.out_dir
    ) as servers:
        trajs = run_episodes(
            episodes.episodes,
            context(evalset, config.parse_mode, servers),
            adapters=names,
            samples=config.sampling.samples,
            renderer=plan.renderer,
            key=key,
            generate=lambda jobs, sink: runner.get().generate(jobs, sink),
            out_dir=plan.out_dir,
            seed=seed,
            on_round=on_round,
        )
    return write_episode_results(
        trajs, plan.out_dir, episodes_sha256=episodes.sha256, k=config.sampling.samples
    )[1]


def rescore_episodes(
    trajectories: Path, evalset: Evalset, out_dir: Path, parse_mode: Literal["strict", "repaired"]
) -> EpisodesSummary:
    """Judge a `trajectories.jsonl` again (offline, no model): every trajectory in it is
    replayed against the simulator (a tool server's results as recorded: no server is
    started); the episode files are written into `out_dir`."""
    from loragate.episode_loop import read_steps

    episodes = load_episodes(evalset)
    steps: list[StepRecord] = read_steps(trajectories) if trajectories.is_file() else []
    if episodes is None or not steps:
        what = "no episodes.jsonl in the evalset" if episodes is None else "no steps"
        raise BadInput(
            f"nothing to rescore: {what}",
            fix="pass the evalset the trajectories were made with, and a trajectories.jsonl",
        )
    wanted = {s.episode_id for s in steps}
    unknown = sorted(wanted - set(episodes.by_id))
    if unknown:
        raise BadInput(
            f"{trajectories}: episode {unknown[0]!r} is not in {episodes.path}",
            fix="rescore with the evalset the run used",
        )
    adapters = list(dict.fromkeys(s.adapter for s in steps))
    samples = max(s.sample for s in steps) + 1
    chosen = [e for e in episodes.episodes if e.id in wanted]
    out_dir.mkdir(parents=True, exist_ok=True)
    trajs = run_episodes(
        chosen,
        context(evalset, parse_mode),
        adapters=adapters,
        samples=samples,
        renderer=None,
        key=lambda sha, adapter, sample: "",
        generate=None,
        out_dir=out_dir,
        source=trajectories,
    )
    return write_episode_results(trajs, out_dir, episodes_sha256=episodes.sha256, k=samples)[1]
