"""Benchmark the episode loop on the CPU build of vLLM: its overhead beyond generation,
and its throughput against single-turn entries of the same tokens.

The loop runs the first `--episodes` agent20 episodes (every fault variant) through
`episode_loop.run_episodes` on a real `VllmRunner`: every step prompt is rendered and
generated greedily (up to `--max-new-tokens`), then the model's text is swapped for the
reference run's output of that step (tests/data/agent20_episode_scripts.json), so the
trajectories take their real multi-step paths (lookups, confirmations, faults, retries,
clarifying questions) while every generation costs what it costs. Figures (medians
over `--repeats` of the ratios within each pass, prefix cache reset before each pass):

1. loop total vs time inside `Runner.generate`: the rest (rendering, parsing, judging,
   the simulator, trajectories.jsonl with an fsync a round) is the loop's overhead
   (target < 10 % of the total);
2. the same step prompts submitted at once as single-turn entries (one
   `Runner.generate` call; the same prompts and tokens): episode throughput as a
   ratio to it (rounds cannot batch steps that depend on each other).

Models: `embedded` (SmolLM2-135M, float32; what `loragate run` uses) or `tiny` (the
tests' random 2-layer Qwen3 with SmolLM2's tokenizer, built in a temp folder: generation
is so cheap that the loop's own share is at its largest).

Usage: python benchmarks/bench_episode_loop.py [--model embedded|tiny] [--episodes 8]
       [--max-new-tokens 48] [--repeats 3] [--json FILE]

About 5 min for the defaults on a 2-core CPU (engine start ~40 s included).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from loragate.episodes.definitions import select_episodes
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.loop import run_episodes
from loragate.episodes.stage import context
from loragate.formats.records import GenerationRecord
from loragate.generate.config import RunConfig
from loragate.generate.pipeline import plan_run
from loragate.runners.vllm import VllmRunner

REPO = Path(__file__).resolve().parent.parent


def build_plan(model: str, max_new_tokens: int, work: Path) -> Any:
    base: dict[str, Any] = {
        "backend": "vllm",
        "evalset": str(REPO / "evalsets" / "agent20"),
        "sampling": {"max_new_tokens": max_new_tokens},
        "out": str(work / "plan"),
    }
    if model == "tiny":
        sys.path.insert(0, str(REPO))
        # tests/ is on the path only for the tiny model (it builds one with transformers)
        from loragate.generate.embedded import embedded_checkpoint  # noqa: PLC0415
        from tests.runners.tiny import build_tiny_qwen3  # noqa: PLC0415

        path = build_tiny_qwen3(work / "qwen3-tiny", embedded_checkpoint())
        base |= {"model": str(path), "chat_template": "chatml-tools"}
    else:
        base["embedded"] = "smollm2-135m"
    return plan_run(RunConfig.model_validate(base), limit=1)


def scripted_generate(
    runner: Any,
    scripts: dict[str, list[str]],
    spent: list[float],
    jobs_seen: list[Any],
    tokens: list[int],
) -> Callable[[Sequence[Any], Callable[[list[Any]], None]], None]:
    """`runner.generate`, timed, with each output replaced by the reference step. The
    loop's sink (judging the step, appending to trajectories.jsonl) runs inside the
    runner's call: its time is taken out, it is the loop's, not generation."""

    def generate(jobs: Sequence[Any], sink: Callable[[list[Any]], None]) -> None:
        jobs_seen.extend(jobs)
        in_sink = 0.0

        def swap(records: list[Any]) -> None:
            nonlocal in_sink
            out = []
            for r in records:
                tokens.append(r.completion_tokens or 0)
                episode, step = r.entry_id.rsplit("@", 1)
                outs = scripts[episode]
                text = outs[int(step) - 1] if int(step) <= len(outs) else "I am done."
                out.append(r.model_copy(update={"text": text}))
            t = time.perf_counter()
            sink(out)
            in_sink += time.perf_counter() - t

        t0 = time.perf_counter()
        runner.generate(jobs, swap)
        spent.append(time.perf_counter() - t0 - in_sink)

    return generate


def one_pass(runner: Any, plan: Any, episodes: list[Any], work: Path) -> dict[str, Any]:
    scripts = json.loads(
        (REPO / "tests" / "data" / "agent20_episode_scripts.json").read_text(encoding="utf-8")
    )
    spent: list[float] = []
    jobs: list[Any] = []
    tokens: list[int] = []
    out = Path(tempfile.mkdtemp(dir=work))
    runner.llm.reset_prefix_cache()
    t0 = time.perf_counter()
    trajs = run_episodes(
        episodes,
        context(plan.evalset, "strict"),
        adapters=["base"],
        samples=1,
        renderer=plan.renderer,
        key=lambda sha, adapter, sample: f"{sha}:{adapter}:{sample}",
        generate=scripted_generate(runner, scripts, spent, jobs, tokens),
        out_dir=out,
    )
    loop_s = time.perf_counter() - t0
    passed = sum(t.result().passed for t in trajs)
    # The same prompts as single-turn entries: one generate call.
    records: list[GenerationRecord] = []
    single = [dataclasses.replace(j, cache_key=f"single:{j.cache_key}") for j in jobs]
    runner.llm.reset_prefix_cache()
    t1 = time.perf_counter()
    runner.generate(single, records.extend)
    single_s = time.perf_counter() - t1
    return {
        "loop_s": loop_s,
        "generate_s": sum(spent),
        "rounds": len(spent),
        "steps": len(jobs),
        "trajectories": len(trajs),
        "passed": passed,
        "single_s": single_s,
        "prompt_tokens": sum(r.prompt_tokens or 0 for r in records),
        "new_tokens": sum(r.completion_tokens or 0 for r in records),
        "loop_new_tokens": sum(tokens),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=["embedded", "tiny"], default="embedded")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plan = build_plan(args.model, args.max_new_tokens, work)
        all_episodes = load_episodes(plan.evalset)
        assert all_episodes is not None
        episodes = select_episodes(all_episodes, limit=args.episodes).episodes
        t0 = time.perf_counter()
        runner = VllmRunner(plan.setup)
        print(f"engine start {time.perf_counter() - t0:.1f} s ({args.model})", flush=True)
        passes = []
        try:
            for rep in range(args.repeats):
                r = one_pass(runner, plan, episodes, work)
                passes.append(r)
                print(
                    f"repeat {rep + 1}: loop {r['loop_s']:.2f} s, in generate "
                    f"{r['generate_s']:.2f} s over {r['rounds']} rounds, {r['steps']} steps of "
                    f"{r['trajectories']} trajectories ({r['passed']} pass); the same prompts "
                    f"single-turn {r['single_s']:.2f} s; new tokens {r['loop_new_tokens']} vs "
                    f"{r['new_tokens']}",
                    flush=True,
                )
        finally:
            runner.close()
    med = {k: statistics.median(p[k] for p in passes) for k in ("loop_s", "generate_s", "single_s")}
    # Ratios within each pass, then their median (the machine's load varies between passes).
    overhead = statistics.median((p["loop_s"] - p["generate_s"]) / p["loop_s"] for p in passes)
    ratio = statistics.median(p["single_s"] / p["loop_s"] for p in passes)
    per_step_ms = statistics.median(
        (p["loop_s"] - p["generate_s"]) / p["steps"] * 1000 for p in passes
    )
    first = passes[0]
    figures = {
        "model": args.model,
        "episodes": args.episodes,
        "max_new_tokens": args.max_new_tokens,
        "repeats": args.repeats,
        "trajectories": first["trajectories"],
        "steps": first["steps"],
        "rounds": first["rounds"],
        "prompt_tokens": first["prompt_tokens"],
        "new_tokens": first["new_tokens"],
        **{f"median_{k}": v for k, v in med.items()},
        "loop_overhead": overhead,
        "loop_ms_per_step": per_step_ms,
        "throughput_vs_single_turn": ratio,
    }
    print(
        f"medians: loop {med['loop_s']:.2f} s, in Runner.generate {med['generate_s']:.2f} s, "
        f"loop overhead {overhead:.1%} of the loop (target < 10 %), {per_step_ms:.1f} ms a "
        f"step; single-turn {med['single_s']:.2f} s, "
        f"episode throughput {ratio:.2f}x single-turn ({first['steps']} steps, "
        f"{first['rounds']} rounds, {first['new_tokens']} new tokens)"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
