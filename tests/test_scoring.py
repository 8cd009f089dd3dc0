"""Scorer, generation checks and `finish_run` (run folder writing) on a hand-written evalset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.evalset.load import Evalset, load_evalset
from loragate.evaluation import finish_run
from loragate.families import get_family
from loragate.formats.records import GenerationRecord, ReasonCode, ResultRecord, Verdict
from loragate.formats.runfolder import (
    GENERATIONS,
    MANIFEST,
    REPORT,
    RESULTS,
    SUMMARY,
    VIEW,
    read_generations,
    read_results,
    read_summary,
)
from loragate.score.scoring import (
    Scorer,
    ScorerError,
    check_generations,
    score_records,
    write_run_files,
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


@pytest.fixture(scope="module")
def evalset(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load_evalset(write_evalset(tmp_path_factory.mktemp("ev") / "mini"))


def all_passing(adapter: str = "base") -> list[GenerationRecord]:
    return [gen(eid, PASSING[eid], adapter) for eid in ENTRY_IDS]


# -- Scorer ---------------------------------------------------------------------------


@pytest.mark.parametrize("entry_id", ENTRY_IDS)
def test_scorer_verdicts(evalset: Evalset, entry_id: str) -> None:
    scorer = Scorer(evalset)
    good = scorer.score(gen(entry_id, PASSING[entry_id]))
    assert good.verdict.passed, good.verdict
    text, reason = FAILING[entry_id]
    bad = scorer.score(gen(entry_id, text))
    assert not bad.verdict.passed
    assert bad.verdict.reason.value == reason


def test_result_carries_generation_family_and_fault(evalset: Evalset) -> None:
    record = GenerationRecord(
        entry_id="G-001~timeout",
        adapter="r2",
        sample=3,
        text=PASSING["G-001~timeout"],
        finish_reason="stop",
        prompt_tokens=812,
        completion_tokens=31,
        prompt_sha256="ab" * 32,
    )
    result = Scorer(evalset).score(record)
    assert result.family == "recovery"
    assert result.fault == "timeout"
    for field in GenerationRecord.model_fields:
        assert getattr(result, field) == getattr(record, field), field
    assert result.parse.status == "ok"
    assert [c.name for c in result.parse.calls] == ["get_invoice"]


def test_constructed_result_round_trips_through_validation(evalset: Evalset) -> None:
    # Scorer builds ResultRecord without re-validation; it must still be a valid record.
    result = Scorer(evalset).score(gen("D-001", FAILING["D-001"][0]))
    dumped = json.loads(result.model_dump_json(by_alias=True))
    assert dumped["verdict"]["pass"] is False
    again = ResultRecord.model_validate(dumped)
    assert again.model_dump() == result.model_dump()


def test_parse_mode_strict_vs_repaired(evalset: Evalset) -> None:
    strict = Scorer(evalset, "strict").score(gen("A-001", BROKEN_CALL))
    repaired = Scorer(evalset, "lenient").score(gen("A-001", BROKEN_CALL))
    assert not strict.verdict.passed
    assert strict.verdict.reason is ReasonCode.unparseable
    assert repaired.verdict.passed
    assert repaired.parse.repaired
    # Both statuses are recorded whichever mode scored.
    for r in (strict, repaired):
        assert (r.parse.strict_status, r.parse.lenient_status) == ("unparseable", "ok")


def test_bad_parse_mode(evalset: Evalset) -> None:
    with pytest.raises(BadInput, match="parse_mode"):
        Scorer(evalset, "relaxed")  # type: ignore[arg-type]


def test_unknown_entry_in_score(evalset: Evalset) -> None:
    with pytest.raises(BadInput, match="Z-999"):
        Scorer(evalset).score(gen("Z-999", "hi"))


def test_scorer_exception_is_a_scorer_error(
    evalset: Evalset, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = get_family("should_not_call")

    def boom(sample: object) -> Verdict:
        raise KeyError("surprise")

    monkeypatch.setattr(family, "score", boom)
    with pytest.raises(ScorerError, match="should_not_call") as info:
        Scorer(evalset).score(gen("F-001", "an answer", adapter="r7", sample=2))
    assert isinstance(info.value.__cause__, KeyError)
    assert (info.value.entry_id, info.value.adapter, info.value.sample) == ("F-001", "r7", 2)
    assert "bug" in str(info.value)


def test_scorer_returning_no_verdict_is_a_scorer_error(
    evalset: Evalset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_family("should_not_call"), "score", lambda sample: True)
    with pytest.raises(ScorerError, match="not Verdict"):
        Scorer(evalset).score(gen("F-001", "an answer"))


# -- checks ---------------------------------------------------------------------------


def test_unknown_ids_name_the_file_lines(evalset: Evalset, tmp_path: Path) -> None:
    records = [*all_passing(), gen("A-404", "x"), gen("B-404", "y")]
    path = write_generations(tmp_path / "g.jsonl", records)
    # A blank line in the middle shifts the line numbers away from the record index.
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:2], "", *lines[2:]]) + "\n")
    read = read_generations(path)
    with pytest.raises(BadInput) as info:
        check_generations(evalset, read, source=path)
    problems = info.value.problems
    assert [(p.file, p.line, p.field) for p in problems] == [
        (str(path), 10, "entry_id"),
        (str(path), 11, "entry_id"),
    ]
    assert "A-404" in problems[0].message
    assert "B-404" in problems[1].message


def test_without_source_problems_name_the_record_position(evalset: Evalset) -> None:
    with pytest.raises(BadInput) as info:
        check_generations(evalset, [gen("A-001", "x"), gen("nope", "y")])
    (problem,) = info.value.problems
    assert problem.line == 2


def test_duplicate_generation(evalset: Evalset) -> None:
    records = [*all_passing(), gen("C-001", "again")]
    with pytest.raises(BadInput) as info:
        check_generations(evalset, records)
    (problem,) = info.value.problems
    assert problem.line == 9
    assert "first on line 3" in problem.message


def test_missing_entries_are_listed_per_adapter(evalset: Evalset) -> None:
    records = all_passing("full") + [
        r for r in all_passing("partial") if r.entry_id not in ("B-001", "G-001~timeout")
    ]
    with pytest.raises(BadInput) as info:
        check_generations(evalset, records)
    (problem,) = info.value.problems
    assert "'partial'" in problem.message
    assert "2 of 8" in problem.message
    assert "B-001, G-001~timeout" in problem.message
    assert "--allow-missing" in (problem.fix or "")
    missing = check_generations(evalset, records, allow_missing=True)
    assert missing == {"partial": ["B-001", "G-001~timeout"]}


def test_score_records_keeps_input_order(evalset: Evalset) -> None:
    records = list(reversed(all_passing()))
    results = score_records(evalset, records)
    assert [r.entry_id for r in results] == [r.entry_id for r in records]
    assert all(r.verdict.passed for r in results)


def test_progress_bar_gives_the_same_results(
    evalset: Evalset, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [gen(eid, PASSING[eid], sample=s) for s in range(3) for eid in ENTRY_IDS]
    plain = score_records(evalset, records, progress=False)
    with_bar = score_records(evalset, records, progress=True)
    assert [r.model_dump() for r in plain] == [r.model_dump() for r in with_bar]


# -- finish_run -----------------------------------------------------------------------


def test_finish_run_writes_a_new_folder(evalset: Evalset, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "r1"
    done = finish_run(evalset, all_passing(), out)
    assert sorted(p.name for p in out.iterdir()) == sorted([RESULTS, SUMMARY, REPORT, VIEW])
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["r1"]  # no temp leftovers
    results = read_results(out)
    assert [r.entry_id for r in results] == ENTRY_IDS
    summary = read_summary(out)
    assert summary == done.summary
    assert summary.adapters["base"].overall.pass_at_1 == 1.0
    assert "# loragate report" in (out / REPORT).read_text()
    assert done.missing == {}


def test_finish_run_keeps_other_files_of_an_existing_folder(
    evalset: Evalset, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / MANIFEST).write_text('{"base_model": "x"}\n')
    (out / GENERATIONS).write_text("cache\n")
    (out / SUMMARY).write_text("old\n")
    finish_run(evalset, all_passing(), out, "lenient")
    assert (out / MANIFEST).read_text() == '{"base_model": "x"}\n'
    assert (out / GENERATIONS).read_text() == "cache\n"
    assert read_summary(out).parse_mode == "lenient"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [MANIFEST, GENERATIONS, RESULTS, SUMMARY, REPORT, VIEW]
    )


def test_finish_run_bad_input_writes_nothing(evalset: Evalset, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    with pytest.raises(BadInput):
        finish_run(evalset, [*all_passing(), gen("X-1", "?")], fresh)
    assert not fresh.exists()
    assert list(tmp_path.iterdir()) == []

    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / SUMMARY).write_text("old\n")
    with pytest.raises(BadInput):
        finish_run(evalset, all_passing()[:3], existing)  # missing entries
    assert [p.name for p in existing.iterdir()] == [SUMMARY]
    assert (existing / SUMMARY).read_text() == "old\n"


def test_finish_run_scorer_bug_writes_nothing(
    evalset: Evalset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(sample: object) -> Verdict:
        raise RuntimeError("bug")

    monkeypatch.setattr(get_family("parallel"), "score", boom)
    with pytest.raises(ScorerError):
        finish_run(evalset, all_passing(), tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_finish_run_allow_missing_and_k(evalset: Evalset, tmp_path: Path) -> None:
    records = [gen(eid, PASSING[eid], sample=s) for s in range(4) for eid in ENTRY_IDS[1:]]
    done = finish_run(evalset, records, tmp_path / "r", k=2, allow_missing=True)
    assert done.missing == {"base": ["A-001"]}
    overall = done.summary.adapters["base"].overall
    assert (overall.entries, overall.samples, overall.k) == (7, 28, 2)
    assert done.summary.entry_ids == sorted(ENTRY_IDS)
    report = (tmp_path / "r" / REPORT).read_text()
    assert "**Missing:** 1 of 8 entries" in report
    assert "`A-001`" in report


def test_write_run_files_refuses_a_file_as_folder(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("not a folder")
    with pytest.raises(BadInput, match="not a folder"):
        write_run_files(target, {"a.txt": "1"})


def test_replacing_files_leaves_no_temp_files(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    write_run_files(out, {RESULTS: "r\n", SUMMARY: "s\n"})
    write_run_files(out, {RESULTS: "r2\n", SUMMARY: "s2\n"})
    assert sorted(p.name for p in out.iterdir()) == sorted([RESULTS, SUMMARY])
    assert (out / SUMMARY).read_text() == "s2\n"


ODD_OUTPUTS = [
    "",
    "Sure.",
    '<tool_call>\n{"name": "web_search", "arguments": {"query": "x"}}\n</tool_call>',
    '<tool_call>{"name": "get_invoice", "arguments": {"invoice_id": NaN}}</tool_call>',
    "<tool_call>[[[[",
    "<think>unfinished",
]


def test_bundled_evalset_gets_a_verdict_for_any_output(agent20_dir: Path) -> None:
    if not (agent20_dir / "entries.jsonl").is_file():
        pytest.skip("evalsets/agent20/entries.jsonl is not written yet")
    bundled = load_evalset(agent20_dir)
    records = [
        gen(e.id, text, sample=i) for e in bundled.entries for i, text in enumerate(ODD_OUTPUTS)
    ]
    results = score_records(bundled, records)
    assert len(results) == len(bundled.entries) * len(ODD_OUTPUTS)
    assert all(r.verdict.passed == (r.verdict.reason is ReasonCode.ok) for r in results)
    # An empty output passes nowhere.
    assert not any(r.verdict.passed for r in results if r.sample == 0)
