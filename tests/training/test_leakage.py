"""Leakage check: planted duplicates and near-duplicates of eval entries are caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from loragate.evalset.load import Evalset, load_evalset
from loragate.training.example import TrainingExample
from loragate.training.leakage import LeakageIndex, check_leakage, light_normalize, tokens


def _ex(eid: str, text: str, source: str = "planted") -> TrainingExample:
    return TrainingExample(
        id=eid,
        source=source,
        messages=[{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}],
    )


@pytest.fixture(scope="module")
def agent20(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


@pytest.fixture(scope="module")
def index(agent20: Evalset) -> LeakageIndex:
    return LeakageIndex.from_evalset(agent20)


def test_normalisation() -> None:
    assert light_normalize("  Is  INV-1\tpaid? ") == "is inv-1 paid?"
    assert tokens("Is INV-58213 paid, already?!") == ["is", "inv", "#", "paid", "already"]


def test_planted_duplicate_and_near_duplicates_are_caught(
    agent20: Evalset, index: LeakageIndex
) -> None:
    original = agent20.by_id["A-001"].messages[0].content or ""
    assert original.startswith("Is INV-58213 paid already")
    examples = [
        _ex("dup", original),
        _ex("case", "  " + original.upper().replace(" ", "   ") + " "),
        # Other slot values and two words changed: a templated copy.
        _ex("near", "Is INV-71234 paid yet? Rigi Logistik keeps chasing us about it."),
        # The eval question pasted into a longer prompt.
        _ex(
            "contained",
            "Context: vendor escalation, finance team. " + original + " Please hurry.",
        ),
        _ex("unrelated", "Please summarise the quarterly maintenance plan for press line 4."),
        _ex("short", "yes, go ahead"),
    ]
    report = check_leakage(examples, index)
    kinds = {h.example_id: h.kind for h in report.hits}
    assert kinds == {"dup": "exact", "case": "exact", "near": "near", "contained": "near"}
    assert {h.entry_id for h in report.hits} == {"A-001"}
    assert report.counts() == {"exact": 2, "near": 2}
    assert report.flagged_ids == {"dup", "case", "near", "contained"}
    assert all("A-001" in line for line in report.lines())
    as_json = report.to_json()
    assert as_json["flagged_examples"] == 4


def test_multi_turn_user_turns_and_fault_variants(agent20: Evalset, index: LeakageIndex) -> None:
    # Every user turn counts, and a fault-expanded entry is reported by its written id.
    recovery = next(e for e in agent20.entries if e.fault is not None)
    text = next(m.content for m in recovery.messages if m.role == "user") or ""
    ex = TrainingExample(
        id="mt",
        messages=[
            {"role": "user", "content": "Hello there, a question for you today."},
            {"role": "assistant", "content": "Sure."},
            {"role": "user", "content": text},
            {"role": "assistant", "content": "ok"},
        ],
    )
    hits = check_leakage([ex], index).hits
    assert hits and hits[0].kind == "exact"
    assert "~" not in hits[0].entry_id


def test_thresholds_are_configurable() -> None:
    idx = LeakageIndex(
        [("X-1", "the quick brown fox jumps over the lazy dog")], threshold=0.95, containment=0.95
    )
    loose = LeakageIndex([("X-1", "the quick brown fox jumps over the lazy dog")], threshold=0.3)
    ex = _ex("a", "the quick brown cat jumps over the lazy dog")
    assert check_leakage([ex], idx).hits == []
    assert [h.kind for h in check_leakage([ex], loose).hits] == ["near"]
    with pytest.raises(ValueError):
        LeakageIndex([], threshold=0)
