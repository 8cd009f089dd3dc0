"""Benchmark the CPU build of vLLM on the embedded default: reserved scheduler cores.

vLLM's CPU build keeps `VLLM_CPU_NUM_OF_RESERVED_CPU` cores (1 by default on x86)
free of OpenMP compute threads for its busy scheduler process; loragate sets 0 on
machines with at most 4 usable cores (`runners/vllm.py: cpu_reserved_cores`). This
script measures what that buys on the default run's own prompts: the embedded
SmolLM2-135M, float32, greedy, the default `max_new_tokens`, prefix caching on, the
first `--prompts` prompts in `--limit` order (round robin over the families).

Each setting runs in a fresh process (the variable is read when the engine starts),
`--repeats` times in alternation, and reports the median seconds of:
engine start, prefill (every prompt with `max_tokens=1`, which also warms the prefix
cache), and generation (the same prompts again with the full `max_new_tokens`, so
mostly decoding), plus the tokens generated. Outputs of both settings are compared.

Usage: python benchmarks/bench_vllm_cpu.py [--prompts 30] [--repeats 1]
       [--reserved 1 0] [--json FILE]

About 4 min per setting and repeat for 30 prompts on 2 cores.
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

from loragate.common.resources import bundled
from loragate.generate.config import load_config
from loragate.generate.pipeline import plan_run


def child(prompts: int) -> dict[str, Any]:
    """Time one engine in this process; the caller set the environment."""
    from vllm import LLM, SamplingParams

    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(bundled("configs/default.yaml"), {"out": str(Path(tmp) / "run")})
        plan = plan_run(config, limit=prompts)
    opts = config.vllm
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(opts.kv_cache_gib))
    t0 = time.perf_counter()
    llm = LLM(
        model=plan.setup.model_path,
        tokenizer=plan.setup.model_path,
        dtype="float32",
        seed=0,
        enable_prefix_caching=True,
        max_model_len=opts.max_model_len,
        enforce_eager=True,
    )
    t1 = time.perf_counter()
    batch = [{"prompt": j.prompt} for j in plan.jobs]
    tok = {"add_special_tokens": False}
    llm.generate(
        batch, SamplingParams(temperature=0, max_tokens=1), use_tqdm=False, tokenization_kwargs=tok
    )
    t2 = time.perf_counter()
    outs = llm.generate(
        batch,
        SamplingParams(temperature=0, max_tokens=config.sampling.max_new_tokens),
        use_tqdm=False,
        tokenization_kwargs=tok,
    )
    t3 = time.perf_counter()
    return {
        "engine_s": t1 - t0,
        "prefill_s": t2 - t1,
        "generate_s": t3 - t2,
        "prompt_tokens": sum(len(o.prompt_token_ids or []) for o in outs),
        "new_tokens": sum(len(o.outputs[0].token_ids) for o in outs),
        "texts": [o.outputs[0].text for o in outs],
    }


def run_setting(prompts: int, reserved: int) -> dict[str, Any]:
    env = dict(os.environ, VLLM_CPU_NUM_OF_RESERVED_CPU=str(reserved))
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, __file__, "--child", out.name, "--prompts", str(prompts)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        result: dict[str, Any] = json.loads(Path(out.name).read_text(encoding="utf-8"))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--reserved", type=int, nargs="+", default=[1, 0])
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        Path(args.child).write_text(json.dumps(child(args.prompts)), encoding="utf-8")
        return 0
    runs: dict[int, list[dict[str, Any]]] = {r: [] for r in args.reserved}
    for rep in range(args.repeats):
        for reserved in args.reserved:
            result = run_setting(args.prompts, reserved)
            runs[reserved].append(result)
            print(
                f"repeat {rep + 1}, reserved {reserved}: engine {result['engine_s']:.1f} s, "
                f"prefill {result['prefill_s']:.1f} s, generate {result['generate_s']:.1f} s, "
                f"{result['new_tokens']} new tokens",
                flush=True,
            )
    figures: dict[str, Any] = {"prompts": args.prompts, "repeats": args.repeats, "settings": {}}
    for reserved, results in runs.items():
        medians = {
            k: statistics.median(r[k] for r in results)
            for k in ("engine_s", "prefill_s", "generate_s")
        }
        figures["settings"][str(reserved)] = {**medians, "new_tokens": results[0]["new_tokens"]}
        print(
            f"reserved {reserved}: engine {medians['engine_s']:.1f} s, prefill "
            f"{medians['prefill_s']:.1f} s, generate {medians['generate_s']:.1f} s (medians)"
        )
    first, *rest = args.reserved
    for other in rest:
        a, b = figures["settings"][str(first)], figures["settings"][str(other)]
        same = runs[first][0]["texts"] == runs[other][0]["texts"]
        print(
            f"reserved {other} vs {first}: prefill {a['prefill_s'] / b['prefill_s']:.2f}x, "
            f"generate {a['generate_s'] / b['generate_s']:.2f}x faster; "
            f"outputs identical: {'yes' if same else 'no'}"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
