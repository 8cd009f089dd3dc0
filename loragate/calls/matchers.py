"""Declarative argument matchers used inside an entry's `expect` (never code).

A matcher is one of:

- a literal (string, number, bool, null): equal to the value; numbers compare
  numerically (`1 == 1.0`), strings exactly;
- an object or a list without operators at its top: an object (list) value whose keys
  (elements) match it one by one; its members may be matchers themselves
  (`{"d": {"a": {"$any": ["x", "y"]}}}`); a key whose matcher holds for a missing key
  (`$absent`, `{"$any": [{"$absent": true}, ...]}`) may be left out of the value,
  every other key must be there, and the value may have no key the object lacks;
- `{"$any": [m, ...]}`: any of the nested matchers holds;
- `{"$all": [m, ...]}`: every nested matcher holds (e.g. a confirmation summary
  that must name both the amount and the payee);
- `{"$contains": "s"}`: the value is a string containing `s`, case-insensitively
  (or a list with an element that does);
- `{"$regex": "..."}`: the value is a string in which the pattern is found (RE2
  syntax, linear time: no lookaround, no back-references; see `loragate.common.regex`);
- `{"$loose": "s"}`: the value is a string equal to `s` after `loose_text` on both
  sides (case-insensitive, without the characters ` ,./-_*^`; BFCL's string rule);
- `{"$integer": n}`: the value is an integer written without a fraction or exponent
  and equal to `n` (`5.0` does not match `{"$integer": 5}`; BFCL's integer rule);
- `{"$absent": true}`: the argument is not given;
- `{"$present": true}`: the argument is given, with any value;
- `{"$never": true}`: nothing matches, neither a value nor its absence (an expected
  call whose answer admits no value can never be met).
- `{"$number": n}` (evalset format 5): a number equal to `n`, or a string that writes
  it in any common format (`4'870.50`, `4’870.50`, `4 870.50`, `4,870.50`, `4870,50`,
  `4.870,50`; `loragate.common.values`);
- `{"$date": "YYYY-MM-DD"}` (format 5): a string that writes this date in any common
  format (`2026-11-16`, `16.11.2026`, `16.11.`, `16/11/2026`, `16 Nov`, `November 16th`;
  a date written without its year counts);
- `{"$not": m}` (format 5): the value is given and `m` does not hold for it; over a
  text operator (`{"$not": {"$says": ...}}`) it forbids a *claim*: the words inside a
  question, a condition, a report of what others say or advice do not count ("we
  accept 4 Dec; should you be unable to ship by then, tell us" claims no `unable`);
- `{"$says": "a & b & !c"}` or a list of such patterns (format 5): a string that
  *affirms* one of them - the terms said within one statement, none of them under a
  negation ("we do NOT accept 4 Dec" does not say `accept* & =2026-12-04`). Text
  operators like this one are judged by the free-text library, a higher layer, whose
  judges the caller hands in (`text=loragate.judge.text.TEXT_OPERATORS`); without
  them a text operator holds for nothing and `check_matcher` says what to pass. Nothing
  is registered at import: the answer never depends on what was imported before.

Objects whose only key starts with `$` are operators; other objects are literals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from loragate.common.regex import pattern_problem, search
from loragate.common.values import date_in, number_in

OPERATORS = (
    "$any",
    "$all",
    "$contains",
    "$regex",
    "$loose",
    "$integer",
    "$absent",
    "$present",
    "$never",
    "$number",
    "$date",
    "$not",
    "$says",
)
_TAKES_TRUE = ("$absent", "$present", "$never")
_ISO_DATE = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])")

TextHolds = Callable[[Any, str], bool]
"""`holds(argument, text)`: whether a text operator with this argument holds for a
string value."""
TextProblem = Callable[[Any], "str | None"]
"""`problem(argument)`: why the argument is malformed (None when it is fine)."""


@dataclass(frozen=True)
class TextOperator:
    """The judge of a text operator (`$says`), from the free-text library
    (`loragate.judge.text.TEXT_OPERATORS`), which lives in a higher layer than the
    matchers and is handed to them by each caller."""

    holds: TextHolds
    problem: TextProblem
    claims: TextHolds
    """The operator under `$not`: whether the text *claims* it."""


TextOperators = Mapping[str, TextOperator]
"""Operator name (`$says`) -> its judge."""
NO_TEXT: TextOperators = MappingProxyType({})
"""No text judge: a text operator holds for nothing (the default)."""


def _claimed(arg: Any, value: Any, text: TextOperators) -> bool | None:
    """Whether `value` claims the text operator `arg` (`{"$says": ...}`); None when `arg`
    is no text operator."""
    if not is_operator(arg):
        return None
    op, inner = next(iter(arg.items()))
    judge = text.get(op)
    if judge is None:
        return None
    return isinstance(value, str) and judge.claims(inner, value)


def _number_holds(arg: Any, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return not (isinstance(value, float) and math.isnan(value)) and _numbers_equal(arg, value)
    return isinstance(value, str) and number_in(value, arg)


def _text_holds(op: str, arg: Any, value: Any, text: TextOperators) -> bool:
    judge = text.get(op)
    return judge is not None and isinstance(value, str) and judge.holds(arg, value)


_MISSING = object()

_LOOSE_DROP = re.compile(r"[ ,./\-_*^]")


def loose_text(text: str) -> str:
    """`text` lower-cased, without spaces and `,./-_*^`, single quotes made double:
    BFCL's `standardize_string`, so "New York, NY" and "new york ny" are one."""
    return _LOOSE_DROP.sub("", text).lower().replace("'", '"')


def is_operator(matcher: Any) -> bool:
    return isinstance(matcher, dict) and len(matcher) == 1 and next(iter(matcher)).startswith("$")


def _has_operator(matcher: Any) -> bool:
    """True when an operator sits anywhere inside the matcher."""
    if is_operator(matcher):
        return True
    if isinstance(matcher, dict):
        return any(_has_operator(v) for v in matcher.values())
    if isinstance(matcher, list):
        return any(_has_operator(v) for v in matcher)
    return False


def check_matcher(matcher: Any, path: str = "", text: TextOperators = NO_TEXT) -> list[str]:
    """Return every structural problem of a matcher (empty when it is well formed);
    `text` judges the text operators (`$says`)."""
    try:
        return _check(matcher, path, text)
    except RecursionError:
        return [f"{path}: the matcher is nested too deeply"]


def _check(matcher: Any, path: str, text: TextOperators) -> list[str]:
    if not is_operator(matcher):
        out: list[str] = []
        if isinstance(matcher, dict):
            bad = [k for k in matcher if isinstance(k, str) and k.startswith("$")]
            if bad:
                return [f"{path}: operator {bad[0]!r} must be the only key of its object"]
            for key, sub in matcher.items():
                out += _check(sub, f"{path}.{key}", text)
        elif isinstance(matcher, list):
            for i, sub in enumerate(matcher):
                out += _check(sub, f"{path}[{i}]", text)
        return out
    op, arg = next(iter(matcher.items()))
    if op not in OPERATORS:
        return [f"{path}: unknown matcher {op!r}; known: {', '.join(OPERATORS)}"]
    if op in ("$any", "$all"):
        if not isinstance(arg, list) or not arg:
            return [f"{path}: `{op}` takes a non-empty list of matchers"]
        out = []
        for i, sub in enumerate(arg):
            out += _check(sub, f"{path}.{op}[{i}]", text)
        return out
    if op in ("$contains", "$loose") and not isinstance(arg, str):
        return [f"{path}: `{op}` takes a string"]
    if op == "$integer" and (isinstance(arg, bool) or not isinstance(arg, int)):
        return [f"{path}: `$integer` takes an integer, e.g. 5"]
    if op == "$regex":
        if not isinstance(arg, str):
            return [f"{path}: `$regex` takes a string"]
        problem = pattern_problem(arg)
        if problem is not None:
            return [f"{path}: `$regex` {problem}"]
    if op in _TAKES_TRUE and arg is not True:
        return [f"{path}: `{op}` takes `true`"]
    if op == "$number" and (isinstance(arg, bool) or not isinstance(arg, (int, float))):
        return [f"{path}: `$number` takes a number, e.g. 4870.5"]
    if op == "$date" and not (isinstance(arg, str) and _ISO_DATE.fullmatch(arg)):
        return [f'{path}: `$date` takes an ISO date, e.g. "2026-11-16"']
    if op == "$not":
        return _check(arg, f"{path}.$not", text)
    if op in text:
        problem = text[op].problem(arg)
        return [f"{path}: `{op}` {problem}"] if problem else []
    if op == "$says":
        return [
            f"{path}: `$says` needs the free-text judge: pass "
            "text=loragate.judge.text.TEXT_OPERATORS"
        ]
    return []


def _literal_equal(expected: Any, value: Any) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(expected, bool) and isinstance(value, bool) and expected == value
    if isinstance(expected, (int, float)) and isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return False
        return _numbers_equal(expected, value)
    if isinstance(expected, dict) and isinstance(value, dict):
        if any(k not in expected for k in value):
            return False
        return all(matches(sub, value.get(k, _MISSING)) for k, sub in expected.items())
    if isinstance(expected, list) and isinstance(value, list):
        return len(expected) == len(value) and all(
            matches(e, v) for e, v in zip(expected, value, strict=True)
        )
    return type(expected) is type(value) and bool(expected == value)


def _numbers_equal(expected: int | float, value: int | float) -> bool:
    """Numeric equality as floats (`1 == 1.0`); an integer too large for a float (a
    400-digit literal) is compared exactly instead of raising `OverflowError`."""
    try:
        return float(expected) == float(value)
    except OverflowError:
        return expected == value


def _contains(arg: Any, value: Any) -> bool:
    needle = str(arg).casefold()
    if isinstance(value, str):
        return needle in value.casefold()
    if isinstance(value, list):
        return any(isinstance(v, str) and needle in v.casefold() for v in value)
    return False


def _operator_holds(op: str, arg: Any, value: Any, text: TextOperators) -> bool:
    """Whether operator `op` with `arg` holds for a given value (not `_MISSING`)."""
    if op == "$present":
        return True
    if op == "$contains":
        return _contains(arg, value)
    if op == "$regex":
        return isinstance(value, str) and search(str(arg), value)
    if op == "$loose":
        return isinstance(value, str) and loose_text(value) == loose_text(str(arg))
    if op == "$integer":
        return type(value) is int and value == arg
    if op == "$number":
        return _number_holds(arg, value)
    if op == "$date":
        return isinstance(value, str) and isinstance(arg, str) and date_in(value, arg)
    if op == "$not":
        claimed = _claimed(arg, value, text)
        return not (matches(arg, value, text) if claimed is None else claimed)
    if op in text:
        return _text_holds(op, arg, value, text)
    return False  # `$never`, and `$absent` for a given value


def matches(matcher: Any, value: Any = _MISSING, text: TextOperators = NO_TEXT) -> bool:
    """True when `value` (or its absence, when omitted) satisfies `matcher`; `text`
    judges the text operators (`$says`). Never raises."""
    try:
        if is_operator(matcher):
            op, arg = next(iter(matcher.items()))
            if op == "$absent":
                return value is _MISSING
            if op == "$any":  # before the absence check: `$any: [$absent, X]` is legal
                return any(matches(sub, value, text) for sub in arg)
            if op == "$all":
                return all(matches(sub, value, text) for sub in arg)
            if value is _MISSING:
                return False
            return _operator_holds(op, arg, value, text)
        if value is _MISSING:
            return False
        return _literal_equal(matcher, value)
    except (RecursionError, TypeError, ValueError):
        return False


Check = Callable[[Any], bool]
"""A compiled matcher: `check(value)` (or `check(MISSING)` for an absent argument)."""

MISSING: Any = _MISSING
"""The value a compiled matcher is given for an argument that is not there."""


def compile_matcher(matcher: Any, text: TextOperators = NO_TEXT) -> Check:
    """`matcher` as a function of the value, equal to `matches(matcher, value)` for every
    value, with the matcher's structure read once instead of at each call (a test holds
    the two equal on generated matchers and values). Anything it does not recognise is
    judged by `matches` itself, and so is a matcher nested deeper than
    `COMPILE_MAX_DEPTH` (where `matches` turns a `RecursionError` into a miss)."""
    try:
        return _compile(matcher, 0, text)
    except _TooDeep:
        return lambda value: matches(matcher, value, text)


COMPILE_MAX_DEPTH = 50


class _TooDeep(Exception):
    pass


def _compile(m: Any, depth: int, text: TextOperators) -> Check:
    if depth > COMPILE_MAX_DEPTH:
        raise _TooDeep
    if is_operator(m):
        op, arg = next(iter(m.items()))
        return _compile_operator(op, arg, m, depth, text)
    if isinstance(m, bool):
        return lambda v: type(v) is bool and v == m
    if isinstance(m, (int, float)):
        return lambda v: (
            type(v) is not bool
            and isinstance(v, (int, float))
            and not (isinstance(v, float) and math.isnan(v))
            and _numbers_equal(m, v)
        )
    if isinstance(m, str) or m is None:
        kind = type(m)
        return lambda v: type(v) is kind and m == v
    if isinstance(m, dict):
        members = [(k, _compile(sub, depth + 1, text)) for k, sub in m.items()]

        def object_matches(v: Any) -> bool:
            if type(v) is bool or not isinstance(v, dict):
                return False
            if any(k not in m for k in v):
                return False
            return all(check(v.get(k, _MISSING)) for k, check in members)

        return object_matches
    if isinstance(m, list):
        items = [_compile(sub, depth + 1, text) for sub in m]

        def array_matches(v: Any) -> bool:
            if type(v) is bool or not isinstance(v, list) or len(v) != len(items):
                return False
            return all(check(x) for check, x in zip(items, v, strict=True))

        return array_matches
    return lambda v: matches(m, v, text)


def _compile_operator(op: str, arg: Any, m: Any, depth: int, text: TextOperators) -> Check:
    if op == "$absent":
        return lambda v: v is _MISSING
    if op in ("$any", "$all"):
        if not isinstance(arg, list):
            return lambda v: matches(m, v, text)
        subs = [_compile(sub, depth + 1, text) for sub in arg]
        if op == "$any":
            return lambda v: any(check(v) for check in subs)
        return lambda v: all(check(v) for check in subs)
    if op == "$present":
        return lambda v: v is not _MISSING
    if op == "$contains":
        needle = str(arg).casefold()
        return lambda v: (
            v is not _MISSING
            and (
                needle in v.casefold()
                if isinstance(v, str)
                else isinstance(v, list)
                and any(isinstance(x, str) and needle in x.casefold() for x in v)
            )
        )
    if op == "$regex":
        pattern = str(arg)
        return lambda v: isinstance(v, str) and search(pattern, v)
    if op == "$loose":
        target = loose_text(str(arg))
        return lambda v: isinstance(v, str) and loose_text(v) == target
    if op == "$integer":
        return lambda v: type(v) is int and v == arg
    if op == "$number":
        return lambda v: v is not _MISSING and _number_holds(arg, v)
    if op == "$date":
        return lambda v: isinstance(v, str) and isinstance(arg, str) and date_in(v, arg)
    if op == "$not":
        if is_operator(arg) and next(iter(arg)) in text:
            return lambda v: v is not _MISSING and not _claimed(arg, v, text)
        inner = _compile(arg, depth + 1, text)
        return lambda v: v is not _MISSING and not inner(v)
    if op == "$says":
        return lambda v: _text_holds(op, arg, v, text)
    return lambda v: False  # `$never` and unknown operators hold for nothing


_COMPILED_MAX = 100_000
_compiled_arguments: dict[tuple[str, int], tuple[TextOperators, list[tuple[str, Check]]]] = {}
"""(repr(expected arguments), id of the text judges) -> those judges and the compiled
matchers, bounded by clearing. Keyed by content, not identity: an expectation changed
in place is compiled afresh (a cache only: the answer is the same without it)."""


def match_arguments(
    expected: dict[str, Any], arguments: dict[str, Any], text: TextOperators = NO_TEXT
) -> list[str]:
    """Check every expected argument; return the names whose matcher does not hold.

    Arguments that `expected` does not mention are not checked here (the tool's JSON
    Schema decides whether they are allowed). `text` judges the text operators
    (`$says`; without it they hold for nothing). The matchers are compiled once per
    distinct `expected` (`compile_matcher`; its `repr` tells `1`, `1.0` and `True`,
    lists and tuples apart).
    """
    try:
        key = (repr(expected), id(text))
    except RecursionError:
        get_value = arguments.get
        return [n for n, m in expected.items() if not matches(m, get_value(n, _MISSING), text)]
    cached = _compiled_arguments.get(key)
    if cached is not None and cached[0] is text:
        compiled = cached[1]
    else:
        if len(_compiled_arguments) >= _COMPILED_MAX:
            _compiled_arguments.clear()
        compiled = [(name, compile_matcher(matcher, text)) for name, matcher in expected.items()]
        _compiled_arguments[key] = (text, compiled)
    get = arguments.get
    return [name for name, check in compiled if not check(get(name, _MISSING))]


SchemaCheck = Callable[[Any, Any], str | None]
"""`check(value, schema)`: the first JSON Schema error of `value`, or None when valid."""


def schema_problems(matcher: Any, schema: Any, check: SchemaCheck, path: str = "") -> list[str]:
    """The literals inside `matcher` that `schema` rejects, each as `path: message`.

    Operators are not values: a literal without operators is checked whole; an object
    or list holding operators is walked member by member against `properties`
    (`additionalProperties`) or `items`; `$any` / `$all` check each alternative;
    `$loose` and `$integer` check their value; the others check nothing.
    """
    return list(_schema_problems(matcher, schema, check, path))


def _schema_problems(matcher: Any, schema: Any, check: SchemaCheck, path: str) -> Iterator[str]:
    if not isinstance(schema, dict):
        return  # `true` or a schema loragate does not walk: nothing to hold the value to
    if is_operator(matcher):
        op, arg = next(iter(matcher.items()))
        if op in ("$any", "$all") and isinstance(arg, list):
            for sub in arg:
                yield from _schema_problems(sub, schema, check, path)
        elif op in ("$loose", "$integer", "$number") and not (
            op == "$number" and _allows_type(schema, "string")
        ):
            yield from _schema_problems(arg, schema, check, path)
        return
    if not _has_operator(matcher):
        error = check(matcher, schema)
        if error is not None:
            yield f"{path}: expected value {matcher!r} would be rejected by the tool's schema: {error}"
        return
    if isinstance(matcher, dict):
        if not _allows_type(schema, "object"):
            yield f"{path}: an object where the tool's schema expects {schema.get('type')!r}"
            return
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, sub in matcher.items():
            where = f"{path}.{key}"
            if isinstance(props, dict) and key in props:
                yield from _schema_problems(sub, props[key], check, where)
            elif extra is False and not _admits_absence(sub):
                yield f"{where}: the tool's schema has no property {key!r} here"
            elif isinstance(extra, dict):
                yield from _schema_problems(sub, extra, check, where)
    elif isinstance(matcher, list):
        if not _allows_type(schema, "array"):
            yield f"{path}: a list where the tool's schema expects {schema.get('type')!r}"
            return
        items = schema.get("items", {})
        for i, sub in enumerate(matcher):
            yield from _schema_problems(sub, items, check, f"{path}[{i}]")


def _allows_type(schema: dict[str, Any], kind: str) -> bool:
    declared = schema.get("type")
    if declared is None:
        return True
    return kind == declared or (isinstance(declared, list) and kind in declared)


def _admits_absence(matcher: Any) -> bool:
    return matches(matcher)
