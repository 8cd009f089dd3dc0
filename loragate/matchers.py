"""Declarative argument matchers used inside an entry's `expect` (never code).

A matcher is one of:

- a literal (string, bool, null, list, object): equal to the value; numbers compare
  numerically (`1 == 1.0`), strings exactly;
- `{"$any": [m, ...]}`: any of the nested matchers holds;
- `{"$all": [m, ...]}`: every nested matcher holds (e.g. a confirmation summary
  that must name both the amount and the payee);
- `{"$contains": "s"}`: the value is a string containing `s`, case-insensitively
  (or a list with an element that does);
- `{"$regex": "..."}`: the value is a string in which the pattern is found (RE2
  syntax, linear time: no lookaround, no back-references; see `loragate.regex`);
- `{"$absent": true}`: the argument is not given;
- `{"$present": true}`: the argument is given, with any value.

Objects whose only key starts with `$` are operators; other objects are literals.
"""

from __future__ import annotations

import math
from typing import Any

from loragate.regex import pattern_problem, search

OPERATORS = ("$any", "$all", "$contains", "$regex", "$absent", "$present")

_MISSING = object()


def is_operator(matcher: Any) -> bool:
    return isinstance(matcher, dict) and len(matcher) == 1 and next(iter(matcher)).startswith("$")


def check_matcher(matcher: Any, path: str = "") -> list[str]:
    """Return every structural problem of a matcher (empty when it is well formed)."""
    if not is_operator(matcher):
        if isinstance(matcher, dict):
            bad = [k for k in matcher if isinstance(k, str) and k.startswith("$")]
            if bad:
                return [f"{path}: operator {bad[0]!r} must be the only key of its object"]
        return []
    op, arg = next(iter(matcher.items()))
    if op not in OPERATORS:
        return [f"{path}: unknown matcher {op!r}; known: {', '.join(OPERATORS)}"]
    if op in ("$any", "$all"):
        if not isinstance(arg, list) or not arg:
            return [f"{path}: `{op}` takes a non-empty list of matchers"]
        out: list[str] = []
        for i, sub in enumerate(arg):
            out += check_matcher(sub, f"{path}.{op}[{i}]")
        return out
    if op == "$contains" and not isinstance(arg, str):
        return [f"{path}: `$contains` takes a string"]
    if op == "$regex":
        if not isinstance(arg, str):
            return [f"{path}: `$regex` takes a string"]
        problem = pattern_problem(arg)
        if problem is not None:
            return [f"{path}: `$regex` {problem}"]
    if op in ("$absent", "$present") and arg is not True:
        return [f"{path}: `{op}` takes `true`"]
    return []


def _literal_equal(expected: Any, value: Any) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(expected, bool) and isinstance(value, bool) and expected == value
    if isinstance(expected, (int, float)) and isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return False
        return float(expected) == float(value)
    if isinstance(expected, dict) and isinstance(value, dict):
        if set(expected) != set(value):
            return False
        return all(matches(expected[k], value[k]) for k in expected)
    if isinstance(expected, list) and isinstance(value, list):
        return len(expected) == len(value) and all(
            matches(e, v) for e, v in zip(expected, value, strict=True)
        )
    return type(expected) is type(value) and bool(expected == value)


def matches(matcher: Any, value: Any = _MISSING) -> bool:
    """True when `value` (or its absence, when omitted) satisfies `matcher`. Never raises."""
    try:
        if is_operator(matcher):
            op, arg = next(iter(matcher.items()))
            if op == "$absent":
                return value is _MISSING
            if op == "$any":  # before the absence check: `$any: [$absent, X]` is legal
                return any(matches(sub, value) for sub in arg)
            if op == "$all":
                return all(matches(sub, value) for sub in arg)
            if value is _MISSING:
                return False
            if op == "$present":
                return True
            if op == "$contains":
                if isinstance(value, str):
                    return str(arg).casefold() in value.casefold()
                if isinstance(value, list):
                    return any(
                        isinstance(v, str) and str(arg).casefold() in v.casefold() for v in value
                    )
                return False
            if op == "$regex":
                return isinstance(value, str) and search(str(arg), value)
            return False
        if value is _MISSING:
            return False
        return _literal_equal(matcher, value)
    except (RecursionError, TypeError, ValueError):
        return False


def match_arguments(expected: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Check every expected argument; return the names whose matcher does not hold.

    Arguments that `expected` does not mention are not checked here (the tool's JSON
    Schema decides whether they are allowed).
    """
    failed: list[str] = []
    for name, matcher in expected.items():
        value = arguments.get(name, _MISSING)
        if not matches(matcher, value):
            failed.append(name)
    return failed


def literal_values(matcher: Any) -> list[Any]:
    """The literal values a matcher can equal (for checking them against a schema)."""
    if is_operator(matcher):
        op, arg = next(iter(matcher.items()))
        if op in ("$any", "$all") and isinstance(arg, list):
            out: list[Any] = []
            for sub in arg:
                out += literal_values(sub)
            return out
        return []
    return [matcher]
