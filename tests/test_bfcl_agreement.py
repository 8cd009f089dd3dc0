"""loragate's verdicts against BFCL's own checker (`bfcl-eval` from PyPI, in CI).

Every entry of the default BFCL categories is imported, each gets mutated outputs
(`tests._bfcl.mutations`: correct, no call, wrong name, duplicated call, missing /
extra / wrong-type / wrong-value argument, case changes, int as float, reordered
parallel calls; for irrelevance an answer, a refusal and a call), and each output is
judged twice: by loragate's parser and family scorer on the `<tool_call>` text, and
by BFCL's `ast_checker` on the same calls. Where the two disagree, the case must fall
into a named class of known, documented differences (README: "BFCL"), and the count
of every class is pinned: a new kind of disagreement, or a known one growing or
shrinking, fails the test.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from loragate.common.files import replace_files
from loragate.evalset.bfcl import (
    DEFAULT_CATEGORIES,
    Semantics,
    build_entries,
    data_dir,
    evalset_files,
    read_category,
)
from loragate.evalset.load import load_evalset
from loragate.formats.records import GenerationRecord, ReasonCode, Verdict
from loragate.score.scoring import Scorer
from tests._bfcl import bfcl_passes, mutations, tool_call_text

KNOWN_DIFFERENCES: dict[str, dict[str, int]] = {
    "loragate": {
        "loose_strings": 937,
        "integer_as_float": 876,
        "enum_not_checked": 1003,
        "schema_invalid_answer": 199,
        "refusal_on_irrelevance": 240,
        "greedy_parallel": 1,
    },
    "bfcl": {
        "enum_not_checked": 1003,
        "schema_invalid_answer": 199,
        "refusal_on_irrelevance": 240,
        "greedy_parallel": 1,
    },
}
"""Disagreements per class, per import semantics (README, section "BFCL")."""

CASES = 22_472
"""Mutated outputs over the 2,551 entries of the default categories."""


def difference_class(kind: str, verdict: Verdict, bfcl_pass: bool) -> str:
    """The named class of a disagreement (`unnamed: ...` when none fits)."""
    reason = verdict.reason
    if not bfcl_pass:
        if kind == "reordered" and verdict.passed:
            return "greedy_parallel"  # BFCL matches parallel calls greedily, in answer order
        if kind == "int_as_float" and verdict.passed:
            return "integer_as_float"  # JSON Schema's integer is any whole number
    elif kind == "refusal" and reason == ReasonCode.refusal:
        return "refusal_on_irrelevance"  # BFCL: any reply without a call passes
    elif kind == "case_change" and reason == ReasonCode.schema_invalid:
        return "enum_not_checked"  # BFCL ignores `enum` and compares case-insensitively
    elif kind == "case_change" and reason == ReasonCode.arg_mismatch:
        return "loose_strings"  # BFCL compares strings case-insensitively
    elif reason == ReasonCode.schema_invalid:
        return "schema_invalid_answer"  # BFCL's answer breaks the tool's own schema
    return f"unnamed: {kind}, loragate {reason.value}, bfcl {'pass' if bfcl_pass else 'fail'}"


@cache
def agreement(semantics: Semantics, folder: Path) -> tuple[int, Counter[str], dict[str, list[str]]]:
    """(cases, disagreements per class, example entry ids per class). The evalset is
    written to `folder`, loaded and validated by `load_evalset`, and every output is
    scored by `Scorer` (parser and family scorer) as `loragate score` does."""
    entries, _ = build_entries(DEFAULT_CATEGORIES, semantics)
    replace_files(folder, evalset_files(entries, list(DEFAULT_CATEGORIES), semantics, "test"))
    scorer = Scorer(load_evalset(folder))
    cases = 0
    classes: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    for category in DEFAULT_CATEGORIES:
        raws, answers = read_category(data_dir(), category)
        for raw in raws:
            answer = answers.get(raw["id"])
            for kind, output in mutations(raw, answer, category):
                text = output if isinstance(output, str) else tool_call_text(output)
                record = GenerationRecord(entry_id=raw["id"], adapter="m", sample=0, text=text)
                verdict = scorer.score(record).verdict
                calls = [] if isinstance(output, str) else output
                bfcl_pass = bfcl_passes(raw, answer, category, calls)
                cases += 1
                if verdict.passed != bfcl_pass:
                    name = difference_class(kind, verdict, bfcl_pass)
                    classes[name] += 1
                    examples.setdefault(name, []).append(raw["id"])
    return cases, classes, examples


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {s: tmp_path_factory.mktemp(f"bfcl-{s}") for s in ("loragate", "bfcl")}


@pytest.mark.parametrize("semantics", ["loragate", "bfcl"])
def test_verdicts_agree_with_bfcls_checker_but_for_named_classes(
    semantics: Semantics, folders: dict[str, Path]
) -> None:
    cases, classes, examples = agreement(semantics, folders[semantics])
    assert cases == CASES
    unnamed = {k: examples[k][:5] for k in classes if k.startswith("unnamed")}
    assert unnamed == {}
    assert dict(classes) == KNOWN_DIFFERENCES[semantics]


def test_greedy_parallel_is_parallel_178(folders: dict[str, Path]) -> None:
    _, _, examples = agreement("bfcl", folders["bfcl"])
    assert examples["greedy_parallel"] == ["parallel_178"]
