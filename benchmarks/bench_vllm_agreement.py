"""loragate's three readings against the installed vLLM's server pipeline, with figures.

Generates the corpus of `tests/_vllm/` (every kind of output, both call formats, each
output under one of eight serving stacks: Hermes or Qwen3 XML tool parser, with the
qwen3 reasoning parser thinking on or off, deepseek_r1, or none), runs what `vllm serve`
runs on each output (`ParserManager.get_parser(...).parse`: the reasoning parser, then
the tool parser) and loragate's served, strict and lenient readings, and prints how many
outputs the served reading agrees on (calls, arguments and content), every class in
which strict and lenient differ from the server with its count and reason (the tables
of docs/call-formats.md), and the time each side takes.

    .venv/bin/python benchmarks/bench_vllm_agreement.py [--hermes 6000] [--xml 3000]
        [--seed 22] [--json FILE]

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
from loragate.calls.served import VLLM_VERSION
from tests._vllm.compare import LENIENT_CLASSES, STRICT_CLASSES, compare
from tests._vllm.corpus import corpus
from tests._vllm.oracle import VllmPipeline, build_tokenizer
from tests._vllm.tools import toolset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hermes", type=int, default=6000)
    parser.add_argument("--xml", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    started = time.perf_counter()
    cases = corpus(args.hermes, args.xml, args.seed)
    made = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        pipeline = VllmPipeline(build_tokenizer(Path(tmp)))
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        for case in cases:
            pipeline.run(case.text, case.stack)
        vllm_seconds = time.perf_counter() - started
        tools = toolset()
        ours: dict[str, float] = {}
        for mode in ("served", "strict", "lenient"):
            started = time.perf_counter()
            for case in cases:
                parse_output(case.text, mode, stack=case.stack, tools=tools)
            ours[mode] = time.perf_counter() - started
        result = compare(cases, pipeline, tools)

    n = len(cases)
    print(f"corpus: {n} outputs in {made:.2f} s; vLLM {VLLM_VERSION} import {loaded:.1f} s")
    print(
        f"parsing, us an output: vLLM {vllm_seconds / n * 1e6:.0f}; loragate "
        + ", ".join(f"{m} {s / n * 1e6:.0f}" for m, s in ours.items())
    )
    print(f"served agrees with the server on {result.served_agree} of {n} outputs\n")
    for name, counts, classes in (
        ("strict", result.strict, STRICT_CLASSES),
        ("lenient", result.lenient, LENIENT_CLASSES),
    ):
        print(f"{name}: {sum(counts.values())} outputs differ from the server")
        reasons = {c.name: c.reason for c in classes}
        for cls, count in counts.most_common():
            print(f"  {cls:26} {count:5}  {reasons.get(cls, '(no named class)')}")
        print()
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "outputs": n,
                    "served_agree": result.served_agree,
                    "strict": dict(result.strict.most_common()),
                    "lenient": dict(result.lenient.most_common()),
                    "by_kind": {k: dict(v) for k, v in sorted(result.by_kind.items())},
                    "seconds": {"vllm": vllm_seconds, **ours},
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
