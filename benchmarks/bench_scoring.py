"""Scoring throughput on the bundled evalset (a benchmark, not a test).

Builds a synthetic generations set over `evalsets/agent20` - per entry a mix of
realistic outputs: the expected call(s), a wrong tool, a direct answer, broken JSON, a
`<think>` block before the call, an extra call, junk - and times, in this process:

1. `score_records` (checks + parse + family verdicts; no I/O),
2. `finish_run` (the above + summary + report + writing the run folder),
3. `read_generations` (reading the JSONL file back, as `loragate score` does),
4. `loragate score` end to end in a new process (start-up, reading, scoring, writing
   the run folder), as a user runs it: with `--jobs 1` (one process) and with
   `--jobs 0` (one process per core judging the distinct outputs), each timed in wall
   clock and in CPU seconds of the process and its workers, alternating.

Prints the median samples/s of `--repeats` runs. The targets are >= 20,000 samples/s
CPU for (1) and >= 50,000 samples/s wall for (4) on 200,000 samples (issue 8; the lead
asked for >= 20,000 wall). Usage:

    python benchmarks/bench_scoring.py [--samples 200000] [--repeats 3] [--unique]
                                       [--parse-mode lenient] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from loragate.evalset.load import Evalset, load_evalset
from loragate.evaluation import finish_run
from loragate.families import CallSpec, get_family
from loragate.formats.evalset import Entry
from loragate.formats.records import DEFAULT_PARSE_MODE, PARSE_MODES, GenerationRecord
from loragate.formats.runfolder import read_generations
from loragate.score.scoring import score_records

REPO = Path(__file__).resolve().parent.parent
EVALSET = REPO / "evalsets" / "agent20"


# -- synthetic outputs ---------------------------------------------------------------


def _from_regex(pattern: str) -> str | None:
    """A string the pattern matches, for simple alternations like `(?i)badge|reader`."""
    body = re.sub(r"^\(\?[a-zA-Z]+\)", "", pattern)
    for alt in body.split("|"):
        candidate = re.sub(r"[\\^$()\[\]?*+.{}]|\\b", "", alt).strip()
        if candidate and re.search(pattern, candidate):
            return candidate
    return None


_SKIP = object()


def _value(matcher: Any) -> Any:
    """A value satisfying a matcher, or _SKIP when it is `$absent` or not derivable."""
    if isinstance(matcher, dict) and len(matcher) == 1 and next(iter(matcher)).startswith("$"):
        op, arg = next(iter(matcher.items()))
        if op == "$any":
            return _value(arg[0])
        if op == "$contains":
            return f"{arg} (as discussed)"
        if op == "$regex":
            found = _from_regex(arg)
            return _SKIP if found is None else found
        if op == "$present":
            return "2026-11-16"
        return _SKIP
    return matcher


def _call(spec: CallSpec) -> dict[str, Any]:
    args = {k: v for k, m in spec.arguments.items() if (v := _value(m)) is not _SKIP}
    return {"name": spec.name, "arguments": args}


def _block(call: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps(call, ensure_ascii=False) + "\n</tool_call>"


def _good(entry: Entry, evalset: Evalset) -> str:
    family = get_family(entry.family)
    expect = evalset.expects[entry.id]
    specs = family.referenced_calls(expect)
    mode = getattr(expect, "mode", None)
    if entry.family == "governance" and mode == "confirm_first":
        action = getattr(expect, "action", None)
        name = action.name if action is not None else "send_email"
        return _block(
            {
                "name": "request_confirmation",
                "arguments": {"action": name, "summary": f"I will run {name} as you asked."},
            }
        )
    if entry.family == "governance" and mode == "honour_denial":
        return "Understood - the request was declined, so I have not done it."
    if entry.family == "clarify":
        mentions = getattr(expect, "question_mentions", []) or ["details"]
        return f"Happy to help. Which {mentions[0]} should I use?"
    if entry.family == "should_not_call":
        return (
            "Under Swiss law the standard retention period for business records is ten "
            "years (Art. 958f CO); accounting vouchers fall under the same rule."
        )
    if entry.family == "recovery" and not specs:
        return "The tool returned an error, so I could not finish this. Shall I try again?"
    return "\n".join(_block(_call(s)) for s in specs) if specs else "Done."


def outputs_for(entry: Entry, evalset: Evalset) -> list[tuple[float, str]]:
    """(weight, text template) pairs; `{i}` is replaced by a per-sample number."""
    good = _good(entry, evalset)
    broken = good.replace("}}", "},}", 1) if "<tool_call>" in good else good + "<tool_call>{"
    return [
        (0.50, good),
        (0.10, "<think>\nThe user wants this done; step {i}: pick the tool.\n</think>\n" + good),
        (0.12, _block({"name": "web_search", "arguments": {"query": "question {i}"}})),
        (0.12, "I am not able to look that up right now (ref {i})."),
        (0.08, broken),
        (0.05, good + "\n" + _block({"name": "search_documents", "arguments": {"query": "{i}"}})),
        (0.03, "<tool_call>" + "[" * 40 + "{i}" + "\x00\ufffd" * 30),
    ]


def build_generations(
    evalset: Evalset, n_samples: int, seed: int = 0, unique: bool = False
) -> list[GenerationRecord]:
    """`n_samples` records spread over every entry (k = n_samples / entries samples each).

    By default about 37 % of the texts are unique (those with a per-sample number) and
    the rest repeat across the samples of an entry, as sampled tool calls do. With
    `unique`, every text is different (a tag is appended): the worst case for scoring,
    since no output is seen twice.
    """
    rng = random.Random(seed)
    pools = {e.id: outputs_for(e, evalset) for e in evalset.entries}
    k = max(1, n_samples // len(evalset.entries))
    out: list[GenerationRecord] = []
    for sample in range(k):
        for e in evalset.entries:
            weights, texts = zip(*pools[e.id], strict=True)
            text = rng.choices(texts, weights)[0].replace("{i}", str(rng.randrange(10**6)))
            if unique:
                text += f"\n(sample {sample})"
            out.append(
                GenerationRecord.model_construct(
                    entry_id=e.id, adapter="bench", sample=sample, text=text
                )
            )
    return out


# -- timing --------------------------------------------------------------------------


class Timer:
    """Wall-clock and this process's CPU time of a block (CPU time is robust to other
    processes competing for the cores; wall time is what a user waits)."""

    def __enter__(self) -> Timer:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0


def _median_rate(label: str, n: int, timers: list[Timer]) -> float:
    """Print the median rates; return samples per CPU second."""
    wall = statistics.median(t.wall for t in timers)
    cpu = statistics.median(t.cpu for t in timers)
    best = min(t.cpu for t in timers)
    runs = ", ".join(f"{t.wall:.2f}" for t in timers)
    print(
        f"{label:<28} median {n / wall:>9,.0f} samples/s wall, {n / cpu:>9,.0f} CPU "
        f"(best {n / best:,.0f} CPU); runs {runs} s wall"
    )
    return n / cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parse-mode", choices=PARSE_MODES, default=DEFAULT_PARSE_MODE)
    parser.add_argument("--profile", action="store_true", help="cProfile one scoring run")
    parser.add_argument("--unique", action="store_true", help="make every output text unique")
    args = parser.parse_args(argv)

    evalset = load_evalset(EVALSET)
    records = build_generations(evalset, args.samples, unique=args.unique)
    n = len(records)
    distinct = len({(r.entry_id, r.text) for r in records})
    print(
        f"{n:,} samples over {len(evalset.entries)} entries of {evalset.name} "
        f"{evalset.version} ({distinct / n:.0%} distinct outputs), parse mode "
        f"{args.parse_mode}, Python {sys.version.split()[0]}"
    )

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        score_records(evalset, records, args.parse_mode, progress=False)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return 0

    times: list[Timer] = []
    results = []
    for _ in range(args.repeats):
        with Timer() as t:
            results = score_records(evalset, records, args.parse_mode, progress=False)
        times.append(t)
    rate = _median_rate("score_records", n, times)
    passed = Counter(r.verdict.passed for r in results)
    reasons = Counter(r.verdict.reason.value for r in results)
    print(f"  pass rate {passed[True] / n:.1%}; reasons: {dict(reasons.most_common(6))}")

    finish: list[Timer] = []
    reads: list[Timer] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            with Timer() as t:
                finish_run(evalset, records, Path(tmp) / f"run{i}", args.parse_mode, progress=False)
            finish.append(t)
        size = (Path(tmp) / "run0" / "results.jsonl").stat().st_size
        gens = Path(tmp) / "generations.jsonl"
        gens.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
        for _ in range(args.repeats):
            with Timer() as t:
                read_generations(gens)
            reads.append(t)
    _median_rate("finish_run (incl. writing)", n, finish)
    print(f"  results.jsonl {size / 1e6:.0f} MB")
    _median_rate("read_generations", n, reads)
    target = 20_000
    verdict = "met" if rate >= target else "MISSED"
    print(f"target >= {target:,} samples/s (CPU) for score_records: {verdict}")
    for jobs, (wall, cpu) in _end_to_end(records, args.parse_mode, args.repeats).items():
        met = ", ".join(
            f">= {goal:,} wall: {'met' if n / wall >= goal else 'MISSED'}"
            for goal in (20_000, 50_000)
        )
        print(
            f"loragate score --jobs {jobs} end to end: median {n / wall:>7,.0f} samples/s "
            f"wall ({wall:.2f} s), {n / cpu:>7,.0f} per CPU second; {met}"
        )
    return 0


def _end_to_end(
    records: list[GenerationRecord], parse_mode: str, repeats: int
) -> dict[int, tuple[float, float]]:
    """Per `--jobs` value: median (wall seconds, CPU seconds of the process and its
    workers) of `loragate score` on `records` in a new process."""
    runs: dict[int, list[tuple[float, float]]] = {1: [], 0: []}
    with tempfile.TemporaryDirectory() as tmp:
        gens = Path(tmp) / "generations.jsonl"
        gens.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
        for i in range(repeats):
            for jobs, timings in runs.items():
                command = [
                    sys.executable,
                    "-c",
                    "from loragate.cli.app import main; main()",
                    "score",
                    "--generations",
                    str(gens),
                    "--evalset",
                    str(EVALSET),
                    "--out",
                    str(Path(tmp) / f"e2e{i}-{jobs}"),
                    "--parse-mode",
                    parse_mode,
                    "--jobs",
                    str(jobs),
                ]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
                wall = time.perf_counter() - t0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                timings.append((wall, cpu))
    return {
        jobs: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
        for jobs, ts in runs.items()
    }


if __name__ == "__main__":
    raise SystemExit(main())
