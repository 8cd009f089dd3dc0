"""Untrusted regexes run on RE2: refused at load time when RE2 cannot run them, and
linear in the output when it can (no input can hang `score`)."""

from __future__ import annotations

import pytest

from loragate.calls.matchers import check_matcher, matches
from loragate.calls.schemacheck import SchemaChecker
from loragate.calls.tools import ToolDef, ToolFunction, Toolset, schema_errors
from loragate.common.regex import PatternError, compile_pattern, pattern_problem, search

CATASTROPHIC = ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "(x+x+)+y", "^(\\w+\\s?)*$"]
HOSTILE = "a" * 50_000 + "!"


@pytest.mark.parametrize("pattern", ["(?<=x)y", "(?=x)", "(?!x)", "(a)\\1", "(?<!x)y"])
def test_what_re2_cannot_run_is_refused_with_a_fix(pattern: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(pattern)
    problem = pattern_problem(pattern)
    assert problem is not None and "fix:" in problem
    assert check_matcher({"$regex": pattern}, "x")
    assert any("fix:" in e for e in schema_errors(_schema(pattern)))


def test_overlong_and_non_string_patterns_are_refused() -> None:
    assert pattern_problem("a" * 20_000) is not None
    assert pattern_problem(3) is not None
    assert not search("(?<=x)", "x")  # a bad pattern never matches and never raises


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_patterns_finish(pattern: str) -> None:
    """Python's `re` takes exponential time here (hours at 40 characters); RE2 is linear.
    The timeout is a hang detector, not a speed claim."""
    assert pattern_problem(pattern) is None
    assert not matches({"$regex": pattern}, HOSTILE)
    toolset = Toolset([ToolDef(function=ToolFunction(name="t", parameters=_schema(pattern)))])
    assert toolset.validate_arguments("t", {"q": HOSTILE})
    checker = SchemaChecker(_schema(pattern))
    assert checker.has_fast_path and not checker.surely_valid({"q": HOSTILE})


def _schema(pattern: str) -> dict[str, object]:
    return {"type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}}
