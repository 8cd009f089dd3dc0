"""The Python face of loragate (docs/python-api.md), used only through `import loragate`:
a run from plain arguments, scoring, reading runs back, compare and gate, on the case
study's replayed outputs (no model, no hub)."""

from __future__ import annotations

import inspect
import json
import pkgutil
import re
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

import loragate
from tests._casestudy import texts
from tests._mini_evalset import gen, write_generations

REPO = Path(__file__).resolve().parent.parent
CASE = REPO / "tests" / "data" / "casestudy"
HEAVY = ("torch", "vllm", "transformers", "peft", "trl", "ray", "mcp", "matplotlib", "openai")


def _replay_arguments(tmp_path: Path) -> dict[str, typing.Any]:
    """The case study's round-1 outputs replayed as the base model's (thinking off)."""
    outputs = [gen(entry, text) for entry, text in texts("round1").items()]
    return {
        "model": "Qwen/Qwen3-4B",
        "backend": "replay",
        "generations": write_generations(tmp_path / "gens.jsonl", outputs),
        "evalset": CASE / "evalset",
        "out": tmp_path / "run",
        "overrides": {"enable_thinking": False},
    }


def test_evaluate_builds_its_config_from_plain_arguments(tmp_path: Path) -> None:
    outcome = loragate.evaluate(**_replay_arguments(tmp_path))
    assert isinstance(outcome, loragate.RunOutcome)
    assert outcome.out_dir == tmp_path / "run"
    assert (outcome.jobs, outcome.generated) == (24, 24)
    assert loragate.read_summary(outcome.out_dir) == outcome.summary
    assert len(loragate.read_results(outcome.out_dir)) == 24
    family = outcome.summary.adapters["base"].families["should_not_call"]
    assert (family.passes, family.samples) == (1, 8)
    # the same run through a config: every generation comes from the folder's cache
    config = loragate.load_config(
        None,
        {
            "model": "Qwen/Qwen3-4B",
            "backend": "replay",
            "generations": str(tmp_path / "gens.jsonl"),
            "evalset": str(CASE / "evalset"),
            "out": str(tmp_path / "run"),
            "enable_thinking": False,
        },
    )
    assert isinstance(config, loragate.RunConfig)
    again = loragate.run(config)
    assert (again.cached, again.generated) == (24, 0)
    assert again.summary == outcome.summary


def test_evaluate_refuses_bad_arguments_before_writing(tmp_path: Path) -> None:
    arguments = _replay_arguments(tmp_path)
    with pytest.raises(loragate.BadInput, match=r"sampling\.samplez"):
        loragate.evaluate(**{**arguments, "overrides": {"sampling.samplez": 2}})
    with pytest.raises(loragate.BadInput, match="backend"):
        loragate.evaluate(**{**arguments, "backend": "vlm"})
    assert [p.name for p in tmp_path.iterdir()] == ["gens.jsonl"]


def test_score_read_compare_and_gate_the_case_study(tmp_path: Path) -> None:
    rounds = {}
    for name in ("round1", "round2"):
        scored = loragate.score_generations(
            CASE / name / "generations.jsonl", CASE / "evalset", tmp_path / name
        )
        assert isinstance(scored, loragate.ScoredRun)
        rounds[name] = loragate.load_run(
            tmp_path / name, training_log=CASE / name / "trainer_state.json"
        )
    before, after = rounds["round1"], rounds["round2"]
    assert isinstance(after, loragate.LoadedRun)
    comparison = loragate.compare_runs(before, after)
    assert isinstance(comparison, loragate.Comparison)
    row = next(r for r in comparison.families if r.family == "should_not_call")
    delta = row.deltas[0]
    assert delta is not None and round(delta.diff_points) == 75
    policy = loragate.load_policy(REPO / "configs" / "gates" / "default.yaml")
    assert isinstance(policy, loragate.GatePolicy)
    gate = loragate.evaluate_gate(policy, after, before)
    assert isinstance(gate, loragate.GateResult)
    assert (gate.verdict, gate.exit_code) == ("INCONCLUSIVE", 6)


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in loragate.__all__:
        value = getattr(loragate, name)
        if name == "__version__" or typing.get_origin(value) is typing.Literal:
            continue  # a `Literal` alias (`ParseMode`) is documented on the page
        assert inspect.getdoc(value), f"loragate.{name} has no docstring"
        assert name in dir(loragate)


def test_every_public_function_is_fully_typed() -> None:
    functions = [
        getattr(loragate, n)
        for n in loragate.__all__
        if isinstance(getattr(loragate, n), types.FunctionType)
    ]
    assert {f.__name__ for f in functions} >= {"run", "evaluate", "compare_runs"}
    for function in functions:
        hints = typing.get_type_hints(function)  # resolvable at run time, not just strings
        params = inspect.signature(function).parameters
        untyped = [p for p in params if p not in hints]
        assert not untyped and "return" in hints, (function.__qualname__, untyped)


def test_run_is_a_function_no_submodule_can_shadow() -> None:
    assert isinstance(loragate.run, types.FunctionType)
    submodules = {m.name for m in pkgutil.iter_modules(loragate.__path__)}
    assert "evaluation" in submodules
    assert not submodules & set(loragate.__all__), submodules & set(loragate.__all__)


def test_unknown_names_are_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'runn'"):
        loragate.runn  # type: ignore[attr-defined]  # noqa: B018


def test_import_loragate_stays_light() -> None:
    code = (
        "import json, sys, loragate\n"
        "first = sorted(m for m in sys.modules if m.startswith('loragate'))\n"
        "loragate.compare_runs, loragate.evaluate_gate, loragate.load_run, loragate.run\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in json.loads(sys.argv[1]))\n"
        "print(json.dumps([first, heavy]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    first, heavy = json.loads(out.stdout)
    assert first == [
        "loragate",
        "loragate.common",
        "loragate.common.faces",
        "loragate.common.version",
    ]
    assert heavy == []  # not even when the whole face has been used


PAGE = REPO / "docs" / "python-api.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_lists_every_public_name_and_no_other() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- public-names:start -->")[1].split("<!-- public-names:end -->")[0]
    listed = {n for cell in re.findall(r"^\| (.+?) \|", table, re.M) for n in _names(cell)}
    assert listed == set(loragate.__all__)


def _names(cell: str) -> list[str]:
    return re.findall(r"`(\w+)`", cell)


def test_the_page_uses_only_public_names() -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 3
    for block in blocks:
        compile(block, str(PAGE), "exec")
        used = set(re.findall(r"\bloragate\.(\w+)", block))
        assert used <= set(loragate.__all__), used - set(loragate.__all__)
        assert "from loragate" not in block


def test_the_pages_first_example_runs_as_printed(tmp_path: Path) -> None:
    for folder in ("tests", "configs", "evalsets"):
        (tmp_path / folder).symlink_to(REPO / folder)
    script = tmp_path / "example.py"
    script.write_text(_python_blocks()[0], encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "should_not_call +75 pt (p = 0.03)" in lines[0]
    assert lines[1] == "INCONCLUSIVE 6"
