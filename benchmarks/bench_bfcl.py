"""loragate's scorer vs BFCL's own checker on the imported BFCL evalset (a benchmark,
not a test).

In one process: imports the default BFCL categories (`loragate.bfcl.build_entries`,
2,551 entries), makes the mutated outputs of `tests/_bfcl.py` for every entry (about
22,000, every one distinct: no memo can help either side), and times, each starting
from text:

- loragate: `parse_output` on the `<tool_call>` text, then the entry's family scorer
  (toolsets built once per entry, before the clock starts);
- BFCL: `parse_json_function_call` (BFCL's JSON call decoder) on the same calls
  written as BFCL's JSON `[{"function", "parameters"}]`, then `ast_checker` (for
  irrelevance: BFCL's rule, a decoded call fails).

Prints cases/s per side (median of `--repeats` runs) and their ratio. Usage:

    python benchmarks/bench_bfcl.py [--repeats 5] [--semantics loragate|bfcl]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests/_bfcl.py: BFCL's checker and the mutations

from loragate.bfcl import DEFAULT_CATEGORIES, build_entries, data_dir, read_category  # noqa: E402
from loragate.evalset import Entry, Policy  # noqa: E402
from loragate.families import Sample, ScoringContext, get_family  # noqa: E402
from loragate.parsing import parse_output  # noqa: E402
from loragate.tools import ToolDef, Toolset  # noqa: E402
from tests._bfcl import bfcl_passes, mutations, tool_call_text  # noqa: E402

Case = tuple[Any, ...]


def build_cases(semantics: str) -> tuple[list[Case], list[Case]]:
    """(loragate cases, BFCL cases), the same outputs in each side's text format."""
    from bfcl_eval.model_handler.parser.json_parser import parse_json_function_call

    entries, _ = build_entries(DEFAULT_CATEGORIES, "bfcl" if semantics == "bfcl" else "loragate")
    by_id = {e["id"]: e for e in entries}
    policy = Policy()
    ours: list[Case] = []
    theirs: list[Case] = []
    for category in DEFAULT_CATEGORIES:
        raws, answers = read_category(data_dir(), category)
        for raw in raws:
            converted = by_id[raw["id"]]
            family = get_family(converted["family"])
            toolset = Toolset([ToolDef.model_validate(t) for t in converted["tools"]])
            entry = Entry.model_validate({k: v for k, v in converted.items() if k != "tools"})
            expect = family.parse_expect(converted["expect"])
            ctx = ScoringContext(toolset=toolset, policy=policy)
            answer = answers.get(raw["id"])
            for _, output in mutations(raw, answer, category):
                if isinstance(output, str):
                    ours.append((family, entry, expect, ctx, output))
                    theirs.append((raw, answer, category, output))
                    continue
                ours.append((family, entry, expect, ctx, tool_call_text(output)))
                bfcl_text = json.dumps([{"function": n, "parameters": a} for n, a in output])
                theirs.append((raw, answer, category, bfcl_text))
    assert parse_json_function_call("[]") == []
    return ours, theirs


def time_loragate(cases: list[Case]) -> float:
    start = time.perf_counter()
    for family, entry, expect, ctx, text in cases:
        family.score(Sample(entry=entry, expect=expect, parse=parse_output(text), ctx=ctx))
    return len(cases) / (time.perf_counter() - start)


def time_bfcl(cases: list[Case]) -> float:
    from bfcl_eval.model_handler.parser.json_parser import parse_json_function_call

    start = time.perf_counter()
    for raw, answer, category, text in cases:
        decoded = parse_json_function_call(text) if text.startswith("[") else []
        calls = [(n, a) for call in decoded for n, a in call.items()]
        bfcl_passes(raw, answer, category, calls)
    return len(cases) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--semantics", choices=["loragate", "bfcl"], default="loragate")
    args = parser.parse_args()
    ours, theirs = build_cases(args.semantics)
    distinct = len({(c[1].id, c[4]) for c in ours})
    print(f"{len(ours)} cases ({distinct} distinct entry/output pairs), {args.semantics} semantics")
    lg: list[float] = []
    bf: list[float] = []
    for _ in range(args.repeats):
        lg.append(time_loragate(ours))
        bf.append(time_bfcl(theirs))
    lg_median, bf_median = statistics.median(lg), statistics.median(bf)
    print(
        f"loragate scorer from text: median {lg_median:,.0f} cases/s ({', '.join(f'{x:,.0f}' for x in lg)})"
    )
    print(
        f"BFCL checker from text:    median {bf_median:,.0f} cases/s ({', '.join(f'{x:,.0f}' for x in bf)})"
    )
    print(f"ratio loragate / BFCL: {lg_median / bf_median:.2f} (target of issue 8: >= 3)")


if __name__ == "__main__":
    main()
