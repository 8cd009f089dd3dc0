"""Benchmark harness variants: one run with V variants against V separate runs.

`loragate run --harness A,B,...` generates the default harness and every variant in
one engine load, one batch (docs/harness.md). This script measures what that saves on
the embedded default (SmolLM2-135M, the CPU build of vLLM, greedy), on the first
`--limit` entries with `--max-new-tokens`:

- *combined*: one `loragate run --harness V1,...,Vn` into a fresh folder;
- *separate*: the default harness alone into a fresh folder, then one
  `loragate run --harness Vi` per variant into the same folder (the default harness's
  generations are cached, so each run pays its engine start and its variant's
  generations, as a user adding variants one at a time would).

Each is wall-clock seconds of the whole command (`--repeats` times, in alternation),
reported as medians and the ratio combined / separate (the issue's target: at most
0.5x for five variants). Context variants change the prompt's prefix, so they share
no prefix cache with the default harness; the per-variant prompt tokens are in each
run's manifest.

Usage: python benchmarks/bench_harness.py [--limit 7] [--max-new-tokens 64]
       [--variants routed,shuffled,distractors-10,context-5k,system-terse]
       [--repeats 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_VARIANTS = "routed,shuffled,distractors-10,context-5k,system-terse"


def _run(out: Path, limit: int, max_new: int, harness: str) -> float:
    args = [sys.executable, "-m", "loragate", "run", "--quiet", "--episodes", "0"]
    args += ["--limit", str(limit), "--max-new-tokens", str(max_new)]
    args += ["--harness", harness, "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run(args, cwd=REPO, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def combined(tmp: Path, limit: int, max_new: int, variants: list[str]) -> float:
    return _run(tmp / "combined", limit, max_new, ",".join(variants))


def separate(tmp: Path, limit: int, max_new: int, variants: list[str]) -> dict[str, float]:
    out = tmp / "separate"
    times = {"default": _run(out, limit, max_new, "none")}
    for v in variants:
        times[v] = _run(out, limit, max_new, v)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=7)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--variants", default=DEFAULT_VARIANTS)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    together: list[float] = []
    apart: list[dict[str, float]] = []
    for rep in range(args.repeats):
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            together.append(combined(tmp, args.limit, args.max_new_tokens, variants))
            apart.append(separate(tmp, args.limit, args.max_new_tokens, variants))
        print(
            f"repeat {rep + 1}: combined {together[-1]:.1f} s, separate "
            f"{sum(apart[-1].values()):.1f} s ("
            + ", ".join(f"{k} {v:.1f}" for k, v in apart[-1].items())
            + ")",
            flush=True,
        )
    one = statistics.median(together)
    many = statistics.median(sum(t.values()) for t in apart)
    figures: dict[str, Any] = {
        "limit": args.limit,
        "max_new_tokens": args.max_new_tokens,
        "variants": variants,
        "repeats": args.repeats,
        "combined_s": one,
        "separate_s": many,
        "separate_each_s": {k: statistics.median(t[k] for t in apart) for k in apart[0]},
        "ratio": one / many,
    }
    print(
        f"{len(variants)} variants on {args.limit} entries: one run {one:.1f} s, "
        f"separate runs {many:.1f} s (medians); ratio {one / many:.2f}x"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
