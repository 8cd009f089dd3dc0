"""loragate's three readings beside vLLM's server, output by output.

The served reading must run exactly the calls the server runs (name and arguments, in
order); a request the server fails is an unparseable output with no call. Lone surrogates are compared as the U+FFFD loragate writes in
their place: the one named difference.

Where the strict or the lenient reading runs other calls than the server, the output
falls into one class of `STRICT_CLASSES` or `LENIENT_CLASSES` (docs/call-formats.md
lists them with counts); `unexplained` must stay empty: it would be a difference no
class names.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loragate.calls.parsing import parse_output
from loragate.calls.tools import Toolset
from loragate.common.surrogates import without_surrogates
from loragate.formats.records import ParseResult
from tests._vllm.oracle import Served, VllmPipeline
from tests._vllm.tools import Case, toolset

CallKey = tuple[str, str]


def _canonical(name: str, arguments: Any, as_text: bool) -> CallKey:
    """A call as comparable text: the name and the decoded arguments written back
    (NaN allowed), lone surrogates as U+FFFD."""
    value = arguments
    if as_text:
        try:
            value = json.loads(arguments)
        except (TypeError, ValueError):
            value = arguments
    return without_surrogates(name), without_surrogates(json.dumps(value, ensure_ascii=False))


def server_calls(served: Served) -> list[CallKey]:
    return [_canonical(n, a, True) for n, a in served.calls]


def reading_calls(result: ParseResult) -> list[CallKey]:
    """The calls a reading runs (none when it is not `ok`)."""
    if result.status != "ok":
        return []
    return [
        _canonical(c.name, c.arguments_json, True)
        if c.arguments_json is not None
        else _canonical(c.name, c.arguments, False)
        for c in result.calls
    ]


def served_agrees(served: Served, ours: ParseResult) -> bool:
    """The served reading runs what the server runs (a request the server fails: no
    call, unparseable)."""
    if served.error is not None:
        return ours.status == "unparseable" and not ours.calls
    return reading_calls(ours) == server_calls(served)


# -- classes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """What a classifier sees of one output."""

    case: Case
    served: ParseResult
    reading: ParseResult
    strict: ParseResult

    @property
    def error(self) -> str:
        return self.strict.error or ""

    @property
    def xml_stack(self) -> bool:
        return self.case.stack.call_format == "qwen3_xml"

    @property
    def server_runs(self) -> bool:
        return self.served.status == "ok"

    @property
    def server_args(self) -> list[Any]:
        return [c.arguments_json for c in self.served.calls if self.served.status == "ok"]


@dataclass(frozen=True)
class DiffClass:
    name: str
    reason: str
    test: Callable[[Facts], bool]


_PARTIAL_END = re.compile(r"</(?:t(?:o(?:o(?:l(?:_(?:c(?:a(?:l(?:l)?)?)?)?)?)?)?)?)?\s*$")
_CLOSE_IN_STRING = re.compile(r'"[^"\n]*</tool_call>[^"\n]*"')


def _says(*parts: str) -> Callable[[Facts], bool]:
    return lambda f: any(p in f.error for p in parts)


def _other_format(f: Facts) -> bool:
    return not f.xml_stack and f.strict.format == "qwen3_xml"


def _non_xml_block(f: Facts) -> bool:
    return f.xml_stack and (
        f.strict.format == "hermes"
        or any(p in f.error for p in ("with no <function=", "invalid JSON", "empty block"))
    )


_JSON_BODY = re.compile(r"<function=\s*>\s*\{")


def _json_body(f: Facts) -> bool:
    return f.xml_stack and "has no name" in f.error and bool(_JSON_BODY.search(f.case.text))


def _server_passes(start: str) -> Callable[[Facts], bool]:
    """The server passes arguments whose JSON text starts with `start`."""
    return lambda f: (
        f.reading.repaired and any(a is not None and a.startswith(start) for a in f.server_args)
    )


def _non_object(f: Facts) -> bool:
    return "`arguments` is a" in f.error or any(
        a is not None and not a.startswith("{") for a in f.server_args
    )


SHARED: list[DiffClass] = [
    DiffClass(
        "other_format",
        "Qwen3 XML calls under the Hermes stack: the server's Hermes parser runs none of them",
        _other_format,
    ),
    DiffClass(
        "non_xml_block",
        "a <tool_call> holding JSON, other text or nothing under the Qwen3 XML stack: the "
        "server drops it silently and runs the output's other calls",
        _non_xml_block,
    ),
    DiffClass(
        "xml_json_body",
        "<function=> with a JSON object as its body: the server takes the name from the JSON "
        "(and runs the call with no arguments, or with the JSON's when the name is blank)",
        _json_body,
    ),
    DiffClass(
        "non_json_whitespace",
        "a block whose JSON is wrapped in whitespace JSON does not allow (no-break space, "
        "U+3000, U+2028, a vertical tab, ...): the server fails on it and runs no call",
        lambda f: "invalid JSON" in (f.served.error or "") and f.strict.status == "ok",
    ),
    DiffClass(
        "non_finite_number",
        "the server passes NaN / Infinity (or a number past a float's range as Infinity) on",
        _says("not a JSON number", "non-finite", "overflows"),
    ),
    DiffClass(
        "non_object_arguments",
        'the server runs the call with `arguments` 42, "text" (a string holding JSON too), '
        "[..], null or true",
        _non_object,
    ),
    DiffClass(
        "empty_name",
        'the server runs a call named "" (Hermes) or drops it and runs the others (XML)',
        _says("`name` is missing, empty", "has no name"),
    ),
    DiffClass(
        "duplicate_key",
        "two values for one key (or parameter): the server keeps the last",
        _says("duplicate key", "given twice"),
    ),
    DiffClass(
        "xml_dropped_parameter",
        "a last parameter with no </parameter>: the server drops it and runs the call without it",
        _says("is not closed by </parameter>"),
    ),
    DiffClass(
        "xml_dropped_text",
        "text inside an XML block outside the tags: the server drops it silently",
        _says("text between", "text outside <parameter"),
    ),
    DiffClass(
        "xml_malformed_tag",
        "<function=NAME with no '>' or an empty parameter name: the server runs a call with "
        "empty or garbled arguments",
        _says("is not closed by '>'", "empty name"),
    ),
]

STRICT_CLASSES: list[DiffClass] = [
    DiffClass(
        "unclosed_final_block",
        "a final block with no </tool_call> (</function> for XML): the server runs it when its "
        "body is complete; strict counts the missing close as a format error",
        _says("not closed (no </tool_call>)", "not closed (no </function>)"),
    ),
    *SHARED,
]

LENIENT_CLASSES: list[DiffClass] = [
    *SHARED[:5],
    DiffClass(
        "partial_end_tag",
        "a final block cut inside its end tag (`</tool_ca`): lenient drops the fragment",
        lambda f: bool(_PARTIAL_END.search(f.case.text)) and "not closed" in f.error,
    ),
    DiffClass(
        "close_tag_in_string",
        "a block cut by a </tool_call> inside an argument string, then repaired: the server "
        "fails on the cut JSON",
        lambda f: bool(_CLOSE_IN_STRING.search(f.case.text)) and f.reading.repaired,
    ),
    DiffClass(
        "tool_call_inside_block",
        "a <tool_call> opened inside a block: lenient reads each piece as a block",
        lambda f: not f.xml_stack and f.case.text.count("<tool_call>") > 1 and f.reading.repaired,
    ),
    DiffClass(
        "list_in_block",
        "a list of calls in one block: the server runs none of the output's calls",
        _says("a list of calls in one block"),
    ),
    DiffClass(
        "openai_wrapper",
        'the OpenAI {"type": "function", "function": {...}} wrapper: the server finds no '
        "`name` and runs no call",
        lambda f: '"function": {' in f.case.text and "`name` is missing" in f.error,
    ),
    DiffClass(
        "parameters_for_arguments",
        '"parameters" for "arguments": the server runs no call (no `arguments` key)',
        _says("`parameters` given instead"),
    ),
    DiffClass(
        "missing_arguments",
        "no `arguments` key, read as {}: the server runs no call",
        _says("`arguments` is missing"),
    ),
    DiffClass(
        "fence_in_block",
        "a Markdown code fence inside the block: the server fails on it and runs no call",
        lambda f: "```" in f.case.text and f.reading.repaired,
    ),
    DiffClass(
        "bare_json",
        "a call written as JSON with no tags: the server runs nothing",
        lambda f: f.strict.status == "no_call" and f.reading.status == "ok",
    ),
    DiffClass(
        "string_arguments",
        "`arguments` as a string holding a JSON object, read as the object: the server passes "
        "the string",
        _server_passes('"'),
    ),
    DiffClass(
        "null_arguments",
        "`arguments` null, read as {}: the server passes null",
        _server_passes("null"),
    ),
    DiffClass(
        "unclosed_final_block",
        "a final block with no </tool_call> whose body is not complete JSON, closed and "
        "repaired: the server fails on it",
        _says("not closed (no </tool_call>)", "not closed (no </function>)"),
    ),
    DiffClass(
        "json_repair",
        "invalid JSON mended by json_repair (a trailing comma, Python None / True, single "
        "quotes, a comment, text beside the JSON): the server fails on the block and runs no call",
        lambda f: "invalid JSON" in f.error and f.reading.repaired,
    ),
    *SHARED[5:],
]


@dataclass
class Agreement:
    """The figures of one comparison."""

    outputs: int = 0
    served_agree: int = 0
    served_examples: list[str] = field(default_factory=list)
    strict: Counter[str] = field(default_factory=Counter)
    lenient: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)


def _classify(classes: list[DiffClass], facts: Facts) -> str:
    for c in classes:
        if c.test(facts):
            return c.name
    return "unexplained"


def _describe(case: Case, limit: int = 200) -> str:
    return f"{case.kind} under {case.stack.describe()}: {case.text[:limit]!r}"


def compare(cases: list[Case], pipeline: VllmPipeline, tools: Toolset | None = None) -> Agreement:
    """Every output of `cases` read by the server and by loragate's three readings."""
    tools = tools or toolset()
    out = Agreement()
    for case in cases:
        server = pipeline.run(case.text, case.stack)
        served, strict, lenient = (
            parse_output(case.text, mode, stack=case.stack, tools=tools)
            for mode in ("served", "strict", "lenient")
        )
        out.outputs += 1
        kind = out.by_kind.setdefault(case.kind, Counter())
        if served_agrees(server, served):
            out.served_agree += 1
            kind["served agrees"] += 1
        elif len(out.served_examples) < 10:
            out.served_examples.append(f"{_describe(case)} -> vLLM {server}, ours {served}")
        want = reading_calls(served)
        for name, reading, classes, counts in (
            ("strict", strict, STRICT_CLASSES, out.strict),
            ("lenient", lenient, LENIENT_CLASSES, out.lenient),
        ):
            if reading_calls(reading) == want:
                continue
            cls = _classify(classes, Facts(case, served, reading, strict))
            counts[cls] += 1
            kind[f"{name}:{cls}"] += 1
            seen = out.examples.setdefault(f"{name}:{cls}", [])
            if len(seen) < 3:
                seen.append(_describe(case))
    return out
