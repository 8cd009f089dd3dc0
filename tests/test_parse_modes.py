"""The three parse modes through configs, policies, stored files, compare and the gate:
one definition, old names read with a warning, a gate that names the mode it gates."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from loragate.common.errors import BadInput, LegacyName
from loragate.evaluation import finish_run
from loragate.formats.records import (
    DEFAULT_PARSE_MODE,
    PARSE_MODES,
    ParseResult,
    RateStats,
    Summary,
)
from loragate.formats.runfolder import read_generations
from loragate.generate.config import RunConfig
from loragate.results.compare import compare_runs
from loragate.results.gate import GatePolicy, evaluate_gate, load_policy
from loragate.results.runs import load_run
from tests._casestudy import CASE, casestudy_evalset, run_cli

REPO = Path(__file__).resolve().parent.parent


def _round(tmp: Path, name: str, mode: str) -> Path:
    out = tmp / f"{name}-{mode}"
    gens = read_generations(CASE / name / "generations.jsonl")
    finish_run(casestudy_evalset(), gens, out, mode, progress=False)  # type: ignore[arg-type]
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("modes")
    return {m: _round(tmp, "round1", m) for m in ("served", "strict")} | {
        "round2": _round(tmp, "round2", "served")
    }


def test_one_definition_and_served_by_default() -> None:
    assert PARSE_MODES == ("served", "strict", "lenient") and DEFAULT_PARSE_MODE == "served"
    assert RunConfig().parse_mode == "served"
    for name in ("default", "strict"):
        assert load_policy(REPO / "configs" / "gates" / f"{name}.yaml").parse_mode == "served"


def test_an_old_mode_name_in_a_config_reads_as_lenient_with_a_warning() -> None:
    with pytest.warns(LegacyName, match="'repaired' is now called 'lenient'"):
        assert RunConfig(parse_mode="repaired").parse_mode == "lenient"  # type: ignore[arg-type]


def test_an_old_policy_key_reads_with_a_warning() -> None:
    with pytest.warns(LegacyName, match="max_unparseable_lenient"):
        policy = GatePolicy.model_validate({"max_unparseable_repaired": 0.1})
    assert policy.max_unparseable_lenient == 0.1 and policy.parse_mode is None


def test_stored_files_keep_loading_silently() -> None:
    """A summary and a result written before the rename are read by their old names,
    which were right for their version: no warning."""
    stats = {
        "entries": 1, "samples": 1, "passes": 1, "pass_at_1": 1.0, "ci_low": 0.2,
        "ci_high": 1.0, "k": 1, "pass_hat_k": 1.0, "pass_at_k": 1.0, "unparseable": 0,
        "unparseable_repaired": 1,
    }  # fmt: skip
    summary = {
        "schema_version": 4,
        "evalset": {"name": "e", "version": "1", "sha256": "0"},
        "parse_mode": "repaired",
        "samples_per_entry": 1,
        "entry_ids": ["A-1"],
        "adapters": {"m": {"overall": stats, "families": {"tool_call": stats}}},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = Summary.model_validate(summary)
        parse = ParseResult.model_validate(
            {"status": "ok", "strict_status": "ok", "repaired_status": "unparseable"}
        )
    assert read.parse_mode == "lenient"
    overall = read.adapters["m"].overall
    assert (overall.unparseable_lenient, overall.unparseable_served) == (1, None)
    assert overall.unparseable_in("served") is None
    assert parse.lenient_status == "unparseable" and parse.served_status is None
    assert "repaired_status" not in parse.model_dump()


def test_every_reading_is_counted(runs: dict[str, Path]) -> None:
    """Round 1 writes two unparseable blocks: every reading counts them, whatever mode
    scores."""
    for mode in ("served", "strict"):
        overall: RateStats = load_run(str(runs[mode])).stats.overall
        assert (overall.unparseable_served, overall.unparseable, overall.unparseable_lenient) == (
            2,
            2,
            0,
        )


def test_the_gate_refuses_a_run_scored_in_another_mode(runs: dict[str, Path]) -> None:
    policy = GatePolicy.model_validate({"parse_mode": "served", "max_unparseable": 0.1})
    with pytest.raises(BadInput) as caught:
        evaluate_gate(policy, load_run(str(runs["strict"])))
    message = str(caught.value)
    assert "scored in strict mode" in message and "--parse-mode served" in message
    with pytest.raises(BadInput, match="scored in strict mode"):
        evaluate_gate(policy, load_run(str(runs["round2"])), load_run(str(runs["strict"])))
    result = evaluate_gate(policy, load_run(str(runs["served"])))
    assert [r.shown for r in result.rules] == ["2/24 = 8.3 % (served)"]


def test_a_policy_naming_no_mode_gates_as_before_with_a_note(runs: dict[str, Path]) -> None:
    policy = GatePolicy.model_validate({"max_unparseable": 0.1})
    result = evaluate_gate(policy, load_run(str(runs["served"])))
    assert any("names no parse_mode" in n for n in result.notes)
    assert result.rules[0].shown == "2/24 = 8.3 % (strict)"


def test_compare_names_the_modes(runs: dict[str, Path]) -> None:
    comparison = compare_runs([load_run(str(runs["strict"])), load_run(str(runs["round2"]))])
    note = next(n for n in comparison.notes if "different parse modes" in n)
    assert "round1-strict strict" in note and "round2-served served" in note


def test_the_cli_says_an_old_mode_name_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["score", "--generations", str(CASE / "round1" / "generations.jsonl")]
    args += ["--evalset", str(CASE / "evalset"), "--out", str(out), "--parse-mode", "repaired"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "warning: --parse-mode: parse mode 'repaired' is now called 'lenient'" in err
    assert json.loads((out / "summary.json").read_text())["parse_mode"] == "lenient"
    code, _, err = run_cli([*args[:-1], "relaxed"], capsys)
    assert code == 2 and "'relaxed' is not a parse mode" in err


def test_score_episodes_judges_in_the_runs_own_mode(tmp_path: Path) -> None:
    """`score-episodes` reads the mode a run was scored in from its summary (an old
    name too), so a server-backed step is replayed in the mode it was recorded in."""
    from loragate.cli.score_episodes import run_parse_mode

    run = tmp_path / "run"
    run.mkdir()
    assert run_parse_mode([run]) is None
    summary = {
        "schema_version": 4,
        "evalset": {"name": "e", "version": "1", "sha256": "0"},
        "parse_mode": "repaired",
        "samples_per_entry": 0,
        "entry_ids": [],
        "adapters": {},
    }
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert run_parse_mode([tmp_path / "missing", run]) == "lenient"
