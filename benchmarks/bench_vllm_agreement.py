"""loragate's strict parse against the installed vLLM's server pipeline, with figures.

Generates the corpus of `tests/_vllm_agreement.py` (every kind issue 22 lists, both call
formats, each output under one of eight serving stacks: Hermes or Qwen3 XML tool
parser, with the qwen3 reasoning parser thinking on or off, deepseek_r1, or none), runs
what `vllm serve` runs on each output (`ParserManager.get_parser(...).parse`: the
reasoning parser, then the tool parser) and loragate's strict parse, and prints the
agreement, every difference class with its count and reason, the classes per kind of
output and the time each side takes.

    .venv/bin/python benchmarks/bench_vllm_agreement.py [--outputs 6000] [--seed 22] [--json FILE]

The numbers in docs/call-formats.md come from this script.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loragate.calls.parsing import parse_output
from tests._vllm_agreement import CLASSES, VllmPipeline, build_tokenizer, compare
from tests._vllm_corpus import corpus, toolset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    started = time.perf_counter()
    cases = corpus(args.outputs, args.seed)
    made = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        pipeline = VllmPipeline(build_tokenizer(Path(tmp)))
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        for case in cases:
            pipeline.parse(case.text, case.stack)
        vllm_seconds = time.perf_counter() - started
        tools = toolset()
        started = time.perf_counter()
        for case in cases:
            parse_output(case.text, "strict", stack=case.stack, tools=tools)
        ours_seconds = time.perf_counter() - started
        result = compare(cases, pipeline)

    print(f"corpus: {result.outputs} outputs in {made:.2f} s; vLLM import {loaded:.1f} s")
    print(
        f"parsing: vLLM {vllm_seconds:.2f} s ({vllm_seconds / len(cases) * 1e6:.0f} us an output), "
        f"loragate {ours_seconds:.2f} s ({ours_seconds / len(cases) * 1e6:.0f} us an output)"
    )
    share = result.agreeing / result.comparable if result.comparable else 1.0
    print(
        f"agreement: {result.agreeing} of {result.comparable} comparable outputs "
        f"({share:.1%}); {result.outputs - result.comparable} in named classes\n"
    )
    print(f"{'class':24} {'outputs':>7}  comparable  reason")
    for name, count in result.counts.most_common():
        c = CLASSES[name]
        print(f"{name:24} {count:7}  {'yes' if c.comparable else 'no ':10}  {c.reason}")
    print("\nby kind (outputs not agreeing):")
    for kind, counts in sorted(result.by_kind.items()):
        other = {k: v for k, v in counts.items() if k != "agree"}
        if other:
            print(f"  {kind:38} agree {counts['agree']:4}  {other}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "outputs": result.outputs,
                    "comparable": result.comparable,
                    "agree": result.agreeing,
                    "classes": dict(result.counts.most_common()),
                    "by_kind": {k: dict(v) for k, v in sorted(result.by_kind.items())},
                    "seconds": {"vllm": vllm_seconds, "loragate": ours_seconds},
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
