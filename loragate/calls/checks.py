"""Call checks shared by the family scorers and the episode judge: call hygiene, call
matching, calls written as text, checks of an expected call (load time).

Everything here runs once per scored sample, so it is written for speed: no pydantic
models are validated except the final `Verdict`, regexes are compiled at import, and a
call's schema check goes through `Toolset.validate_arguments` (a fast check, a few
microseconds) before `jsonschema` (~40 us a call), whose answers are memoised per
toolset (k samples of one entry often repeat a call).

Every function here accepts arbitrary model output (any name, any arguments, NaN,
deep nesting) and never raises.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from loragate.calls.matchers import TextOperators, check_matcher, match_arguments, schema_problems
from loragate.calls.schemacheck import SchemaChecker
from loragate.calls.tools import Toolset
from loragate.common.errors import did_you_mean, fix_unless_said
from loragate.common.regex import Pattern, compile_pattern, pattern_problem
from loragate.formats.evalset import CallSpec
from loragate.formats.records import ParseResult, ReasonCode, Verdict

MAX_DETAIL_CHARS = 300
"""Verdict details are cut to this many characters (they end up in every results line)."""


# -- small utilities --------------------------------------------------------------


class Call(NamedTuple):
    """A parsed call with its types guaranteed (`name` a str, `arguments` a dict)."""

    name: str
    arguments: dict[str, Any]
    arguments_json: str | None = None
    """The arguments as the server passes them when they are not a JSON object of finite
    numbers (served mode; `arguments` is then empty): the call fails the schema."""


def calls_of(parse: ParseResult) -> list[Call]:
    """The parse's calls as `Call`s; odd values (from `model_construct`) are coerced."""
    out: list[Call] = []
    for c in parse.calls:
        name = c.name if isinstance(c.name, str) else str(c.name)
        args = c.arguments if isinstance(c.arguments, dict) else {}
        raw = c.arguments_json if isinstance(c.arguments_json, str) else None
        out.append(Call(name, args, raw))
    return out


def not_an_object(arguments_json: str) -> str:
    """The schema error of arguments a server passes that are not a JSON object of
    finite numbers."""
    return f"the server passes arguments {short(arguments_json)}: not a JSON object"


_SHORT = reprlib.Repr()
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlevel = 3
_SHORT.maxdict = 6
_SHORT.maxlist = 6


def short(value: Any) -> str:
    """A short, bounded `repr` of a value for a verdict detail (never raises)."""
    try:
        return _SHORT.repr(value)
    except Exception:  # a repr of model output must never break scoring
        return "<unprintable>"


def fail(reason: ReasonCode, detail: str) -> Verdict:
    """`Verdict.fail` with the detail cut to `MAX_DETAIL_CHARS`."""
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 3] + "..."
    return Verdict.fail(reason, detail)


def names(calls: Iterable[Call]) -> str:
    """Comma-separated call names, for details."""
    return ", ".join(short(c.name) for c in calls)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two values as JSON: numbers numerically, booleans apart from numbers.

    NaN equals nothing. Never raises (too deep a structure compares unequal).
    """
    try:
        return _json_equal(a, b)
    except (RecursionError, TypeError, ValueError):
        return False


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return False
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b) and bool(a == b)


# -- schema checks ------------------------------------------------------------------


def schema_errors_of(toolset: Toolset, call: Call) -> Sequence[str]:
    """The call's JSON Schema errors (empty when valid); fast and memoised in `Toolset`."""
    if call.arguments_json is not None:
        return [not_an_object(call.arguments_json)]
    return toolset.validate_arguments(call.name, call.arguments)


def hygiene(calls: Sequence[Call], toolset: Toolset) -> Verdict | None:
    """`unknown_tool` for the first call to a tool outside the toolset, else
    `schema_invalid` for the first call whose arguments fail the schema, else None."""
    for c in calls:
        if c.name not in toolset:
            return fail(ReasonCode.unknown_tool, f"{short(c.name)} is not a tool of this evalset")
    for c in calls:
        errors = schema_errors_of(toolset, c)
        if errors:
            return fail(ReasonCode.schema_invalid, f"{c.name}: {errors[0]}")
    return None


def no_call_verdict(parse: ParseResult, toolset: Toolset, expected: str) -> Verdict:
    """The verdict for a turn with no `<tool_call>` block where a call was `expected`:
    `unparseable` when the text holds a call written without tags (the scaffold would
    not run it; see `call_attempt`), else `no_call`."""
    attempt = call_attempt(parse, toolset)
    if attempt is not None:
        return fail(
            ReasonCode.unparseable,
            f"a call to {short(attempt)} written without <tool_call> tags; {expected}",
        )
    return fail(ReasonCode.no_call, f"no tool call; {expected}")


def expect_calls_prelude(
    parse: ParseResult, calls: Sequence[Call], toolset: Toolset
) -> Verdict | None:
    """The common first checks of a call-expecting family, in order:
    `unparseable`, `no_call` (`unparseable` for a call written without tags),
    `unknown_tool`, `schema_invalid`; None when all pass."""
    if parse.status == "unparseable":
        return fail(ReasonCode.unparseable, parse.error or "a tool call block could not be read")
    if not calls:
        return no_call_verdict(parse, toolset, "expected one")
    return hygiene(calls, toolset)


# -- matching calls to expected call specs -------------------------------------------


def _max_matching(candidates: list[list[int]], n_calls: int) -> list[int]:
    """Maximum bipartite matching (Kuhn): for each spec, the index of its call or -1.

    `candidates[j]` lists the calls that satisfy spec j. The recursion depth is bounded
    by the number of specs (an augmenting path alternates specs and calls).
    """
    owner = [-1] * n_calls

    def augment(j: int, seen: list[bool]) -> bool:
        for i in candidates[j]:
            if not seen[i]:
                seen[i] = True
                if owner[i] < 0 or augment(owner[i], seen):
                    owner[i] = j
                    return True
        return False

    for j in range(len(candidates)):
        if candidates[j]:
            augment(j, [False] * n_calls)
    assign = [-1] * len(candidates)
    for i, j in enumerate(owner):
        if j >= 0:
            assign[j] = i
    return assign


def arg_mismatch_detail(spec: CallSpec, call: Call, failed: Sequence[str]) -> str:
    """`tool: arg (expected M, got V), ...` for the matchers that do not hold."""
    parts = []
    for arg in failed:
        got = short(call.arguments[arg]) if arg in call.arguments else "nothing"
        parts.append(f"{arg} (expected {short(spec.arguments[arg])}, got {got})")
    return f"{spec.name}: " + "; ".join(parts)


def mismatch(spec: CallSpec, call: Call, failed: Sequence[str]) -> Verdict:
    """The verdict for a call whose `failed` matchers of `spec` do not hold:
    `invented_argument` when every one of them is `{"$absent": true}` (a value the
    user never gave was filled in), else `arg_mismatch`."""
    invented = bool(failed) and all(spec.arguments.get(arg) == {"$absent": True} for arg in failed)
    if invented:
        given = ", ".join(f"{arg}={short(call.arguments.get(arg))}" for arg in failed)
        return fail(ReasonCode.invented_argument, f"{spec.name} called with {given}, never given")
    return fail(ReasonCode.arg_mismatch, arg_mismatch_detail(spec, call, failed))


def match_calls(
    calls: Sequence[Call], specs: Sequence[CallSpec], *, text: TextOperators
) -> Verdict:
    """Judge a turn's calls against expected specs as a multiset (any order).

    A call satisfies a spec when the names are equal and every argument matcher holds.
    After a maximum assignment of calls to specs: all specs met and no call left over
    passes; all met with calls left over is `extra_call`. Otherwise, an unmet spec and a
    left-over call with the same name is `arg_mismatch` (the pair with the fewest
    failing matchers is reported; `invented_argument` when only `$absent` matchers
    fail); a left-over call with another name is `wrong_tool`; no left-over call at
    all is `missing_call`.
    """
    n, m = len(calls), len(specs)
    if n == 1 and m == 1:  # the common turn, decided as the general case below would
        call, spec = calls[0], specs[0]
        if call.name != spec.name:
            return fail(ReasonCode.wrong_tool, f"called {names(calls)}; expected {spec.name}")
        one = match_arguments(spec.arguments, call.arguments, text)
        return mismatch(spec, call, one) if one else Verdict.ok()
    # Failing matchers of every same-name (spec, call) pair, computed once.
    failing: dict[tuple[int, int], list[str]] = {}
    candidates: list[list[int]] = []
    for j, s in enumerate(specs):
        row: list[int] = []
        for i, c in enumerate(calls):
            if c.name == s.name:
                failing[j, i] = failed = match_arguments(s.arguments, c.arguments, text)
                if not failed:
                    row.append(i)
        candidates.append(row)
    assign = _max_matching(candidates, n)
    met = sum(1 for i in assign if i >= 0)
    used = {i for i in assign if i >= 0}
    left_calls = [calls[i] for i in range(n) if i not in used]
    if met == m:
        if left_calls:
            return fail(
                ReasonCode.extra_call,
                f"expected {m} call(s), got {n}; not expected: {names(left_calls)}",
            )
        return Verdict.ok()
    left_specs = [specs[j] for j in range(m) if assign[j] < 0]
    best: tuple[CallSpec, Call, list[str]] | None = None
    for j in (j for j in range(m) if assign[j] < 0):
        s = specs[j]
        for i in (i for i in range(n) if i not in used):
            c = calls[i]
            if c.name == s.name:
                failed = failing[j, i]
                if failed and (best is None or len(failed) < len(best[2])):
                    best = (s, c, failed)
    if best is not None:
        return mismatch(*best)
    expected = ", ".join(s.name for s in left_specs)
    if left_calls:
        return fail(ReasonCode.wrong_tool, f"called {names(left_calls)}; expected {expected}")
    return fail(ReasonCode.missing_call, f"{met} of {m} expected call(s) made; missing: {expected}")


# -- call attempts written as text ------------------------------------------------------

MAX_ATTEMPT_SCAN_CHARS = 20_000
"""Characters of an answer searched for a call written as text."""

_JSON_NAME_RE = re.compile(r'"(?:name|function)"\s*:\s*"([^"\n]{1,200})"')
_JSON_ARGS_RE = re.compile(r'"(?:arguments|parameters)"\s*:')
_FUNC_SYNTAX_RE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,80})\s*\(")


def call_attempt(parse: ParseResult, toolset: Toolset, *, after_calls: bool = False) -> str | None:
    """The name of a tool call written as text (no `<tool_call>` tags), or None.

    Found when the lenient reading finds a bare call where the strict one saw none,
    when the text holds `"name": "<tool of the evalset>"` or a `{"name": ...,
    "arguments": ...}` object, or when it writes `tool_name(...)` for a tool of the
    evalset. With `after_calls` (a final reply after calls ran), `tool_name()` with
    empty parentheses inside a sentence of prose names a tool and is no attempt
    (`mentions_in_prose`); with arguments, or alone on its line or in a code fence, it
    still is one.
    """
    if parse.status != "no_call":
        return None
    text = parse.answer[:MAX_ATTEMPT_SCAN_CHARS]
    json_names: list[str] = _JSON_NAME_RE.findall(text)
    for name in json_names:
        if name in toolset:
            return name
    if json_names and _JSON_ARGS_RE.search(text):
        return json_names[0]
    if parse.lenient_status == "ok":
        return json_names[0] if json_names else "a bare call"
    for m in _FUNC_SYNTAX_RE.finditer(text):
        if m.group(1) in toolset and not (after_calls and mentions_in_prose(text, m)):
            return m.group(1)
    return None


_EMPTY_PARENS_RE = re.compile(r"\s*\)")
_SENTENCE_END_RE = re.compile(r"[.!?;:]\s|\n")
_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")
MIN_PROSE_WORDS = 3
"""Words of its sentence, besides the name, that make `tool()` a mention in prose."""


def mentions_in_prose(text: str, m: re.Match[str]) -> bool:
    """True when the `name(` that `m` found is `name()` with nothing inside the
    parentheses, outside a code fence, in a sentence with at least `MIN_PROSE_WORDS`
    other words: "I turned it off with toggle_airplane_mode() and data works again"."""
    close = _EMPTY_PARENS_RE.match(text, m.end())
    if close is None or text.count("```", 0, m.start()) % 2:
        return False
    starts = [e.end() for e in _SENTENCE_END_RE.finditer(text, 0, m.start())]
    start = starts[-1] if starts else 0
    after = _SENTENCE_END_RE.search(text, close.end())
    sentence = (
        text[start : m.start()] + " " + text[close.end() : after.start() if after else len(text)]
    )
    return len(_WORD_RE.findall(sentence.replace("`", " "))) >= MIN_PROSE_WORDS


def is_destructive(policy: Any, name: str, arguments: Any, *, text: TextOperators) -> bool:
    """True when a call to `name` with `arguments` needs a confirmation first: the tool is
    in `policy.destructive_tools` and, when `policy.destructive_when` lists it, its
    arguments match those matchers (`write_file` only when it overwrites)."""
    if name not in policy.destructive_tools:
        return False
    when = getattr(policy, "destructive_when", None) or {}
    if name not in when:
        return True
    args = arguments if isinstance(arguments, dict) else {}
    return not match_arguments(when[name], args, text)


def asks_to_confirm(call: Call, action: str) -> bool:
    """True when a confirmation call is about `action`: one of its string arguments
    names the action's tool (`{"action": "pay_invoice", ...}`), or it has none."""
    values = [v for v in call.arguments.values() if isinstance(v, str)]
    return not values or any(action in v for v in values)


# -- entry checks (load time, not the hot path) --------------------------------------


MATCHER_FIX = (
    "see the argument matchers in docs/formats.md: $any, $all, $contains, $regex, $loose, "
    "$integer, $absent, $present, $never"
)


class SpecProblem(NamedTuple):
    """One problem of a call spec: `field` (None when `message` starts with its path),
    what is wrong, and how to fix it."""

    field: str | None
    message: str
    fix: str | None

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return where + self.message + (f"; {self.fix}" if self.fix else "")


def spec_problems(
    spec: CallSpec, toolset: Toolset, *, name_field: str, args_field: str, text: TextOperators
) -> list[SpecProblem]:
    """Problems of an expected call: unknown tool (at `name_field`), malformed matchers,
    unknown parameters, literals the tool's schema rejects (at `args_field.<arg>`)."""
    if spec.name not in toolset:
        fix = f"{did_you_mean(spec.name, toolset.names())}use a tool name from tools.json"
        return [SpecProblem(name_field, f"unknown tool {spec.name!r}", fix)]
    props = toolset.by_name[spec.name].function.parameters.get("properties", {})
    out: list[SpecProblem] = []
    checks = _SchemaChecks()
    for arg, matcher in spec.arguments.items():
        where = f"{args_field}.{arg}"
        for msg in check_matcher(matcher, where, text):
            # the message starts with the matcher's path
            out.append(SpecProblem(None, msg, fix_unless_said(msg, MATCHER_FIX)))
        if not isinstance(props, dict):
            continue
        if arg not in props:
            if not (isinstance(matcher, dict) and ("$absent" in matcher or "$never" in matcher)):
                out.append(
                    SpecProblem(
                        where,
                        f"tool {spec.name!r} has no parameter {arg!r}",
                        "use a parameter the tool's schema defines",
                    )
                )
            continue
        for msg in schema_problems(matcher, props[arg], checks.first_error, where):
            out.append(SpecProblem(None, msg, "make the expectation schema-valid"))
    return out


class _SchemaChecks:
    """First errors of values against the (sub)schemas of one tool, each schema
    compiled once (load time: checking the literals of expectations)."""

    def __init__(self) -> None:
        self._checkers: dict[int, tuple[Any, SchemaChecker]] = {}

    def first_error(self, value: Any, schema: Any) -> str | None:
        found = self._checkers.get(id(schema))
        if found is None:
            found = self._checkers[id(schema)] = (schema, SchemaChecker(schema))
        return found[1].first_message(value)


def compile_patterns(patterns: Sequence[str]) -> tuple[list[Pattern], list[str]]:
    """Compile an entry's regexes case-insensitively with RE2 (linear time):
    (compiled, problems)."""
    out: list[Pattern] = []
    problems: list[str] = []
    for p in patterns:
        problem = pattern_problem(p)
        if problem is not None:
            problems.append(problem)
            continue
        out.append(compile_pattern(p, ignore_case=True))
    return out, problems
