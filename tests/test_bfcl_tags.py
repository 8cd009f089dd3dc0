"""Per-tag rows: `summary.json` (schema 2) and `report.md` carry pass rates per entry
tag, so an imported BFCL evalset reports per BFCL category beside its families."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.evalset.bfcl import data_dir, read_category
from loragate.formats.runfolder import read_summary
from loragate.formats.versions import SUMMARY_SCHEMA_VERSION
from tests._bfcl import ANSWER_TEXT, correct_calls, tool_call_text
from tests.test_cli_validate import run_main


@pytest.mark.bfcl
def test_summary_and_report_have_a_row_per_bfcl_category(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ev, run = tmp_path / "ev", tmp_path / "run"
    args = ("import", "bfcl", "--categories", "multiple,irrelevance", "--out", str(ev))
    assert run_main(monkeypatch, *args) == 0
    lines = []
    raws, answers = read_category(data_dir(), "multiple")
    for raw in raws[:10]:  # the first ten right, the other 190 answered in prose
        text = tool_call_text(correct_calls(answers[raw["id"]]))
        lines.append({"entry_id": raw["id"], "adapter": "m", "sample": 0, "text": text})
    for raw in raws[10:]:
        lines.append({"entry_id": raw["id"], "adapter": "m", "sample": 0, "text": ANSWER_TEXT})
    for raw in read_category(data_dir(), "irrelevance")[0]:
        lines.append({"entry_id": raw["id"], "adapter": "m", "sample": 0, "text": ANSWER_TEXT})
    gens = tmp_path / "generations.jsonl"
    gens.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ("score", "--generations", str(gens), "--evalset", str(ev), "--out", str(run))
    assert run_main(monkeypatch, *args) == 0
    summary = read_summary(run)
    assert summary.schema_version == SUMMARY_SCHEMA_VERSION
    tags = summary.adapters["m"].tags
    assert list(tags) == ["bfcl:irrelevance", "bfcl:multiple"]
    assert (tags["bfcl:multiple"].entries, tags["bfcl:multiple"].passes) == (200, 10)
    assert (tags["bfcl:irrelevance"].entries, tags["bfcl:irrelevance"].passes) == (240, 240)
    report = (run / "report.md").read_text()
    by_tag = report.split("### By tag")[1]
    assert "bfcl:multiple" in by_tag and "5.0 %" in by_tag


def test_a_version_1_summary_still_reads(tmp_path: Path) -> None:
    stats = {
        "entries": 1,
        "samples": 1,
        "passes": 1,
        "pass_at_1": 1.0,
        "ci_low": 0.2,
        "ci_high": 1.0,
        "k": 1,
        "pass_hat_k": 1.0,
        "pass_at_k": 1.0,
        "unparseable": 0,
        "unparseable_repaired": 0,
    }
    v1 = {
        "schema_version": 1,
        "evalset": {"name": "e", "version": "1", "sha256": "0"},
        "samples_per_entry": 1,
        "entry_ids": ["A-1"],
        "adapters": {"m": {"overall": stats, "families": {"tool_call": stats}}},
    }
    (tmp_path / "summary.json").write_text(json.dumps(v1))
    assert read_summary(tmp_path).adapters["m"].tags == {}
