"""Benchmark the generation half: runner overhead, multi-LoRA, cache, throughput.

Model: the embedded SmolLM2-135M (float32, CPU vLLM) with two random LoRA adapters
(rank 8 on q/v projections, built here with peft), on the first `--entries` entries
of agent20. Figures (medians over `--repeats` where repeated):

1. runner overhead: `VllmRunner.generate` (streaming into generations.jsonl) vs a
   bare `LLM.generate` on the same prompts, same engine, prefix cache reset before
   each pass (target <= 1.10); plus the planning and scoring time `loragate run`
   adds around generation.
2. two adapters in one engine load vs two runs of one adapter each (engine start
   included; the ratio is what the multi-LoRA batch saves).
3. a fully cached rerun of `loragate run` vs its first run (target <= 0.05).
4. tokens/s of the embedded default, and the effect of prefix caching (the same
   base prompts with `skip_reading_prefix_cache` on and off).

Usage: python benchmarks/bench_runners.py [--entries 6] [--max-new-tokens 32]
       [--repeats 2] [--prefix-prompts 4] [--skip-two-runs] [--json FILE]

About 10-15 min on a 2-core CPU: vLLM's CPU LoRA path is slow (see the report).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loragate.evaluation import finish_run
from loragate.formats.runfolder import GenerationWriter, read_generations
from loragate.generate.config import RunConfig
from loragate.generate.embedded import embedded_checkpoint
from loragate.generate.pipeline import plan_run
from loragate.runners.vllm import VllmRunner

REPO = Path(__file__).resolve().parent.parent


def build_adapter(base: Path, out: Path, seed: int) -> Path:
    """A rank-8 LoRA on q/v with random (non-zero) A and B."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    cfg = LoraConfig(
        r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], init_lora_weights=False
    )
    torch.manual_seed(seed)
    peft_model = get_peft_model(model, cfg)
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn_like(p) * 0.02)
    peft_model.save_pretrained(str(out))
    return out


def plan_for(
    adapters: dict[str, Path], include_base: bool, args: argparse.Namespace, out: Path
) -> Any:
    cfg = RunConfig.model_validate(
        {
            "embedded": "smollm2-135m",
            "backend": "vllm",
            "include_base": include_base,
            "adapters": {k: str(v) for k, v in adapters.items()},
            "sampling": {"max_new_tokens": args.max_new_tokens},
            "out": str(out),
        }
    )
    return plan_run(cfg, limit=args.entries)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def bare_generate(runner: Any, jobs: list[Any], *, skip_prefix: bool = False) -> Any:
    from vllm import SamplingParams

    params = SamplingParams(
        temperature=0.0,
        max_tokens=runner.setup.config.sampling.max_new_tokens,
        skip_reading_prefix_cache=skip_prefix,
    )
    loras = [None if j.adapter == "base" else runner.lora_requests[j.adapter] for j in jobs]
    return runner.llm.generate(
        [{"prompt": j.prompt} for j in jobs],
        params,
        lora_request=loras,
        use_tqdm=False,
        tokenization_kwargs={"add_special_tokens": False},
    )


def runner_generate(runner: Any, jobs: list[Any], path: Path) -> int:
    path.unlink(missing_ok=True)
    count = 0
    with GenerationWriter(path) as writer:

        def sink(records: list[Any]) -> None:
            nonlocal count
            writer.append(records)
            count += len(records)

        runner.generate(jobs, sink)
    return count


def bench_overhead(
    args: argparse.Namespace, work: Path, adapters: dict[str, Path]
) -> dict[str, Any]:
    t_plan, plan = timed(lambda: plan_for(adapters, True, args, work / "plan"))
    jobs = list(plan.jobs)
    t_start, runner = timed(lambda: VllmRunner(plan.setup))
    bare: list[float] = []
    wrapped: list[float] = []
    outputs: Any = None
    for _ in range(args.repeats):
        runner.llm.reset_prefix_cache()
        t, outputs = timed(lambda: bare_generate(runner, jobs))
        bare.append(t)
        runner.llm.reset_prefix_cache()
        wrapped.append(timed(lambda: runner_generate(runner, jobs, work / "gen.jsonl"))[0])
    prompt_tokens = sum(len(o.prompt_token_ids) for o in outputs)
    out_tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
    # prefix caching: a few base prompts, cache reset, reading the cache on vs off
    base_jobs = [j for j in jobs if j.adapter == "base"][: args.prefix_prompts]
    with_cache: list[float] = []
    without: list[float] = []
    for _ in range(args.repeats):
        runner.llm.reset_prefix_cache()
        with_cache.append(timed(lambda: bare_generate(runner, base_jobs))[0])
        runner.llm.reset_prefix_cache()
        without.append(timed(lambda: bare_generate(runner, base_jobs, skip_prefix=True))[0])
    # the two adapters together, on the engine already loaded
    ab_jobs = [j for j in jobs if j.adapter != "base"]
    runner.llm.reset_prefix_cache()
    t_ab = timed(lambda: bare_generate(runner, ab_jobs))[0]

    records = read_generations(work / "gen.jsonl")
    by_key = {r.cache_key: r for r in records}
    t_score, _ = timed(
        lambda: finish_run(plan.evalset, [by_key[j.cache_key] for j in jobs], work / "scored")
    )
    runner.close()
    med_bare, med_wrapped = statistics.median(bare), statistics.median(wrapped)
    return {
        "prompts": len(jobs),
        "engine_start_s": t_start,
        "plan_s": t_plan,
        "score_s": t_score,
        "bare_generate_s": med_bare,
        "runner_generate_s": med_wrapped,
        "runner_overhead_ratio": med_wrapped / med_bare,
        "run_overhead_ratio": (t_plan + med_wrapped + t_score) / med_bare,
        "prompt_tokens": prompt_tokens,
        "output_tokens": out_tokens,
        "prompt_tokens_per_s": prompt_tokens / med_bare,
        "output_tokens_per_s": out_tokens / med_bare,
        "prefix_prompts": len(base_jobs),
        "prefix_cache_on_s": statistics.median(with_cache),
        "prefix_cache_off_s": statistics.median(without),
        "prefix_cache_speedup": statistics.median(without) / statistics.median(with_cache),
        "two_adapters_generate_s": t_ab,
        "two_adapters_prompts": len(ab_jobs),
        "_raw": {"bare": bare, "runner": wrapped, "pc_on": with_cache, "pc_off": without},
    }


def bench_two_runs(
    args: argparse.Namespace, work: Path, adapters: dict[str, Path], together: dict[str, Any]
) -> dict[str, Any]:
    total = 0.0
    for name, path in adapters.items():
        plan = plan_for({name: path}, False, args, work / f"plan-{name}")
        t_start, runner = timed(lambda: VllmRunner(plan.setup))  # noqa: B023
        t_gen = timed(lambda: bare_generate(runner, list(plan.jobs)))[0]  # noqa: B023
        runner.close()
        total += t_start + t_gen
    one_load = together["engine_start_s"] + together["two_adapters_generate_s"]
    return {"one_engine_two_adapters_s": one_load, "two_runs_s": total, "ratio": one_load / total}


def bench_cached_rerun(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    out = work / "cli-run"
    cmd = [sys.executable, "-m", "loragate", "run", "--limit", str(args.entries)]
    cmd += ["--max-new-tokens", str(args.max_new_tokens), "--out", str(out), "--quiet"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    t_first, first = timed(
        lambda: subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    )
    if first.returncode != 0:
        raise SystemExit(f"loragate run failed:\n{first.stderr[-3000:]}")
    reruns = []
    for _ in range(args.repeats):
        t, again = timed(
            lambda: subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
        )
        if "0 to generate" not in again.stderr:
            raise SystemExit(f"rerun generated again:\n{again.stderr[-2000:]}")
        reruns.append(t)
    rerun = statistics.median(reruns)
    return {"first_run_s": t_first, "cached_rerun_s": rerun, "ratio": rerun / t_first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=6)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--prefix-prompts", type=int, default=4)
    parser.add_argument("--skip-two-runs", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    work = Path(tempfile.mkdtemp(prefix="bench-runners-"))
    try:
        base = embedded_checkpoint()
        adapters = {
            "lora_a": build_adapter(base, work / "lora_a", seed=1),
            "lora_b": build_adapter(base, work / "lora_b", seed=2),
        }
        res: dict[str, Any] = {"entries": args.entries, "max_new_tokens": args.max_new_tokens}
        res["overhead"] = bench_overhead(args, work, adapters)
        if not args.skip_two_runs:
            res["multi_lora"] = bench_two_runs(args, work, adapters, res["overhead"])
        res["cache"] = bench_cached_rerun(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    o = res["overhead"]
    lines = [
        f"prompts per pass: {o['prompts']} (entries {args.entries} x base + 2 adapters), "
        f"{args.max_new_tokens} new tokens, repeats {args.repeats}",
        f"engine start: {o['engine_start_s']:.1f} s",
        f"1. runner overhead: bare LLM.generate {o['bare_generate_s']:.2f} s, "
        f"VllmRunner.generate {o['runner_generate_s']:.2f} s -> ratio "
        f"{o['runner_overhead_ratio']:.3f} (target <= 1.10); with planning "
        f"({o['plan_s']:.2f} s) and scoring ({o['score_s']:.2f} s): "
        f"{o['run_overhead_ratio']:.3f}",
    ]
    if "multi_lora" in res:
        m = res["multi_lora"]
        lines.append(
            f"2. two adapters, one engine load {m['one_engine_two_adapters_s']:.1f} s vs two runs "
            f"{m['two_runs_s']:.1f} s -> ratio {m['ratio']:.2f}"
        )
    c = res["cache"]
    lines.append(
        f"3. loragate run: first {c['first_run_s']:.1f} s, fully cached rerun "
        f"{c['cached_rerun_s']:.1f} s -> ratio {c['ratio']:.3f} (target <= 0.05)"
    )
    lines.append(
        f"4. throughput (embedded SmolLM2, float32 CPU, batch of {o['prompts']}): "
        f"{o['prompt_tokens_per_s']:.0f} prompt tok/s, {o['output_tokens_per_s']:.1f} output tok/s; "
        f"prefix caching ({o['prefix_prompts']} base prompts) on {o['prefix_cache_on_s']:.2f} s "
        f"vs off {o['prefix_cache_off_s']:.2f} s "
        f"-> {o['prefix_cache_speedup']:.2f}x"
    )
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
