"""loragate's scorer vs BFCL's own checker on the imported BFCL evalset (a benchmark,
not a test).

In one process: imports the default BFCL categories (`loragate.evalset.bfcl.build_entries`,
2,551 entries), makes the mutated outputs of `tests/_bfcl.py` for every entry (22,472,
every one distinct: no memo can help either side), and times, each starting from
text:

- loragate `Scorer.judge`: what a checker does - the parser on the `<tool_call>` text,
  then the entry's family scorer (schema check, matchers, verdict with its detail);
- loragate `Scorer.score`: the same plus the `ResultRecord` that `loragate score`
  writes per sample;
- the floor (`time_floor`): a stripped loop with no reasons or records, what any
  judge in Python pays at least;
- BFCL: `parse_json_function_call` (BFCL's JSON call decoder) on the same calls
  written as BFCL's JSON `[{"function", "parameters"}]`, then `ast_checker` (for
  irrelevance: BFCL's rule, a decoded call fails).

The evalset is written to a temporary folder and loaded with `load_evalset` (load
time printed apart). Each run starts a new `Scorer` and empties the schema checkers'
memos, so nothing carries over between runs. The three are timed in turn in every
run, in CPU seconds of this process (robust to other jobs on the machine; wall clock
printed too), and the ratio is taken in each run; the medians of `--repeats` runs
are printed. Usage:

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

import jsonschema_rs  # noqa: E402
import orjson  # noqa: E402

from loragate.calls.matchers import compile_matcher  # noqa: E402
from loragate.common.files import replace_files  # noqa: E402
from loragate.common.heap import no_cyclic_gc  # noqa: E402
from loragate.evalset.bfcl import (  # noqa: E402
    DEFAULT_CATEGORIES,
    Semantics,
    build_entries,
    data_dir,
    evalset_files,
    read_category,
)
from loragate.evalset.load import Evalset, load_evalset  # noqa: E402
from loragate.formats.records import GenerationRecord  # noqa: E402
from loragate.score.scoring import Scorer  # noqa: E402
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


Timing = tuple[float, float]
"""(cases per CPU second, cases per wall-clock second)."""


def _timed(n: int, run: Any) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return n / (time.process_time() - cpu), n / (time.perf_counter() - wall)


def _forget(evalset: Evalset) -> None:
    """Empty every memo the evalset's schema checkers keep between calls."""
    toolsets = {id(t): t for t in [evalset.toolset, *evalset.entry_toolsets.values()]}
    for toolset in toolsets.values():
        for name in toolset.names():
            compiled = toolset.compiled(name)
            if compiled is not None:
                compiled.checker._memo.clear()


def time_loragate(evalset: Evalset, records: list[GenerationRecord], what: str) -> Timing:
    _forget(evalset)
    scorer = Scorer(evalset)  # a fresh memo each run
    step = scorer.judge if what == "judge" else scorer.score

    def run() -> None:
        for record in records:
            step(record)

    return _timed(len(records), run)


def time_floor(evalset: Evalset, records: list[GenerationRecord]) -> Timing:
    """The floor of a judge written in Python, not a scorer: per output, find each
    `<tool_call>` block, `orjson.loads` it, then name, `jsonschema-rs` `is_valid` and
    the compiled matchers of the expected call at the same position, stopping at the
    first difference. No reason, no detail, no records, no hygiene, no matching of
    reordered calls: what any judge in Python pays at least."""
    plans: dict[str, tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]] = {}
    for entry in evalset.entries:
        toolset = evalset.toolset_of(entry.id)
        validators = {
            t.name: jsonschema_rs.validator_for(t.function.parameters) for t in toolset.tools
        }
        calls = getattr(evalset.expects[entry.id], "calls", None) or []
        expected = [
            (c.name, {k: compile_matcher(m) for k, m in c.arguments.items()}) for c in calls
        ]
        plans[entry.id] = (validators, expected)

    def judge(record: GenerationRecord) -> bool:
        validators, expected = plans[record.entry_id]
        text = record.text
        start = text.find("<tool_call>")
        if start < 0:
            return not expected
        found = []
        while start >= 0:
            end = text.find("</tool_call>", start)
            try:
                found.append(orjson.loads(text[start + 11 : end]))
            except orjson.JSONDecodeError:
                return False
            start = text.find("<tool_call>", end)
        if len(found) != len(expected):
            return False
        for call, (name, matchers) in zip(found, expected, strict=True):
            arguments = call.get("arguments") if isinstance(call, dict) else None
            if not isinstance(arguments, dict) or call.get("name") != name:
                return False
            if not validators[name].is_valid(arguments):
                return False
            if not all(check(arguments.get(k)) for k, check in matchers.items()):
                return False
        return True

    def run() -> None:
        for record in records:
            judge(record)

    return _timed(len(records), run)


def time_bfcl(cases: list[Case]) -> Timing:
    from bfcl_eval.model_handler.parser.json_parser import parse_json_function_call

    def run() -> None:
        for raw, answer, category, text in cases:
            decoded = parse_json_function_call(text) if text.startswith("[") else []
            calls = [(n, a) for call in decoded for n, a in call.items()]
            bfcl_passes(raw, answer, category, calls)

    return _timed(len(cases), run)


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
    runs: dict[str, list[Timing]] = {"bfcl": [], "judge": [], "score": [], "floor": []}
    with no_cyclic_gc():  # as `loragate score` runs; BFCL's side gains from it too
        for _ in range(args.repeats):
            runs["bfcl"].append(time_bfcl(theirs))
            runs["judge"].append(time_loragate(evalset, ours, "judge"))
            runs["score"].append(time_loragate(evalset, ours, "score"))
            runs["floor"].append(time_floor(evalset, ours))
    labels = {
        "bfcl": "BFCL parse + ast_checker",
        "judge": "loragate Scorer.judge",
        "score": "loragate Scorer.score",
        "floor": "floor (no reasons)",
    }
    for key, label in labels.items():
        cpu = statistics.median(t[0] for t in runs[key])
        wall = statistics.median(t[1] for t in runs[key])
        each = ", ".join(f"{t[0]:,.0f}" for t in runs[key])
        print(f"{label:<26} median {cpu:>8,.0f} cases/s CPU, {wall:>8,.0f} wall ({each})")
    for key in ("judge", "score", "floor"):
        ratios = [ours_t[0] / bf_t[0] for ours_t, bf_t in zip(runs[key], runs["bfcl"], strict=True)]
        shown = ", ".join(f"{r:.2f}" for r in ratios)
        print(
            f"ratio {labels[key]} / BFCL (CPU, per run): median {statistics.median(ratios):.2f} "
            f"({shown}); "
            + ("not a scorer: the floor" if key == "floor" else "issue 8 asks for >= 3")
        )


if __name__ == "__main__":
    main()
