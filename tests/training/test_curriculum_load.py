"""Reading an evalset's curriculum.yaml: found beside the evalset, every problem named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loragate.cli.app import app
from loragate.common.errors import BadInput
from loragate.evalset.load import load_evalset
from loragate.training.curriculum import generate_curriculum, load_curriculum

MINIMAL = """\
format_version: 1
tables:
  companies: [{name: Acme, domain: acme.example}]
families:
  tool_call:
    - name: lookup
      steps:
        - {let: company, pick: "{companies}"}
        - {let: n, randint: [1000, 1999]}
      messages:
        - user: "Status of INV-{n} from {company.name}?"
        - calls: [{tool: get_invoice, args: {invoice_id: "INV-{n}"}}]
"""


def _evalset_copy(agent20_dir: Path, root: Path, curriculum: str | None) -> Path:
    root.mkdir(parents=True)
    for name in ("evalset.yaml", "tools.json", "entries.jsonl"):
        shutil.copy(agent20_dir / name, root / name)
    if curriculum is not None:
        (root / "curriculum.yaml").write_text(curriculum, encoding="utf-8")
    return root


def _problems(root: Path) -> dict[str, str]:
    with pytest.raises(BadInput) as exc:
        load_curriculum(root)
    assert all(p.file == str(root / "curriculum.yaml") and p.fix for p in exc.value.problems)
    return {str(p.field): p.message for p in exc.value.problems}


def test_an_evalset_without_a_curriculum_is_refused(agent20_dir: Path, tmp_path: Path) -> None:
    root = _evalset_copy(agent20_dir, tmp_path / "plain", None)
    with pytest.raises(BadInput, match=r"has no curriculum.yaml; write one like") as exc:
        load_curriculum(root)
    assert exc.value.problems[0].fix and "evalsets/agent20/curriculum.yaml" in str(exc.value)


def test_found_beside_the_evalset_not_in_the_working_directory(
    agent20_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _evalset_copy(agent20_dir, tmp_path / "mine", MINIMAL)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "evalsets" / "agent20").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    curriculum = load_curriculum(root)
    assert curriculum.families == ("tool_call",) and curriculum.tools["tool_call"] == (
        "get_invoice",
    )
    evalset = load_evalset(root)
    [example] = generate_curriculum({"tool_call": 1}, curriculum, evalset.toolset, None)
    assert example.tags == ("lookup",)
    assert example.messages[0]["content"].endswith("from Acme?")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["curriculum", "-f", "tool_call=3", "-t", str(root), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["tags"][0] for r in rows} == {"lookup"}
    # The agent20 families are not in this evalset's curriculum.
    result = CliRunner().invoke(
        app, ["curriculum", "-f", "clarify=3", "-t", str(root), "-o", str(out)]
    )
    assert isinstance(result.exception, BadInput)
    assert "known families: tool_call" in str(result.exception)


def test_the_bundled_curriculum_is_found_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "c.jsonl"
    result = CliRunner().invoke(app, ["curriculum", "-f", "clarify=4", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 4


def test_every_problem_names_the_field(agent20_dir: Path, tmp_path: Path) -> None:
    bad = """\
format_version: 1
tables:
  days: [2026-11-17]
  confirmation_tool: [x]
fragments:
  loop:
    - [{one_of: loop}]
families:
  tool_calls:
    - name: a
      steps:
        - {let: n, randint: [1, 2], colour: red}
      messages:
        - {user: hi}
        - {answer: ok}
  clarify:
    - name: b
      steps:
        - {let: who, pick: "{people}"}
        - {let: x, value: "{who|shout}"}
        - {one_of: nowhere}
        - {one_of: loop}
      messages:
        - user: "{whom} {"
        - answer: "{x}"
    - name: b
      messages: [{user: hi}, {frobnicate: 1}]
"""
    root = _evalset_copy(agent20_dir, tmp_path / "bad", bad)
    problems = _problems(root)
    # pydantic's checks come first: the other ones need a valid file.
    assert set(problems) == {
        "tables.days.0",
        "families.tool_calls.0.steps.0.RandInt.colour",
        "families.clarify.1.messages.1",
    }
    fixed = bad.replace("[2026-11-17]", '["2026-11-17"]').replace(", colour: red", "")
    fixed = fixed.replace("{frobnicate: 1}", "{answer: ok}")
    root.joinpath("curriculum.yaml").write_text(fixed, encoding="utf-8")
    problems = _problems(root)
    assert "unknown family `tool_calls`" in problems["families.tool_calls"]
    assert "built in" in problems["tables.confirmation_tool"]
    assert "`{people}` is not defined" in problems["families.clarify.0.steps.0"]
    assert "unknown filter `shout`" in problems["families.clarify.0.steps.1"]
    assert "no fragment `nowhere`" in problems["families.clarify.0.steps.2.one_of"]
    assert "uses itself" in problems["fragments.loop"]
    assert "brace" in problems["families.clarify.0.messages.0"]
    assert "also used at families.clarify.0" in problems["families.clarify.1.name"]


def test_an_undefined_name_is_caught_before_generating(agent20_dir: Path, tmp_path: Path) -> None:
    root = _evalset_copy(
        agent20_dir, tmp_path / "typo", MINIMAL.replace("{company.name}", "{compny}")
    )
    problems = _problems(root)
    assert problems == {
        "families.tool_call.0.messages.0": "`{compny}` is not defined at this point"
    }
