"""The `next:` lines `loragate run` ends with are commands that work, computed from what
ran (issue 46 point 4): the base run is the baseline only when one ran, `--config`,
`--limit` and `--families` come along into a suggested run, and `--limit` says how many
generations the harness variants add. Replay backend only: no model is loaded."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from loragate.cli._run_console import limit_line
from loragate.cli.run import limit_help, next_steps
from loragate.formats.records import GenerationRecord
from loragate.generate.config import RunConfig
from loragate.generate.pipeline import plan_run
from tests._adapters import make_adapter
from tests._casestudy import CASE, run_cli, texts

AGENT20 = Path(__file__).resolve().parent.parent / "evalsets" / "agent20"


def _replay_folder(tmp_path: Path) -> Path:
    """run.yaml replaying round 1 as the base's outputs and round 2 as adapter `mine`'s;
    the adapter folder `adapter/`. Returns `tmp_path` (the tests run from it)."""
    records = [
        GenerationRecord(entry_id=e, adapter=adapter, sample=0, text=t)
        for adapter, rnd in (("base", "round1"), ("mine", "round2"))
        for e, t in texts(rnd).items()
    ]
    gens = tmp_path / "gens.jsonl"
    gens.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    config = {
        "model": "Qwen/Qwen3-4B",
        "backend": "replay",
        "enable_thinking": False,
        "generations": "gens.jsonl",
        "evalset": str(CASE / "evalset"),
    }
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    make_adapter(tmp_path / "adapter")
    return tmp_path


def _commands(err: str) -> list[list[str]]:
    """The suggested command lines after `next:`, without the program name."""
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("next:"))
    return [shlex.split(line)[1:] for line in lines[start + 1 :] if line.startswith("  ")]


def test_an_adapter_alone_is_not_offered_itself_as_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_replay_folder(tmp_path))
    args = ["run", "--config", "run.yaml", "--adapter", "mine=adapter", "--no-base"]
    code, _, err = run_cli([*args, "--limit", "6", "--out", "runs/mine", "-q"], capsys)
    assert code == 0, err
    assert "compare runs/mine runs/mine" not in err
    assert "--baseline runs/mine" not in err
    run_base, compare, gate = _commands(err)
    assert "RUN_OF_THE_BASE" in compare and "RUN_OF_THE_BASE" in gate
    # the suggested run of the base sees the same entries; then compare and gate work
    assert run_base == [
        *["run", "--base", "--out", "runs/base", "--config", "run.yaml", "--limit", "6"]
    ]
    code, _, err = run_cli([*run_base, "-q"], capsys)
    assert code == 0, err
    baseline = "runs/base:base"
    for argv in (compare, gate):
        filled = [baseline if a == "RUN_OF_THE_BASE" else a for a in argv]
        code, _, err = run_cli(filled, capsys)
        assert code in (0, 1, 6), (filled, err)  # a verdict, not a usage error


def test_a_limited_base_run_carries_its_entries_into_the_adapters_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_replay_folder(tmp_path))
    code, _, err = run_cli(
        ["run", "--config", "run.yaml", "--limit", "6", "--out", "runs/b"], capsys
    )
    assert code == 0, err
    assert "--limit 6 looks at 6 entries, 2 of each of 3 families" in err
    run_mine, compare, gate = _commands(err)
    assert run_mine == [
        *["run", "--adapter", "mine=PATH", "--no-base", "--out", "runs/mine"],
        *["--config", "run.yaml", "--limit", "6"],
    ]
    # the adapter's run as suggested (PATH filled in), then compare and gate as printed
    filled = [a.replace("PATH", "adapter") for a in run_mine]
    code, _, err = run_cli([*filled, "-q"], capsys)
    assert code == 0, err
    for argv in (compare, gate):
        code, _, err = run_cli(argv, capsys)
        assert code in (0, 1, 6), (argv, err)


def test_families_come_along_with_a_word_on_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_replay_folder(tmp_path))
    chosen = ["--families", "should_not_call,tool_call"]
    code, _, err = run_cli(["run", "--config", "run.yaml", *chosen, "--out", "runs/b"], capsys)
    assert code == 0, err
    run_mine = _commands(err)[0]
    assert run_mine[-4:] == ["--config", "run.yaml", *chosen]
    assert "a --families run: gate it with a policy" in err


def test_two_adapters_of_one_run_compare_inside_it() -> None:
    lines = next_steps(Path("runs/r"), ["base", "mine"], ["--limit 4"])
    assert any(line.endswith("compare runs/r:base runs/r:mine") for line in lines)
    assert not any("--limit" in line for line in lines)  # no new run suggested


def test_limit_says_what_the_harness_variants_add(tmp_path: Path) -> None:
    # the embedded model's default variants come along (no model is loaded to plan)
    config = {"backend": "openai", "evalset": str(AGENT20), "out": str(tmp_path / "run")}
    plan = plan_run(RunConfig.model_validate(config), limit=16)
    added = sum(1 for j in plan.jobs if j.harness is not None)
    assert added > 0
    assert limit_line(16, plan) == (
        f"--limit 16 looks at 16 entries, 2 of each of 8 families; "
        f"the harness variants add {added}: {16 + added} generations"
    )
    assert "harness variants (routed, system-terse)" in limit_help()


def test_the_running_page_quotes_the_next_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/running.md shows what `make run` (`loragate run` alone) ends with."""
    import loragate.cli.run as run_cli_module

    monkeypatch.setattr(run_cli_module, "program_name", lambda: ".venv/bin/loragate")
    lines = next_steps(Path("runs/smollm2-135m"), ["base"], [])
    page = (Path(__file__).resolve().parent.parent / "docs" / "running.md").read_text()
    assert "\n" + "\n".join(lines) + "\n```" in page
