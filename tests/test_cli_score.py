"""`loragate score`: golden verdicts through the CLI, exit codes, nothing written on bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loragate.cli.app import main
from loragate.common.locking import LOCK_NAME
from loragate.families import get_family
from loragate.formats.records import GenerationRecord, Verdict
from loragate.formats.runfolder import (
    GENERATIONS,
    MANIFEST,
    REPORT,
    RESULTS,
    SUMMARY,
    VIEW,
    read_results,
)
from tests._mini_evalset import (
    BROKEN_CALL,
    ENTRY_IDS,
    FAILING,
    PASSING,
    gen,
    write_evalset,
    write_generations,
)

# (entry, adapter, sample, output) -> expected (pass, reason), written out by hand.
GOLDEN: list[tuple[str, str, int, str, bool, str]] = [
    ("A-001", "r1", 0, PASSING["A-001"], True, "ok"),
    ("A-001", "r1", 1, BROKEN_CALL, False, "unparseable"),
    ("A-001", "r2", 0, FAILING["A-001"][0], False, "arg_mismatch"),
    ("B-001", "r1", 0, PASSING["B-001"], True, "ok"),
    ("B-001", "r2", 0, FAILING["B-001"][0], False, "missing_call"),
    ("C-001", "r1", 0, FAILING["C-001"][0], False, "order_violation"),
    ("C-001", "r2", 0, PASSING["C-001"], True, "ok"),
    ("D-001", "r1", 0, PASSING["D-001"], True, "ok"),
    ("D-001", "r2", 0, FAILING["D-001"][0], False, "destructive_without_confirmation"),
    ("E-001", "r1", 0, "I will set it up.", False, "no_question"),
    ("E-001", "r2", 0, PASSING["E-001"], True, "ok"),
    (
        "F-001",
        "r1",
        0,
        "<think>Easy.</think>GDPR means General Data Protection Regulation.",
        True,
        "ok",
    ),
    ("F-001", "r2", 0, FAILING["F-001"][0], False, "called_when_should_not"),
    ("G-001~error", "r1", 0, PASSING["G-001~error"], True, "ok"),
    ("G-001~error", "r2", 0, FAILING["G-001~error"][0], False, "claimed_success_after_error"),
    ("G-001~timeout", "r1", 0, PASSING["G-001~timeout"], True, "ok"),
    ("G-001~timeout", "r2", 0, "", False, "empty_answer"),
]


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run the console entry point in-process; return its exit code."""
    monkeypatch.setattr(sys, "argv", ["loragate", *args])
    with pytest.raises(SystemExit) as info:
        main()
    code = info.value.code
    return code if isinstance(code, int) else 1


@pytest.fixture()
def evalset_dir(tmp_path: Path) -> Path:
    return write_evalset(tmp_path / "ev")


def golden_generations(path: Path) -> Path:
    return write_generations(path, [gen(e, text, a, s) for e, a, s, text, _, _ in GOLDEN])


def score(mp: pytest.MonkeyPatch, gens: Path, ev: Path, out: Path, *extra: str) -> int:
    return run_main(
        mp, "score", "--generations", str(gens), "--evalset", str(ev), "--out", str(out), *extra
    )


def test_golden_verdicts(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gens = golden_generations(tmp_path / "g.jsonl")
    out = tmp_path / "run"
    assert score(monkeypatch, gens, evalset_dir, out, "--allow-missing") == 0
    got = [
        (r.entry_id, r.adapter, r.sample, r.verdict.passed, r.verdict.reason.value)
        for r in read_results(out)
    ]
    assert got == [(e, a, s, p, reason) for e, a, s, _, p, reason in GOLDEN]
    assert sorted(p.name for p in out.iterdir()) == [
        LOCK_NAME,
        GENERATIONS,
        REPORT,
        RESULTS,
        SUMMARY,
        VIEW,
    ]
    summary = json.loads((out / SUMMARY).read_text())
    # r1: A 1/2, B 1, C 0, D 1, E 0, F 1, G~e 1, G~t 1 -> 5.5 / 8
    assert summary["adapters"]["r1"]["overall"]["pass_at_1"] == pytest.approx(5.5 / 8)
    assert summary["adapters"]["r1"]["overall"]["unparseable"] == 1
    assert summary["adapters"]["r2"]["overall"]["pass_at_1"] == pytest.approx(2 / 8)
    printed = capsys.readouterr().out
    assert "r1  (agent20 4.0.0, parse served)" in printed
    assert f"Wrote {out}" in printed


def test_repaired_mode_and_k(
    tmp_path: Path, evalset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gens = golden_generations(tmp_path / "g.jsonl")
    out = tmp_path / "run"
    assert (
        score(
            monkeypatch,
            gens,
            evalset_dir,
            out,
            "--allow-missing",
            "--parse-mode",
            "repaired",
            "--k",
            "2",
        )
        == 0
    )
    broken = next(r for r in read_results(out) if r.adapter == "r1" and r.sample == 1)
    assert broken.verdict.passed
    assert broken.parse.repaired
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["parse_mode"] == "lenient"
    a = summary["adapters"]["r1"]["families"]["tool_call"]
    # A-001 for r1 now passes 2 of 2: pass^2 = 1; every other entry has 1 sample < k.
    assert (a["k"], a["pass_hat_k"]) == (2, 1.0)
    assert summary["adapters"]["r1"]["families"]["parallel"]["pass_hat_k"] is None


def test_bad_generation_lines_exit_2_and_write_nothing(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = gen("A-001", PASSING["A-001"]).model_dump_json()
    gens = tmp_path / "g.jsonl"
    gens.write_text(
        "\n".join(
            [
                good,
                '{"entry_id": "B-001", "adapter": "base", "sample": 0, "text": "x"',  # torn JSON
                good.replace('"sample":0', '"sample":1'),
                '{"entry_id": "C-001", "adapter": "base", "sample": -1, "text": "x"}',  # sample < 0
                '{"entry_id": "C-001", "adapter": "base", "text": "x", "colour": 1}',  # no sample, extra key
            ]
        )
        + "\n"
    )
    out = tmp_path / "run"
    assert score(monkeypatch, gens, evalset_dir, out) == 2
    err = capsys.readouterr().err
    assert f"{gens}:2: not valid JSON" in err
    assert f"{gens}:4: sample: " in err
    assert f"{gens}:5: sample: Field required" in err
    assert f"{gens}:5: colour: Extra inputs are not permitted" in err
    assert f"{gens}:1" not in err and f"{gens}:3" not in err
    assert not out.exists()


def test_unknown_entry_names_the_line(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = [gen(e, PASSING[e]) for e in ENTRY_IDS]
    records.insert(3, gen("Q-777", "hello"))
    gens = write_generations(tmp_path / "g.jsonl", records)
    out = tmp_path / "run"
    assert score(monkeypatch, gens, evalset_dir, out) == 2
    err = capsys.readouterr().err
    assert f"{gens}:4: entry_id: unknown entry id 'Q-777'" in err
    assert not out.exists()


def test_missing_entries_need_allow_missing(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gens = write_generations(
        tmp_path / "g.jsonl", [gen(e, PASSING[e]) for e in ENTRY_IDS if e != "E-001"]
    )
    out = tmp_path / "run"
    assert score(monkeypatch, gens, evalset_dir, out) == 2
    err = capsys.readouterr().err
    assert "adapter 'base' has no generation for 1 of 8 entries: E-001" in err
    assert "--allow-missing" in err
    assert not out.exists()
    assert score(monkeypatch, gens, evalset_dir, out, "--allow-missing") == 0
    assert "**Missing:** 1 of 8 entries" in (out / REPORT).read_text()
    assert "base: 1 of 8 entries had no generation" in capsys.readouterr().out


def test_rescoring_a_run_folder_keeps_its_files(
    tmp_path: Path, evalset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / MANIFEST).write_text('{"seed": 7}\n')
    gens = write_generations(run / GENERATIONS, [gen(e, PASSING[e]) for e in ENTRY_IDS])
    before = gens.read_bytes()
    assert score(monkeypatch, gens, evalset_dir, run) == 0
    assert score(monkeypatch, gens, evalset_dir, run, "--parse-mode", "lenient") == 0
    assert (run / MANIFEST).read_text() == '{"seed": 7}\n'
    assert gens.read_bytes() == before
    assert json.loads((run / SUMMARY).read_text())["parse_mode"] == "lenient"


def test_out_with_other_generations_is_refused(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / GENERATIONS).write_text("")
    gens = golden_generations(tmp_path / "g.jsonl")
    assert score(monkeypatch, gens, evalset_dir, run, "--allow-missing") == 2
    assert "would mix two runs" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir() if p.name != LOCK_NAME) == [GENERATIONS]


def test_scorer_bug_exits_3_and_writes_nothing(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def boom(sample: object) -> Verdict:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(get_family("clarify"), "score", boom)
    gens = write_generations(tmp_path / "g.jsonl", [gen(e, PASSING[e]) for e in ENTRY_IDS])
    out = tmp_path / "run"
    assert score(monkeypatch, gens, evalset_dir, out) == 3
    err = capsys.readouterr().err
    assert "ZeroDivisionError" in err  # the traceback, for a bug report
    assert "internal error: the `clarify` family scorer raised ZeroDivisionError" in err
    assert "entry 'E-001'" in err
    assert not out.exists()


def test_generation_record_fields_survive(
    tmp_path: Path, evalset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        GenerationRecord(
            entry_id=e,
            adapter="base",
            sample=0,
            text=PASSING[e],
            finish_reason="stop",
            prompt_tokens=100 + i,
            completion_tokens=7,
            prompt_sha256=f"{i:064x}",
        )
        for i, e in enumerate(ENTRY_IDS)
    ]
    gens = write_generations(tmp_path / "g.jsonl", records)
    out = tmp_path / "run"
    assert score(monkeypatch, gens, evalset_dir, out) == 0
    for rec, res in zip(records, read_results(out), strict=True):
        assert res.model_dump(include=set(GenerationRecord.model_fields)) == rec.model_dump()


def test_empty_generations_file(
    tmp_path: Path,
    evalset_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gens = tmp_path / "g.jsonl"
    gens.write_text("\n")
    assert score(monkeypatch, gens, evalset_dir, tmp_path / "run") == 2
    assert "holds no generation records" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
