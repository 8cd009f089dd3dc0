"""Argument matchers: nested matchers in objects and lists, `$loose`, `$integer`,
`$never`, and `validate` checking the literal leaves against the tool's schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.checks import spec_problems
from loragate.calls.matchers import check_matcher, loose_text, match_arguments, matches
from loragate.calls.tools import ToolDef, Toolset
from loragate.cli.app import main
from loragate.evalset.load import load_evalset
from loragate.families import CallSpec
from loragate.judge.text import TEXT_OPERATORS

D_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "d": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "additionalProperties": False,
        },
        "xs": {"type": "array", "items": {"type": "string"}},
        "n": {"type": "integer"},
    },
}
TOOLSET = Toolset([ToolDef.model_validate({"function": {"name": "f", "parameters": D_SCHEMA}})])


def problems(arguments: dict[str, Any]) -> list[str]:
    spec = CallSpec(name="f", arguments=arguments)
    return [
        str(p)
        for p in spec_problems(
            spec, TOOLSET, name_field="n", args_field="args", text=TEXT_OPERATORS
        )
    ]


def test_nested_any_inside_an_object_is_valid_and_scored() -> None:
    expect = {"d": {"a": {"$any": ["x", "y"]}}}
    assert problems(expect) == []
    assert match_arguments(expect, {"d": {"a": "y"}}) == []
    assert match_arguments(expect, {"d": {"a": "z"}}) == ["d"]
    assert match_arguments(expect, {"d": {"a": "x", "b": 1}}) == ["d"]  # key not expected
    assert match_arguments(expect, {"d": {}}) == ["d"]  # key missing


def test_nested_absence_and_lists() -> None:
    m = {"a": "x", "b": {"$any": [{"$absent": True}, 3]}}
    assert matches(m, {"a": "x"})
    assert matches(m, {"a": "x", "b": 3.0})
    assert not matches(m, {"a": "x", "b": 4})
    assert matches([{"$loose": "New York"}, "b"], ["new-york", "b"])
    assert not matches([{"$loose": "New York"}, "b"], ["new-york"])


def test_validate_checks_the_literal_leaves_not_the_operators() -> None:
    assert problems({"d": {"a": {"$any": ["x", 7]}}}) == [
        "args.d.a: expected value 7 would be rejected by the tool's schema: "
        "7 is not of type 'string'; make the expectation schema-valid"
    ]
    assert problems({"d": {"c": {"$any": ["x"]}}}) == [
        "args.d.c: the tool's schema has no property 'c' here; make the expectation schema-valid"
    ]
    assert problems({"xs": [{"$loose": "a"}, 5]})[0].startswith("args.xs[1]: expected value 5")
    assert problems({"n": {"$integer": 5}}) == []
    assert problems({"n": {"$loose": "five"}})[0].startswith("args.n: expected value 'five'")
    assert problems({"n": {"$never": True}}) == []
    # a literal without operators is still checked whole
    assert "additional" in problems({"d": {"a": "x", "z": 1}})[0].lower()


def test_loose_is_bfcls_string_rule() -> None:
    assert loose_text("New York, NY") == "newyorkny"
    assert loose_text("It's 5/4 - A_B*C^D.") == 'it"s54abcd'
    assert matches({"$loose": "New York, NY"}, "new york ny")
    assert matches({"$loose": "2024-04-01"}, "20240401")
    assert not matches({"$loose": "New York, NY"}, "New York City")
    assert not matches({"$loose": "5"}, 5)
    assert not matches({"$loose": "x"})


def test_integer_refuses_a_fraction_and_bools() -> None:
    assert matches({"$integer": 5}, 5)
    assert not matches({"$integer": 5}, 5.0)
    assert matches(5, 5.0)  # the plain literal compares numerically
    assert not matches({"$integer": 1}, True)
    assert not matches({"$integer": 5}, 6)


def test_never_matches_nothing() -> None:
    assert not matches({"$never": True})
    for value in (None, "", 0, [], {}, "x"):
        assert not matches({"$never": True}, value)
    assert matches({"$any": [{"$never": True}, {"$absent": True}]})


@pytest.mark.parametrize(
    ("matcher", "message"),
    [
        ({"$loose": 5}, "`$loose` takes a string"),
        ({"$integer": 5.5}, "`$integer` takes an integer"),
        ({"$integer": True}, "`$integer` takes an integer"),
        ({"$never": False}, "`$never` takes `true`"),
        ({"a": {"$nope": 1}}, ".a: unknown matcher '$nope'"),
        ([{"$any": []}], "[0]: `$any` takes a non-empty list"),
    ],
)
def test_malformed_matchers_are_named(matcher: Any, message: str) -> None:
    found = check_matcher(matcher, "m")
    assert found and message in found[0]


def _write(root: Path, expect: dict[str, Any]) -> Path:
    root.mkdir()
    (root / "evalset.yaml").write_text("name: nested\nversion: '1'\n")
    tool = {"type": "function", "function": {"name": "f", "parameters": D_SCHEMA}}
    (root / "tools.json").write_text(json.dumps([tool]))
    entry = {
        "id": "N-1",
        "family": "tool_call",
        "messages": [{"role": "user", "content": "call f"}],
        "expect": {"calls": [{"name": "f", "arguments": expect}]},
    }
    (root / "entries.jsonl").write_text(json.dumps(entry) + "\n")
    return root


def test_validate_accepts_the_nested_matcher_of_issue_8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write(tmp_path / "ev", {"d": {"a": {"$any": ["x", "y"]}}})
    monkeypatch.setattr(sys, "argv", ["loragate", "validate", str(root)])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0, capsys.readouterr()
    assert load_evalset(root).entries[0].id == "N-1"
