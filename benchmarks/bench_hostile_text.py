"""Scoring time of hostile model output (a benchmark, not a test).

The free-text checks of the families run many regular expressions on what the model
wrote; one with a run that backtracks (`\\w[^?]*?\\bor` was one) turns a long output
into seconds of work per sample. This script judges long texts of repeated
fragments (each alone and in pairs: words, "or", commas, question marks, offers,
numbers, `<think>`, Qwen3 XML tags, ...; 40,000 characters, twice what the text checks read) against
the first entries of every agent20 family, with a fresh `Scorer` per entry, and prints
the slowest cases beside the median time of a plain answer of the same length. A
scorer that is linear in its input stays within a small multiple of that baseline.
Issue 22's bad Qwen3 XML input (`<function=` with no name, a parameter outside a
function, 10,000 parameters, a 10 MB value, nested tags, an unknown tool) is judged at
its own size under the Hermes and the Qwen3 XML stacks, its time a character printed
against a plain answer's.

    python benchmarks/bench_hostile_text.py [--entries 3] [--show 10]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
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
    "</think>",
    "<function=",
    "<function=f>",
    "<parameter=",
    "<parameter=a>",
    "</parameter>",
    "</function>",
]


def hostile_texts() -> dict[str, str]:
    """Name -> text of about `SIZE` characters."""
    texts = {f"{f!r}": f * (SIZE // len(f)) for f in FRAGMENTS}
    for a, b in itertools.combinations(["word ", "or ", "a, ", "which ", "not ", "? ", "1 "], 2):
        texts[f"{a + b!r}"] = (a + b) * (SIZE // len(a + b))
    texts["offer with choices"] = "Shall I send " + "x or " * (SIZE // 5) + "?"
    return texts


def xml_texts() -> dict[str, str]:
    """Issue 22's bad Qwen3 XML input, each at its own size (judged under both stacks)."""
    many = "".join(f"<parameter=p{i}>\n{i}\n</parameter>\n" for i in range(10_000))
    return {
        "XML <function= with no name": "<tool_call>\n<function=\n</tool_call>" * 2000,
        "XML parameter outside a function": "<tool_call>\n<parameter=a>\n1\n</parameter>\n</tool_call>"
        * 1000,
        "XML 10,000 parameters": f"<tool_call>\n<function=get_invoice>\n{many}</function>\n</tool_call>",
        "XML 10 MB value": "<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\n"
        + "x" * 10_000_000
        + "\n</parameter>\n</function>\n</tool_call>",
        "XML nested tags": "<tool_call><function=f><parameter=a><tool_call><function=g>"
        "<parameter=b></parameter></function></tool_call></parameter></function></tool_call>" * 400,
        "XML unknown tool": "<tool_call>\n<function=delete_everything>\n<parameter=now>\ntrue\n"
        "</parameter>\n</function>\n</tool_call>" * 64,
        "XML 100k unclosed <parameter=": "<function=f>" + "<parameter=" * 100_000,
    }


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
    xml_stack = ServingStack("qwen3_xml", "qwen3", False)
    for family, entries in sorted(by_family.items()):
        for entry in entries[: args.entries]:
            plain.append(judge_seconds(Scorer(evalset), entry, PLAIN))
            for name, text in texts.items():
                seconds = judge_seconds(Scorer(evalset), entry, text)
                cases.append((seconds, family, entry.id, name))
                seconds = judge_seconds(Scorer(evalset, stack=xml_stack), entry, text)
                cases.append((seconds, family, entry.id, name + " (qwen3_xml stack)"))
    # The XML cases, at their own sizes: the time a character against a plain answer's.
    per_char = statistics.median(plain) / len(PLAIN)
    print("Qwen3 XML bad input (issue 22), first entry of each family, both stacks:")
    for name, text in xml_texts().items():
        worst = 0.0
        for entries in by_family.values():
            for stack in (DEFAULT_STACK, xml_stack):
                worst = max(worst, judge_seconds(Scorer(evalset, stack=stack), entries[0], text))
        print(
            f"  {worst:7.3f} s  {worst / (per_char * len(text)):5.1f}x a plain answer's time "
            f"a character  {len(text):>11,} chars  {name}"
        )
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
