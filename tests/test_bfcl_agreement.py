"""loragate's verdicts against BFCL's own checker (`bfcl-eval` from PyPI, in CI).

Every entry of the default BFCL categories and of `live_irrelevance` is imported, each
gets mutated outputs (`tests._bfcl.mutations`: correct, no call, wrong name,
duplicated call, missing / extra / wrong-type / wrong-value argument, case changes, int
as float, reordered parallel calls; for the irrelevance categories an answer, the
honest "I can't do that with the tools I have.", a bare refusal, an invented figure, a
call, a broken call and a call written as bare JSON), and each output is judged twice:
by loragate's parser and family scorer on the text, and by BFCL's `ast_checker` (or,
for irrelevance, BFCL's rule that any decoded call fails) on the same calls. Where the
two disagree, the case must fall into a named class of known, documented differences
(docs/bfcl.md), and the count of every class is pinned: a new kind of disagreement, or
a known one growing or shrinking, fails the test. On the irrelevance categories the
semantics coincide except for loragate's stricter abstain rule (`ABSTAIN_CLASSES`);
there, and everywhere under `--semantics bfcl`, agreement is 100 %.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
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

pytestmark = pytest.mark.bfcl

AGREEMENT_CATEGORIES = (*DEFAULT_CATEGORIES, "live_irrelevance")

KNOWN_DIFFERENCES: dict[str, dict[str, int]] = {
    "loragate": {
        "loose_strings": 937,
        "integer_as_float": 876,
        "enum_not_checked": 1003,
        "schema_invalid_answer": 199,
        "greedy_parallel": 1,
        "attempted_call": 2244,
        "invented_answer": 1124,
        "bare_refusal": 1124,
    },
    "bfcl": {
        "enum_not_checked": 1003,
        "schema_invalid_answer": 199,
        "greedy_parallel": 1,
    },
}
"""Disagreements per class, per import semantics (docs/bfcl.md, "Agreement")."""

ABSTAIN_CLASSES = ("attempted_call", "invented_answer", "bare_refusal")
"""Where loragate's abstain rule is stricter than BFCL's irrelevance rule on purpose: a
broken or bare-JSON call attempt is a call, an invented figure is no abstention, a
bare refusal gives no reason. Only under `--semantics loragate`."""

CASES = 29_612
"""Mutated outputs over the 3,435 entries of the default categories and live_irrelevance."""


def difference_class(kind: str, verdict: Verdict, bfcl_pass: bool) -> str:
    """The named class of a disagreement (`unnamed: ...` when none fits)."""
    reason = verdict.reason
    if not bfcl_pass:
        if kind == "reordered" and verdict.passed:
            return "greedy_parallel"  # BFCL matches parallel calls greedily, in answer order
        if kind == "int_as_float" and verdict.passed:
            return "integer_as_float"  # JSON Schema's integer is any whole number
    elif kind in ("broken_call", "bare_call") and reason == ReasonCode.called_when_should_not:
        return "attempted_call"  # BFCL decodes no call, so it passes; an attempt is a call
    elif kind == "invented" and reason == ReasonCode.invented_answer:
        return "invented_answer"  # BFCL passes any reply without a call
    elif kind == "refusal" and reason == ReasonCode.refusal:
        return "bare_refusal"  # BFCL passes any reply without a call; it gives no reason
    elif kind == "case_change" and reason == ReasonCode.schema_invalid:
        return "enum_not_checked"  # BFCL ignores `enum` and compares case-insensitively
    elif kind == "case_change" and reason == ReasonCode.arg_mismatch:
        return "loose_strings"  # BFCL compares strings case-insensitively
    elif reason == ReasonCode.schema_invalid:
        return "schema_invalid_answer"  # BFCL's answer breaks the tool's own schema
    return f"unnamed: {kind}, loragate {reason.value}, bfcl {'pass' if bfcl_pass else 'fail'}"


@dataclass
class Agreement:
    """What the comparison found: cases, disagreements per class, example entry ids per
    class, and per category (cases, agreeing cases)."""

    scorer: Scorer
    cases: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    by_category: dict[str, list[int]] = field(default_factory=dict)
    irrelevance_kinds: dict[str, list[int]] = field(default_factory=dict)
    """Per mutation kind on the irrelevance categories: (cases, loragate passes)."""


@cache
def agreement(semantics: Semantics, folder: Path) -> Agreement:
    """The evalset is written to `folder`, loaded and validated by `load_evalset`, and
    every output is scored by `Scorer` (parser and family scorer) as `loragate score`
    does."""
    entries, _ = build_entries(AGREEMENT_CATEGORIES, semantics)
    replace_files(folder, evalset_files(entries, list(AGREEMENT_CATEGORIES), semantics, "test"))
    found = Agreement(Scorer(load_evalset(folder)))
    for category in AGREEMENT_CATEGORIES:
        counts = found.by_category.setdefault(category, [0, 0])
        raws, answers = read_category(data_dir(), category)
        for raw in raws:
            answer = answers.get(raw["id"])
            for kind, output in mutations(raw, answer, category):
                text = output if isinstance(output, str) else tool_call_text(output)
                record = GenerationRecord(entry_id=raw["id"], adapter="m", sample=0, text=text)
                verdict = found.scorer.score(record).verdict
                calls = [] if isinstance(output, str) else output
                bfcl_pass = bfcl_passes(raw, answer, category, calls)
                found.cases += 1
                counts[0] += 1
                if "irrelevance" in category:
                    tally = found.irrelevance_kinds.setdefault(kind, [0, 0])
                    tally[0] += 1
                    tally[1] += verdict.passed
                if verdict.passed == bfcl_pass:
                    counts[1] += 1
                    continue
                name = difference_class(kind, verdict, bfcl_pass)
                found.classes[name] += 1
                found.examples.setdefault(name, []).append(raw["id"])
    return found


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {s: tmp_path_factory.mktemp(f"bfcl-{s}") for s in ("loragate", "bfcl")}


@pytest.mark.parametrize("semantics", ["loragate", "bfcl"])
def test_verdicts_agree_with_bfcls_checker_but_for_named_classes(
    semantics: Semantics, folders: dict[str, Path]
) -> None:
    found = agreement(semantics, folders[semantics])
    assert found.cases == CASES
    unnamed = {k: found.examples[k][:5] for k in found.classes if k.startswith("unnamed")}
    assert unnamed == {}
    assert dict(found.classes) == KNOWN_DIFFERENCES[semantics]


@pytest.mark.parametrize("semantics", ["loragate", "bfcl"])
def test_irrelevance_agrees_100_percent_where_the_semantics_coincide(
    semantics: Semantics, folders: dict[str, Path]
) -> None:
    found = agreement(semantics, folders[semantics])
    stricter = sum(found.classes[c] for c in ABSTAIN_CLASSES) if semantics == "loragate" else 0
    cases = sum(found.by_category[c][0] for c in ("irrelevance", "live_irrelevance"))
    agreeing = sum(found.by_category[c][1] for c in ("irrelevance", "live_irrelevance"))
    assert (cases, agreeing + stricter) == (7_860, 7_860)
    if semantics == "bfcl":
        assert agreeing == cases  # BFCL's own rule: 100 % of every irrelevance output


def test_the_honest_decline_passes_every_irrelevance_entry_and_an_invented_price_fails(
    folders: dict[str, Path],
) -> None:
    """BFCL's irrelevance and live_irrelevance (1,124 entries): "I can't do that with the
    tools I have." passes all of them under both semantics; "Bitcoin is 43,210 USD."
    passes all under BFCL's rule and fails all under loragate's."""
    for semantics in ("loragate", "bfcl"):
        kinds = agreement(semantics, folders[semantics]).irrelevance_kinds
        assert kinds["no_tool"] == [1124, 1124]
        assert kinds["invented"] == [1124, 1124 if semantics == "bfcl" else 0]


LABELLED = Path(__file__).parent / "data" / "labelled_bfcl_abstain.jsonl"


def test_hand_labelled_bfcl_abstentions_agree(folders: dict[str, Path]) -> None:
    """44 outputs over 15 irrelevance entries, labelled before the scorer saw them
    (loragate semantics): every verdict agrees with its label."""
    scorer = agreement("loragate", folders["loragate"]).scorer
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 40
    wrong = []
    for row in rows:
        record = GenerationRecord(entry_id=row["entry_id"], adapter="m", sample=0, text=row["text"])
        verdict = scorer.score(record).verdict
        if verdict.passed != row["expect_pass"]:
            wrong.append((row["entry_id"], row["why"], verdict.reason.value))
    assert wrong == []


def test_greedy_parallel_is_parallel_178(folders: dict[str, Path]) -> None:
    assert agreement("bfcl", folders["bfcl"]).examples["greedy_parallel"] == ["parallel_178"]
