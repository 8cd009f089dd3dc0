"""Golden tests of `compare` on replayed rounds shaped like the case study."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.formats.runfolder import read_generations
from loragate.results.compare import compare_runs
from loragate.results.compare_render import render_markdown
from loragate.results.formatting import fmt_p, fmt_points
from loragate.results.runs import load_run, parse_run_ref
from tests._casestudy import (
    CASE,
    ROUND1_LOG,
    ROUND2_LOG,
    build_rounds,
    k_sample_generations,
    replay,
    run_cli,
)

HEADLINE = (
    "train loss +0.6 %, token accuracy +0.00 pt; should_not_call +75 pt (p = 0.03); "
    "unparseable (served) 2/24 -> 0/24"
)


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_rounds(tmp_path_factory.mktemp("rounds"))


def _logs(r1: Path, r2: Path) -> list[str]:
    return [
        "--training-log",
        f"{r1.name}={ROUND1_LOG}",
        "--training-log",
        f"round2={ROUND2_LOG.parent}",  # a folder: trainer_state.json is found in it
    ]


def test_case_study_comparison(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    c = compare_runs([load_run(str(r1), ROUND1_LOG), load_run(str(r2), ROUND2_LOG)])
    assert [r.label for r in c.runs] == ["round1", "round2"]
    assert c.entries_compared == 24 and c.dropped_entries == 0

    f = c.family("should_not_call")
    assert f.letter == "F"
    a, b = f.stats
    assert a is not None and b is not None
    assert (a.passes, a.entries, b.passes, b.entries) == (1, 8, 7, 8)
    d = f.deltas[0]
    assert d.diff_points == pytest.approx(75.0)
    # Hand computation: 6 entries fail->pass, 0 pass->fail; two-sided exact
    # McNemar p = 2 * 0.5^6 = 0.03125.
    assert d.test is not None and d.test.method == "mcnemar_exact"
    assert (d.test.improved, d.test.regressed) == (6, 0)
    assert d.test.p_value == pytest.approx(0.03125, abs=1e-12)
    assert [x.entry_id for x in d.improved] == [f"F-00{i}" for i in range(2, 8)]
    assert d.regressed == []

    for fam, flipped in (("governance", "D-008"), ("tool_call", "A-008")):
        row = c.family(fam)
        assert row.deltas[0].diff_points == pytest.approx(12.5)
        assert row.deltas[0].p_value == 1.0  # one discordant pair is never significant
        assert [x.entry_id for x in row.deltas[0].improved] == [flipped]

    o = c.overall.deltas[0]
    assert o.test is not None and (o.test.improved, o.test.regressed) == (8, 0)
    assert o.p_value == pytest.approx(2 / 2**8)
    oa, ob = c.overall.stats
    assert oa is not None and ob is not None
    assert (oa.unparseable, oa.unparseable_lenient, ob.unparseable) == (2, 0, 0)

    loss = next(t for t in c.training if t.metric == "loss")
    assert loss.values == [0.0659, 0.0663]
    assert loss.rel_change[0] == pytest.approx(0.0004 / 0.0659)
    acc = next(t for t in c.training if t.metric == "eval_mean_token_accuracy")
    assert acc.abs_change[0] == pytest.approx(0.0)

    assert c.headlines == [HEADLINE]


def test_markdown_golden_lines(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    md = render_markdown(
        compare_runs([load_run(str(r1), ROUND1_LOG), load_run(str(r2), ROUND2_LOG)])
    )
    assert f"**{HEADLINE}**" in md
    assert (
        "| F | should_not_call | 12.5 % (1/8) [2.2, 47.1] | 87.5 % (7/8) [52.9, 97.8] "
        "| +75 pt | 0.03 | +6 / -0 |"
    ) in md
    assert (
        "| unparseable (served / strict / lenient) | 2/24 / 2/24 / 0/24 | 0/24 / 0/24 / 0/24 | -2 |"
        in md
    )
    assert "| loss | 0.0659 | 0.0663 | +0.0004 | +0.6 % |" in md
    assert "- should_not_call: better F-002, F-003, F-004, F-005, F-006, F-007; worse none" in md


def test_cli_formats(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r1, r2 = rounds
    code, out, err = run_cli(["compare", str(r1), str(r2), *_logs(r1, r2)], capsys)
    assert code == 0, err
    assert "should_not_call +75 pt (p = 0.03)" in out.replace("\n", " ")
    assert "12.5 % (1/8)" in out and "87.5 % (7/8)" in out

    target = tmp_path / "cmp.json"
    code, out, _ = run_cli(
        ["compare", str(r1), str(r2), *_logs(r1, r2), "-f", "json", "-w", str(target)], capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data == json.loads(target.read_text())
    assert data["headlines"] == [HEADLINE]
    fam = next(r for r in data["families"] if r["family"] == "should_not_call")
    assert fam["deltas"][0]["test"]["p_value"] == pytest.approx(0.03125)

    code, out, _ = run_cli(["compare", str(r1), str(r2), "-f", "markdown"], capsys)
    assert code == 0
    # Without training logs the headline carries the family swing alone, and says why.
    assert "**should_not_call +75 pt (p = 0.03); unparseable (served) 2/24 -> 0/24**" in out
    assert "no training log found" in out


def test_regression_direction(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    c = compare_runs([load_run(str(r2)), load_run(str(r1))])
    d = c.family("should_not_call").deltas[0]
    assert d.diff_points == pytest.approx(-75.0)
    assert [x.entry_id for x in d.regressed] == [f"F-00{i}" for i in range(2, 8)]
    assert c.headlines[0].startswith("should_not_call -75 pt (p = 0.03)")


def test_no_change_headline(rounds: tuple[Path, Path], tmp_path: Path) -> None:
    _, r2 = rounds
    copy = tmp_path / "round2-again"
    shutil.copytree(r2, copy)
    c = compare_runs([load_run(str(r2)), load_run(str(copy))])
    assert c.headlines == ["no family changed"]


def _without(tmp: Path, name: str, drop: set[str]) -> Path:
    gens = [
        g for g in read_generations(CASE / "round2" / "generations.jsonl") if g.entry_id not in drop
    ]
    from loragate.evaluation import finish_run
    from tests._casestudy import casestudy_evalset

    finish_run(casestudy_evalset(), gens, tmp / name, allow_missing=True, progress=False)
    return tmp / name


def test_different_entries_refused_then_intersected(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, _ = rounds
    partial = _without(tmp_path, "partial", {"F-008", "A-001"})
    code, _, err = run_cli(["compare", str(r1), str(partial)], capsys)
    assert code == 2
    assert "not over the same entries" in err and "--intersect" in err
    assert "Traceback" not in err

    c = compare_runs([load_run(str(r1)), load_run(str(partial))], intersect=True)
    assert (c.entries_compared, c.dropped_entries, c.dropped_ids) == (22, 2, ["A-001", "F-008"])
    assert any("dropped 2" in n for n in c.notes)
    f = c.family("should_not_call")
    a, b = f.stats
    assert a is not None and b is not None
    # Recomputed over the 7 common F entries: 1/7 -> 7/7, same six flips.
    assert (a.passes, a.entries, b.passes, b.entries) == (1, 7, 7, 7)
    assert f.deltas[0].p_value == pytest.approx(0.03125)


def test_different_evalset_version(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    other = tmp_path / "r2-v2"
    shutil.copytree(r2, other)
    summary = json.loads((other / "summary.json").read_text())
    summary["evalset"]["version"] = "1.1.0"
    (other / "summary.json").write_text(json.dumps(summary))
    code, _, err = run_cli(["compare", str(r1), str(other)], capsys)
    assert code == 2 and "version 1.0.0 vs 1.1.0" in err
    code, out, err = run_cli(
        ["compare", str(r1), str(other), "--intersect", "-f", "markdown"], capsys
    )
    assert code == 0, err
    assert "compared by entry id" in out

    renamed = tmp_path / "r2-other"
    shutil.copytree(r2, renamed)
    summary["evalset"]["name"] = "agent20"
    (renamed / "summary.json").write_text(json.dumps(summary))
    code, _, err = run_cli(["compare", str(r1), str(renamed), "--intersect"], capsys)
    assert code == 2 and "different evalsets" in err


@pytest.mark.parametrize("damage", ["missing", "corrupt", "schema", "no_results"])
def test_bad_run_folders_exit_2(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    r1, r2 = rounds
    bad = tmp_path / "bad"
    if damage != "missing":
        shutil.copytree(r2, bad)
    if damage == "corrupt":
        (bad / "summary.json").write_text("{not json")
    elif damage == "schema":
        s = json.loads((bad / "summary.json").read_text())
        s["schema_version"] = 99
        (bad / "summary.json").write_text(json.dumps(s))
    elif damage == "no_results":
        (bad / "results.jsonl").unlink()
    code, out, err = run_cli(["compare", str(r1), str(bad)], capsys)
    assert code == 2
    assert "Traceback" not in err and "error:" in err
    assert out == ""


def test_training_log_option_errors(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    for spec, msg in (
        ("nosuchrun=x.json", "names no run"),
        ("round1", "expected NAME=PATH"),
        (f"round1={CASE / 'nope.json'}", "does not exist"),
    ):
        code, _, err = run_cli(["compare", str(r1), str(r2), "--training-log", spec], capsys)
        assert code == 2, spec
        assert msg in err, (spec, err)


def test_run_adapter_syntax(tmp_path: Path) -> None:
    gens = read_generations(CASE / "round1" / "generations.jsonl") + read_generations(
        CASE / "round2" / "generations.jsonl"
    )
    both = replay(tmp_path / "both", gens)
    with pytest.raises(BadInput, match=r"holds 2 adapters; name one: .*both:round1"):
        load_run(str(both))
    with pytest.raises(BadInput, match="no adapter 'round3'"):
        load_run(f"{both}:round3")
    ref = parse_run_ref(f"{both}:round2")
    assert (ref.run_dir, ref.adapter) == (both, "round2")
    c = compare_runs([load_run(f"{both}:round1"), load_run(f"{both}:round2")])
    assert [r.label for r in c.runs] == ["both:round1", "both:round2"]
    assert c.family("should_not_call").deltas[0].p_value == pytest.approx(0.03125)


def test_k_samples_use_sign_flip(tmp_path: Path) -> None:
    k = 3
    fails = {f"F-00{i}": 0 for i in range(1, 9)}
    base = replay(tmp_path / "k-base", k_sample_generations("v1", fails, k))
    # Six F entries improve by 3/3, 2/3, 3/3, 1/3, 3/3, 3/3 of their samples.
    better = {**fails, "F-001": 3, "F-002": 2, "F-003": 3, "F-004": 1, "F-005": 3, "F-006": 3}
    run = replay(tmp_path / "k-run", k_sample_generations("v2", better, k))
    c = compare_runs([load_run(str(base)), load_run(str(run))])
    f = c.family("should_not_call")
    d = f.deltas[0]
    assert d.test is not None and d.test.method == "sign_flip_exact"
    # Scaled by 3 the differences are 3, 2, 3, 1, 3, 3 (sum 15, the maximum): only the
    # all-plus and all-minus sign patterns are as extreme, p = 2 / 2^6.
    assert d.test.p_value == pytest.approx(2 / 64)
    _, b = f.stats
    assert b is not None
    assert b.pass_at_1 == pytest.approx(15 / 24)
    assert b.pass_hat_k == pytest.approx(4 / 8)  # C(c,3)/C(3,3) is 1 only for 3/3 entries
    assert d.pass_hat_k_diff_points == pytest.approx(50.0)
    md = render_markdown(c)
    assert "pass^k" in md and "sign-flip" in md
    assert "F-002 (0.00->0.67)" in md


def test_formatters() -> None:
    assert fmt_p(0.03125) == "0.03"
    assert fmt_p(0.0078125) == "0.008"
    assert fmt_p(0.0001) == "< 0.001"
    assert fmt_p(1.0) == "1.00"
    assert fmt_points(75.0) == "+75 pt"
    assert fmt_points(-12.5) == "-12.5 pt"
    assert fmt_points(-0.0001, 2) == "+0.00 pt"
    assert fmt_points(None) == "n/a"


def test_compare_needs_two_runs(
    rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["compare", str(rounds[0])], capsys)
    assert code == 2 and "at least two runs" in err


def test_training_log_found_next_to_the_manifest_adapter(
    rounds: tuple[Path, Path], tmp_path: Path
) -> None:
    r1, r2 = rounds
    runs = []
    for run, adapter, log in ((r1, "round1", ROUND1_LOG), (r2, "round2", ROUND2_LOG)):
        copy = tmp_path / run.name
        shutil.copytree(run, copy)
        out_dir = tmp_path / f"train-{adapter}"
        (out_dir / "checkpoint-100").mkdir(parents=True)
        shutil.copy(log, out_dir / "checkpoint-100" / "trainer_state.json")
        (out_dir / "adapter").mkdir()
        manifest = {"adapters": [{"name": adapter, "path": str(out_dir / "adapter")}]}
        (copy / "manifest.json").write_text(json.dumps(manifest))
        runs.append(load_run(str(copy)))
    c = compare_runs(runs)
    assert c.headlines == [HEADLINE]
    assert c.runs[1].training_source == str(
        tmp_path / "train-round2" / "checkpoint-100" / "trainer_state.json"
    )


def test_three_runs_fit_an_80_column_terminal(rounds: tuple[Path, Path], tmp_path: Path) -> None:
    from rich.console import Console

    from loragate.results.compare_render import render_terminal

    r1, r2 = rounds
    r3 = shutil.copytree(r2, tmp_path / "round3-with-a-longer-name")
    c = compare_runs(
        [load_run(str(r1), ROUND1_LOG), load_run(str(r2), ROUND2_LOG), load_run(str(r3), None)]
    )
    console = Console(width=80, record=True, force_terminal=False)
    console.print(render_terminal(c))
    text = console.export_text()
    assert "…" not in text  # no name, interval or figure cut
    assert "runs: [1] round1 (baseline), [2] round2, [3] round3-with-a-longer-name" in text
    assert "[52.9, 97.8]" in text and "Δ[3]" in text
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines())
    # one wording, one figure: the same as the Markdown table's row and the view's
    assert (
        "unparseable (served / strict / lenient): round1 2/24 / 2/24 / 0/24; round2 0/24 / "
        "0/24 / 0/24;" in " ".join(text.split())  # the terminal wraps the line
    )
