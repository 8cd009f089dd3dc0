"""Agreement with hand-labelled outputs: every labelled agent20 output gets the verdict
its human reviewer wrote down (labelled before any scorer ran; see
`tests/data/labelled/README.md`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.parsing import parse_output
from loragate.evalset.load import Evalset, load_evalset
from loragate.families import Sample, ScoringContext, get_family
from loragate.formats.records import Verdict

LABELLED = Path(__file__).parent / "data" / "labelled"
FILES = sorted(LABELLED.glob("*.jsonl"))
ROWS: list[tuple[str, int, dict[str, Any]]] = [
    (f.name, i, json.loads(line))
    for f in FILES
    for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
    if line.strip()
]
MIN_REASON_AGREEMENT = 0.85
"""Share of failing outputs whose scorer reason is one the reviewer listed. Where they
differ, both usually describe the failure (`missing_content` for an answer the reviewer
called `wrong_answer`); pass/fail must agree everywhere."""


@pytest.fixture(scope="module")
def evalset(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


def verdict_of(evalset: Evalset, row: dict[str, Any]) -> Verdict:
    entry = evalset.by_id[row["entry_id"]]
    ctx = ScoringContext(
        toolset=evalset.toolset, policy=evalset.policy, system_prompt=evalset.manifest.system_prompt
    )
    sample = Sample(
        entry=entry, expect=evalset.expects[entry.id], parse=parse_output(row["text"]), ctx=ctx
    )
    return get_family(entry.family).score(sample)


def test_the_labelled_sets_are_there() -> None:
    assert len(ROWS) >= 500
    per_family = {r["entry_id"][0] for _, _, r in ROWS}
    assert per_family == set("ABCDEFGH")


@pytest.mark.parametrize(
    "where,row", [((f"{f}:{i}"), r) for f, i, r in ROWS], ids=[f"{f}:{i}" for f, i, _ in ROWS]
)
def test_verdict_agrees_with_the_label(where: str, row: dict[str, Any], evalset: Evalset) -> None:
    v = verdict_of(evalset, row)
    assert v.passed is row["expect_pass"], (
        f"{where} {row['entry_id']}: labelled {'pass' if row['expect_pass'] else 'fail'} "
        f"({row.get('why', '')}), scored {v.reason.value}: {v.detail}"
    )


def test_reasons_mostly_agree(evalset: Evalset) -> None:
    failing = [r for _, _, r in ROWS if not r["expect_pass"]]
    same = sum(1 for r in failing if verdict_of(evalset, r).reason.value in r["reasons"])
    assert same / len(failing) >= MIN_REASON_AGREEMENT, f"{same}/{len(failing)}"
