"""Scoring time of hostile model output (a benchmark, not a test).

The free-text checks of the families run many regular expressions on what the model
wrote; one with a run that backtracks (`\\w[^?]*?\\bor` was one) turns a long output
into seconds of work per sample. This script judges long texts of repeated
fragments (each alone and in pairs: words, "or", commas, question marks, offers,
numbers, `<think>`, ...; 40,000 characters, twice what the text checks read) against
the first entries of every agent20 family, with a fresh `Scorer` per entry, and prints
the slowest cases beside the median time of a plain answer of the same length. A
scorer that is linear in its input stays within a small multiple of that baseline.

    python benchmarks/bench_hostile_text.py [--entries 3] [--show 10]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

from loragate.evalset.load import load_evalset
from loragate.formats.evalset import Entry
from loragate.formats.records import GenerationRecord
from loragate.score.scoring import Scorer

EVALSET = Path(__file__).resolve().parent.parent / "evalsets" / "agent20"
SIZE = 40_000

FRAGMENTS = [
    "word ",
    "or ",
    "a, ",
    "Shall I send ",
    "? ",
    "which ",
    "could you ",
    "not ",
    "I will ",
    "the ",
    "don't ",
    "1,000 ",
    "CHF 5 ",
    "<think>",
    "\n",
    "- ",
    "I'd need the ",
    "done. ",
    "and ",
    "! ",
    '{"name": ',
    "<tool_call>",
]


def hostile_texts() -> dict[str, str]:
    """Name -> text of about `SIZE` characters."""
    texts = {f"{f!r}": f * (SIZE // len(f)) for f in FRAGMENTS}
    for a, b in itertools.combinations(["word ", "or ", "a, ", "which ", "not ", "? ", "1 "], 2):
        texts[f"{a + b!r}"] = (a + b) * (SIZE // len(a + b))
    texts["offer with choices"] = "Shall I send " + "x or " * (SIZE // 5) + "?"
    return texts


PLAIN = ("The invoice was paid on Monday and the receipt went to the finance team as agreed. ") * (
    SIZE // 84
)


def judge_seconds(scorer: Scorer, entry: Entry, text: str) -> float:
    record = GenerationRecord.model_construct(entry_id=entry.id, adapter="a", sample=0, text=text)
    start = time.perf_counter()
    scorer.judge(record)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=3, help="entries per family")
    parser.add_argument("--show", type=int, default=10, help="slowest cases to print")
    args = parser.parse_args()
    evalset = load_evalset(EVALSET)
    by_family: dict[str, list[Entry]] = {}
    for entry in evalset.entries:
        by_family.setdefault(entry.family, []).append(entry)
    texts = hostile_texts()
    plain: list[float] = []
    cases: list[tuple[float, str, str, str]] = []
    for family, entries in sorted(by_family.items()):
        for entry in entries[: args.entries]:
            plain.append(judge_seconds(Scorer(evalset), entry, PLAIN))
            for name, text in texts.items():
                seconds = judge_seconds(Scorer(evalset), entry, text)
                cases.append((seconds, family, entry.id, name))
    baseline = statistics.median(plain)
    cases.sort(reverse=True)
    print(
        f"{len(cases)} hostile cases ({len(texts)} texts of ~{SIZE:,} chars x "
        f"{len(plain)} entries); plain answer of the same length: median {baseline:.3f} s"
    )
    for seconds, family, entry_id, name in cases[: args.show]:
        print(f"  {seconds:7.3f} s  {seconds / baseline:5.1f}x  {family:<16} {entry_id:<22} {name}")


if __name__ == "__main__":
    main()
