"""Benchmark the `hf` runner's shared-prefix KV cache against plain batched generate.

Model: the embedded SmolLM2-135M (float32, CPU), base only. Prompts: `--entries`
agent20 entries rendered as `loragate run` renders them (`plan_run` on the embedded
default config, `--limit`-style selection: round robin over the families), greedy,
`max_new_tokens` of the default config (192) unless `--max-new-tokens`. In one
process, `--repeats` times in alternation:

- plain: `hf.prefix_cache: false`, left-padded batches of the default config's
  `hf.batch_size` (8);
- prefix: `hf.prefix_cache: true`, the shared prefix's cache computed once, each
  prompt continued from it.

Prints the median seconds of each, the ratio plain / prefix (target >= 3) and whether
every output is identical. Exit code 1 when an output differs.

Usage: python benchmarks/bench_hf_prefix.py [--entries 8] [--max-new-tokens 192]
       [--repeats 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from loragate.common.resources import bundled
from loragate.generate.config import load_config
from loragate.generate.pipeline import plan_run
from loragate.runners.hf import HfRunner, shared_prefix_length


def plan_default(entries: int, max_new_tokens: int | None, out: Path) -> Any:
    """The default config's run plan (hf backend, base only) for `entries` entries."""
    overrides: dict[str, Any] = {
        "backend": "hf",
        "out": str(out),
        "sampling.max_new_tokens": max_new_tokens,
    }
    return plan_run(load_config(bundled("configs/default.yaml"), overrides), limit=entries)


def with_hf(setup: Any, **hf: Any) -> Any:
    """`setup` with other `hf` options."""
    cfg = setup.config
    return replace(setup, config=cfg.model_copy(update={"hf": cfg.hf.model_copy(update=hf)}))


def run_once(runner: Any, jobs: list[Any]) -> tuple[float, dict[str, str]]:
    """Seconds for `runner.generate(jobs)` and the texts by entry."""
    texts: dict[str, str] = {}
    t0 = time.perf_counter()
    runner.generate(jobs, lambda records: texts.update({r.entry_id: r.text for r in records}))
    return time.perf_counter() - t0, texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=None, help="default: config's")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    with tempfile.TemporaryDirectory() as tmp:
        plan = plan_default(args.entries, args.max_new_tokens, Path(tmp) / "run")
    jobs = list(plan.jobs)
    prefix = HfRunner(with_hf(plan.setup, prefix_cache=True))
    plain = HfRunner.around(prefix.model, prefix.tokenizer, with_hf(plan.setup, prefix_cache=False))
    encoded = [prefix.tokenizer(j.prompt, add_special_tokens=False)["input_ids"] for j in jobs]
    print(
        f"{len(jobs)} prompts ({', '.join(sorted({j.entry_id for j in jobs}))}), "
        f"{min(map(len, encoded))}-{max(map(len, encoded))} tokens, shared prefix "
        f"{shared_prefix_length(encoded)}; max_new_tokens "
        f"{plan.setup.config.sampling.max_new_tokens}, plain batch size "
        f"{plan.setup.config.hf.batch_size}, torch threads {prefix.torch.get_num_threads()}",
        flush=True,
    )
    times: dict[str, list[float]] = {"plain": [], "prefix": []}
    outputs: dict[str, dict[str, str]] = {}
    for rep in range(args.repeats):
        for name, runner in (("plain", plain), ("prefix", prefix)):
            seconds, texts = run_once(runner, jobs)
            times[name].append(seconds)
            if outputs.setdefault(name, texts) != texts:
                print(f"{name}: outputs changed between repeats", flush=True)
            print(f"repeat {rep + 1}: {name} {seconds:.1f} s", flush=True)
    plain_s, prefix_s = (statistics.median(times[n]) for n in ("plain", "prefix"))
    differing = sorted(e for e in outputs["plain"] if outputs["plain"][e] != outputs["prefix"][e])
    figures = {
        "prompts": len(jobs),
        "max_new_tokens": plan.setup.config.sampling.max_new_tokens,
        "plain_batch_size": plan.setup.config.hf.batch_size,
        "repeats": args.repeats,
        "plain_s": times["plain"],
        "prefix_s": times["prefix"],
        "speedup": plain_s / prefix_s,
        "differing_outputs": differing,
    }
    print(
        f"plain batched {plain_s:.1f} s vs prefix cache {prefix_s:.1f} s (medians of "
        f"{args.repeats}) -> {plain_s / prefix_s:.2f}x; outputs identical: "
        + ("yes" if not differing else f"no ({', '.join(differing)})")
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    prefix.close()
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
