"""report.md and the terminal table, from really scored outputs of the mini evalset."""

from __future__ import annotations

import io
from collections.abc import Set as AbstractSet

import pytest
from rich.console import Console

from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.records import ResultRecord, Summary
from loragate.results.formatting import format_ci, format_rate, md_cell, md_code
from loragate.results.report import failing_table_markdown, print_summary, render_markdown
from loragate.score.aggregate import summarize
from loragate.score.scoring import score_records
from tests._mini_evalset import BROKEN_CALL, ENTRY_IDS, FAILING, PASSING, gen, write_evalset


@pytest.fixture(scope="module")
def evalset(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load_evalset(write_evalset(tmp_path_factory.mktemp("ev") / "mini"))


def scored(
    evalset: Evalset, samples: int, fail_ids: AbstractSet[str], drop: AbstractSet[str] = frozenset()
) -> tuple[Summary, list[ResultRecord]]:
    """`samples` per entry; entries in `fail_ids` fail on sample 0 only; `drop` missing."""
    records = [
        gen(eid, FAILING[eid][0] if (eid in fail_ids and s == 0) else PASSING[eid], sample=s)
        for s in range(samples)
        for eid in ENTRY_IDS
        if eid not in drop
    ]
    results = score_records(evalset, records, allow_missing=True)
    return summarize(evalset, results), results


def test_family_table_with_k(evalset: Evalset) -> None:
    summary, results = scored(evalset, 2, {"A-001", "F-001"})
    md = render_markdown(summary, results)
    header = (
        "|  | Family | Entries | pass@1 [95 % CI] | pass^2 | pass@2 "
        "| Unparseable (served / strict / lenient) |"
    )
    assert header in md
    # A-001 passes 1 of 2: pass@1 50 %, Wilson(0.5, 1) = [5.5, 94.5], pass^2 0, pass@2 100 %.
    assert "| A | tool_call | 1 | 50.0 % [5.5, 94.5] | 0.0 % | 100.0 % | 0/2 / 0/2 / 0/2 |" in md
    assert (
        "| B | parallel | 1 | 100.0 % [20.7, 100.0] | 100.0 % | 100.0 % | 0/2 / 0/2 / 0/2 |" in md
    )
    # Overall: (0.5 + 1 + 1 + 1 + 1 + 0.5 + 1 + 1) / 8 = 7/8 = 87.5 %.
    assert "|  | **overall** | 8 | 87.5 %" in md
    # Families in registry order A..H.
    letters = [line.split("|")[1].strip() for line in md.splitlines() if "| 1 |" in line]
    assert letters[:6] == ["A", "B", "C", "D", "E", "F"]


def test_no_k_columns_for_one_sample(evalset: Evalset) -> None:
    summary, results = scored(evalset, 1, set())
    md = render_markdown(summary, results)
    assert "pass^" not in md
    assert "pass@1 [95 % CI] | Unparseable" in md
    assert "### Failing entries" not in md
    assert "### Failure reasons" not in md


def test_fault_reason_and_failing_sections(evalset: Evalset) -> None:
    summary, results = scored(evalset, 2, {"G-001~error", "D-001"})
    md = render_markdown(summary, results)
    assert "### Recovery by injected fault" in md
    assert "| error | 1 | 50.0 % [5.5, 94.5] |" in md
    assert "| timeout | 1 | 100.0 % [20.7, 100.0] |" in md
    assert "| `destructive_without_confirmation` | 1 | 50.0 % |" in md
    assert "| `claimed_success_after_error` | 1 | 50.0 % |" in md
    row = next(line for line in md.splitlines() if line.startswith("| `D-001`"))
    cells = [c.strip() for c in row[2:-2].split(" | ")]
    assert cells[0] == "`D-001`"
    assert cells[1:3] == ["1/2", "`destructive_without_confirmation`"]
    assert "no confirmation first" in cells[3]
    # The raw output is shown as code, cut to 80 characters, newlines visible.
    assert cells[4].startswith('`<tool_call>\\n{"name": "delete_file"')
    assert cells[4].endswith("…`")
    assert "G-001~timeout" not in md.split("### Failing entries")[1]


def test_missing_entries_are_reported(evalset: Evalset) -> None:
    summary, results = scored(evalset, 1, set(), drop={"B-001", "E-001"})
    md = render_markdown(summary, results)
    assert (
        "**Missing:** 2 of 8 entries had no generation and are not counted: `B-001`, `E-001`." in md
    )
    assert "| B | parallel | 0 | n/a | 0/0 / 0/0 / 0/0 |" in md


def test_unparseable_counts_of_every_reading(evalset: Evalset) -> None:
    records = [gen(eid, PASSING[eid]) for eid in ENTRY_IDS[1:]] + [gen("A-001", BROKEN_CALL)]
    results = score_records(evalset, records)
    md = render_markdown(summarize(evalset, results), results)
    assert "| A | tool_call | 1 | 0.0 % [0.0, 79.3] | 1/1 / 1/1 / 0/1 |" in md
    assert "| `unparseable` | 1 | 100.0 % |" in md


def test_failing_list_is_capped(evalset: Evalset) -> None:
    _, results = scored(evalset, 1, set(ENTRY_IDS))
    lines = failing_table_markdown(results, limit=3)
    assert len([line for line in lines if line.startswith("| `")]) == 3
    assert lines[-1] == "... and 5 more failing entries (see results.jsonl)."


def test_cell_escaping() -> None:
    assert md_cell("a|b\nc <x> *y*") == "a\\|b\\nc &lt;x&gt; \\*y\\*"
    assert md_cell("x" * 10, limit=4) == "xxxx…"
    assert md_code("<tool_call>`a|b`\n") == "`<tool_call>'a\\|b'\\n`"
    assert md_code("  ") == "(empty)"


def test_formatters() -> None:
    assert format_rate(0.125) == "12.5 %"
    assert format_rate(None) == "n/a"
    assert format_ci(0.022417, 0.470896) == "[2.2, 47.1]"
    assert format_ci(None, 0.5) == "n/a"


def test_print_summary(evalset: Evalset) -> None:
    summary, _ = scored(evalset, 2, {"C-001"}, drop={"F-001"})
    buf = io.StringIO()
    print_summary(summary, Console(file=buf, width=140, color_system=None))
    out = buf.getvalue()
    assert "base  (agent20 4.0.0, parse served)" in out
    for text in ("pass^2", "sequencing", "50.0 %", "[5.5, 94.5]", "overall", "fault: error"):
        assert text in out, text
    assert "base: 1 of 8 entries had no generation" in out
