"""`loragate import bfcl`: BFCL types to JSON Schema, possible answers to matchers,
categories to families and tags, and the command's checks of its options and output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.matchers import match_arguments
from loragate.evalset import bfcl
from loragate.evalset.bfcl import (
    ImportStats,
    build_entries,
    call_spec,
    json_schema,
    tool_definition,
)
from tests.test_cli_validate import run_main

FUNCTION: dict[str, Any] = {
    "name": "weather.get",
    "description": "Weather for a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "days": {"type": "integer", "default": 1},
            "scale": {"type": "float"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "point": {"type": "tuple", "items": {"type": "integer"}},
            "opts": {
                "type": "dict",
                "properties": {"lang": {"type": "string"}, "max": {"type": "integer"}},
            },
            "extra": {"type": "any"},
        },
        "required": ["city"],
    },
}


def test_bfcl_types_become_json_schema() -> None:
    params = tool_definition(FUNCTION)["function"]["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    props = params["properties"]
    assert props["days"] == {"type": "integer", "default": 1}
    assert props["scale"] == {"type": "number"}
    assert props["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert props["point"] == {"type": "array", "items": {"type": "integer"}}
    assert props["opts"]["type"] == "object" and props["opts"]["additionalProperties"] is False
    assert props["extra"] == {}
    assert json_schema({"type": "dict", "optional": True}) == {"type": "object"}


def _spec(answer: dict[str, Any], semantics: bfcl.Semantics = "loragate") -> dict[str, Any]:
    stats = ImportStats()
    spec = call_spec("weather.get", answer, tool_definition(FUNCTION), semantics, stats)
    return dict(spec["arguments"])


def test_possible_answers_become_matchers() -> None:
    args = _spec(
        {
            "city": ["Bern", "bern"],
            "days": [3, ""],
            "opts": [{"lang": ["de", ""], "max": [5]}],
            "unit": [],
        }
    )
    assert args["city"] == {"$any": ["Bern", "bern"]}
    assert args["days"] == {"$any": [{"$absent": True}, 3]}
    assert args["opts"] == {"lang": {"$any": [{"$absent": True}, "de"]}, "max": 5}
    assert args["unit"] == {"$never": True}
    # every parameter the answer does not list must be left out (BFCL: unexpected)
    assert args["scale"] == args["point"] == args["extra"] == {"$absent": True}
    assert match_arguments(args, {"city": "Bern", "opts": {"max": 5.0}}) == ["unit"]
    args.pop("unit")
    assert match_arguments(args, {"city": "Bern", "opts": {"max": 5}, "days": 3}) == []
    assert match_arguments(args, {"city": "Bern", "opts": {"max": 5, "x": 1}}) == ["opts"]
    assert match_arguments(args, {"city": "Bern", "opts": {"max": 5}, "scale": 1.0}) == ["scale"]


def test_bfcl_semantics_write_loose_strings_and_integers() -> None:
    args = _spec({"city": ["New York, NY"], "days": [3], "point": [[1, 2]], "extra": ["x"]}, "bfcl")
    assert args["city"] == {"$loose": "New York, NY"}
    assert args["days"] == {"$integer": 3}
    assert args["point"] == [{"$integer": 1}, {"$integer": 2}]  # BFCL checks item types
    assert args["extra"] == {"$loose": "x"}  # BFCL reads `any` as a string
    assert (
        match_arguments(args, {"city": "new york ny", "days": 3, "point": [1, 2], "extra": "X"})
        == []
    )
    assert match_arguments(
        args, {"city": "new york ny", "days": 3.0, "point": [1, 2], "extra": "X"}
    ) == ["days"]


def test_schema_invalid_answers_are_dropped_and_counted() -> None:
    stats = ImportStats()
    spec = call_spec(
        "weather.get",
        {"city": ["Bern", None], "unit": ["Celsius"], "nope": [1]},
        tool_definition(FUNCTION),
        "loragate",
        stats,
    )
    assert spec["arguments"]["city"] == "Bern"
    assert spec["arguments"]["unit"] == {"$never": True}
    assert spec["arguments"]["nope"] == {"$never": True}  # a parameter the tool lacks
    assert (stats.dropped_values, stats.never) == (2, 2)


def _fake_data(root: Path) -> Path:
    (root / "possible_answer").mkdir(parents=True)
    question = [[{"role": "user", "content": "Weather in Bern?"}]]
    entries = [
        {"id": "simple_python_0", "question": question, "function": [FUNCTION]},
        {"id": "bad id!", "question": question, "function": [FUNCTION]},
        {"id": "simple_python_2", "question": question, "function": [{"name": "a b"}]},
    ]
    answers = [{"id": "simple_python_0", "ground_truth": [{"weather.get": {"city": ["Bern"]}}]}]
    irrelevant = [{"id": "irrelevance_0", "question": question, "function": [FUNCTION]}]
    (root / "BFCL_v4_simple_python.json").write_text("\n".join(map(json.dumps, entries)))
    (root / "possible_answer" / "BFCL_v4_simple_python.json").write_text(
        "\n".join(map(json.dumps, answers))
    )
    (root / "BFCL_v4_irrelevance.json").write_text("\n".join(map(json.dumps, irrelevant)))
    return root


def test_categories_become_families_and_tags(tmp_path: Path) -> None:
    entries, stats = build_entries(["simple_python", "irrelevance"], root=_fake_data(tmp_path))
    assert [(e["id"], e["family"], e["tags"]) for e in entries] == [
        ("simple_python_0", "tool_call", ["bfcl:simple_python"]),
        ("irrelevance_0", "abstain", ["bfcl:irrelevance"]),
    ]
    assert entries[0]["tools"][0]["function"]["name"] == "weather.get"
    assert entries[1]["expect"] == {}  # the abstain family's generic rule
    bfcl_rule, _ = build_entries(["irrelevance"], "bfcl", root=tmp_path)
    assert bfcl_rule[0]["expect"] == {"semantics": "bfcl"}  # any reply without a call passes
    assert [s.split(":")[0] for s in stats.skipped] == ["'bad id!'", "simple_python_2"]


@pytest.mark.bfcl
def test_import_writes_one_evalset_inside_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bfcl"
    assert (
        run_main(monkeypatch, "import", "bfcl", "--categories", "multiple", "--out", str(out)) == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bfcl"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".loragate.lock",
        "entries.jsonl",
        "evalset.yaml",
        "tools.json",
    ]
    lines = (out / "entries.jsonl").read_text().splitlines()
    assert len(lines) == 200 and json.loads((out / "tools.json").read_text()) == []
    assert "multiple                   200" in capsys.readouterr().out
    assert run_main(monkeypatch, "validate", str(out)) == 0
    assert "OK: bfcl 2026.3.23, 200 entries" in capsys.readouterr().out
    # a second import into the same folder needs --overwrite
    assert (
        run_main(monkeypatch, "import", "bfcl", "--categories", "multiple", "--out", str(out)) == 2
    )
    assert "add --overwrite" in capsys.readouterr().err
    args = ("import", "bfcl", "--categories", "irrelevance", "--out", str(out), "--overwrite")
    assert run_main(monkeypatch, *args) == 0
    assert len((out / "entries.jsonl").read_text().splitlines()) == 240


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--categories", "simple_pyton"], "did you mean 'simple_python'?"),
        (["--categories", "live_relevance"], "unsupported BFCL category 'live_relevance'"),
        (["--semantics", "bfc"], "did you mean 'bfcl'?"),
    ],
)
def test_bad_options_exit_2_with_a_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    out = tmp_path / "o"
    assert run_main(monkeypatch, "import", "bfcl", *args, "--out", str(out)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_without_bfcl_eval_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bfcl.importlib.util, "find_spec", lambda name: None)
    assert run_main(monkeypatch, "import", "bfcl", "--out", str(tmp_path / "o")) == 2
    assert "pip install 'loragate[bfcl]'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
