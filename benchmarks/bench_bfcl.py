"""loragate's scorer vs BFCL's own checker on the imported BFCL evalset (a benchmark,
not a test).

In one process: imports the default BFCL categories (`loragate.bfcl.build_entries`,
2,551 entries), makes the mutated outputs of `tests/_bfcl.py` for every entry (about
22,000, every one distinct: no memo can help either side), and times, each starting
from text:

- loragate: `Scorer.score` (what `loragate score` runs per sample: parser on the
  `<tool_call>` text, then the entry's family scorer) on the evalset written to a
  temporary folder and loaded with `load_evalset` (load time printed apart);
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
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests/_bfcl.py: BFCL's checker and the mutations

from loragate.bfcl import (  # noqa: E402
    DEFAULT_CATEGORIES,
    Semantics,
    build_entries,
    data_dir,
    evalset_files,
    read_category,
)
from loragate.evalset import Evalset, load_evalset  # noqa: E402
from loragate.files import replace_files  # noqa: E402
from loragate.records import GenerationRecord  # noqa: E402
from loragate.scoring import Scorer  # noqa: E402
from tests._bfcl import bfcl_passes, mutations, tool_call_text  # noqa: E402

Case = tuple[Any, ...]


def load(semantics: Semantics, folder: Path) -> tuple[Evalset, float]:
    """The imported evalset, written to `folder` and loaded; (evalset, load seconds)."""
    entries, _ = build_entries(DEFAULT_CATEGORIES, semantics)
    replace_files(folder, evalset_files(entries, list(DEFAULT_CATEGORIES), semantics, "bench"))
    start = time.perf_counter()
    evalset = load_evalset(folder)
    return evalset, time.perf_counter() - start


def build_cases() -> tuple[list[GenerationRecord], list[Case]]:
    """(loragate records, BFCL cases): the same outputs in each side's text format."""
    ours: list[GenerationRecord] = []
    theirs: list[Case] = []
    for category in DEFAULT_CATEGORIES:
        raws, answers = read_category(data_dir(), category)
        for raw in raws:
            answer = answers.get(raw["id"])
            for _, output in mutations(raw, answer, category):
                if isinstance(output, str):
                    text, bfcl_text = output, output
                else:
                    text = tool_call_text(output)
                    calls = [{"function": n, "parameters": a} for n, a in output]
                    bfcl_text = json.dumps(calls)
                ours.append(GenerationRecord(entry_id=raw["id"], adapter="m", sample=0, text=text))
                theirs.append((raw, answer, category, bfcl_text))
    return ours, theirs


def time_loragate(evalset: Evalset, records: list[GenerationRecord]) -> float:
    scorer = Scorer(evalset)  # a fresh memo each run
    start = time.perf_counter()
    for record in records:
        scorer.score(record)
    return len(records) / (time.perf_counter() - start)


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
    semantics: Semantics = "bfcl" if args.semantics == "bfcl" else "loragate"
    with tempfile.TemporaryDirectory() as tmp:
        evalset, load_seconds = load(semantics, Path(tmp))
    ours, theirs = build_cases()
    distinct = len({(r.entry_id, r.text) for r in ours})
    print(
        f"{len(ours)} cases ({distinct} distinct entry/output pairs) over "
        f"{len(evalset.entries)} entries, {semantics} semantics; "
        f"load_evalset {load_seconds:.2f} s"
    )
    lg: list[float] = []
    bf: list[float] = []
    for _ in range(args.repeats):
        lg.append(time_loragate(evalset, ours))
        bf.append(time_bfcl(theirs))
    lg_median, bf_median = statistics.median(lg), statistics.median(bf)
    runs_lg = ", ".join(f"{x:,.0f}" for x in lg)
    runs_bf = ", ".join(f"{x:,.0f}" for x in bf)
    print(f"loragate Scorer from text: median {lg_median:,.0f} cases/s ({runs_lg})")
    print(f"BFCL checker from text:    median {bf_median:,.0f} cases/s ({runs_bf})")
    print(f"ratio loragate / BFCL: {lg_median / bf_median:.2f} (issue 8 asks for >= 3)")


if __name__ == "__main__":
    main()
