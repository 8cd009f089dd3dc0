"""Golden test: hand-written model outputs for every agent20 entry get the verdicts
their authors wrote down (one passing output per entry, plus failing outputs for each
reason code), through the real parser and the real family scorers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from loragate.calls.parsing import parse_output
from loragate.evalset.load import Evalset, load_evalset
from loragate.families import Sample, ScoringContext, get_family
from loragate.formats.records import ReasonCode

DATA = Path(__file__).parent / "data" / "agent20_reference_outputs.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def evalset(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


def test_every_entry_has_a_passing_reference(evalset: Evalset) -> None:
    passing = {r["entry_id"] for r in ROWS if r["expect_pass"]}
    missing = [e.id for e in evalset.entries if e.id not in passing]
    assert missing == []


def test_references_cover_every_failing_reason_the_families_emit() -> None:
    reasons = Counter(r["reason"] for r in ROWS if not r["expect_pass"])
    # truncated_reasoning is given by the scorer from the finish reason, not by a family
    expected = {c.value for c in ReasonCode} - {"ok", "truncated_reasoning"}
    assert expected - set(reasons) == set(), reasons


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['entry_id']}-{i}" for i, r in enumerate(ROWS)])
def test_reference_verdict(row: dict[str, object], evalset: Evalset) -> None:
    entry = evalset.by_id[str(row["entry_id"])]
    sample = Sample(
        entry=entry,
        expect=evalset.expects[entry.id],
        parse=parse_output(str(row["text"])),
        ctx=ScoringContext(toolset=evalset.toolset, policy=evalset.policy),
    )
    verdict = get_family(entry.family).score(sample)
    assert (verdict.passed, verdict.reason.value) == (row["expect_pass"], row["reason"]), (
        verdict.detail
    )
