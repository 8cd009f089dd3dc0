"""Read the tool calls out of one generated text, as a serving stack runs them, as the
format is written, and as the model meant them.

`parse_output(text, mode, stack=..., tools=...)` turns any text into a `ParseResult`;
it never raises on any input and its run time is linear in the text (see "Limits").
Three readings are made of every output and each one's status reported
(`served_status`, `strict_status`, `lenient_status`); `mode` only picks whose calls,
answer and status are the scored ones.

Parse modes
-----------
- `served` (the default, the mode a gate uses): exactly the calls the serving stack
  executes - vLLM's tool-call parser on what its reasoning parser leaves as content -
  with the arguments the server passes (`loragate.calls.served`, which states the
  vLLM version it models). A call with
  `null` or string arguments, a `NaN` or an empty name is a call the server makes: it
  runs, and then fails the tool's schema or names an unknown tool. Call markup of
  which the server runs nothing is `unparseable`.
- `strict`: the call format as written. Every block must be well formed; a block the
  server would silently mend, drop or guess at is refused (the list below).
- `lenient`: what the model meant, for diagnosis: the strict reading plus repairs of
  the blocks strict refused. A server runs none of what only the repairs read.

`docs/call-formats.md` lists, by class and counted on the agreement corpus, where
strict and lenient differ from served.

The serving stack
-----------------
A `ServingStack` names what the run models: the tool-call format the chat template
teaches (`call_format`, vLLM's `--tool-call-parser hermes` or `qwen3_xml`), the
reasoning parser (`reasoning_parser`, vLLM's `--reasoning-parser qwen3`,
`deepseek_r1`, or `none`) and the request's thinking switch. The reasoning parser
decides which text is reasoning (never executed, never the answer) and which is the
content whose calls run: see `loragate.calls.reasoning`. Only the content is parsed
for calls; calls the model wrote inside its own `<think>` regions are counted
(`calls_in_reasoning`) whichever stack runs them.

Formats
-------
Strict and lenient read both formats whatever the stack expects; a sample in the other
one is judged as written, and its `format` tells the summary to count it apart (the
format mix). Served reads only the stack's format, as the server does. `format` is
`hermes` or `qwen3_xml` by the blocks the sample wrote (with both, the one the stack
does not expect), `none` without a block.

- Hermes JSON (`loragate.calls.hermes`): `<tool_call>` JSON `</tool_call>`; the JSON is
  a call object `{"name": <non-empty string>, "arguments": <object>}`; other keys
  (`"id"`, `"type"`, ...) are ignored. As in vLLM, a block runs from `<tool_call>` to
  the first `</tool_call>` after it (a `<tool_call>` inside an argument string is part
  of the string), the last one to the end of the text when unclosed.
- Qwen3 XML (`loragate.calls.qwen_xml`): a `<tool_call>` whose content starts with
  `<function=NAME>`, or a bare `<function=NAME>` in the text (vLLM executes both), with
  `<parameter=P>VALUE</parameter>` pairs up to `</function>`; values are typed from the
  tool's JSON Schema exactly as vLLM types them (`tools` gives the schemas; without it,
  or for an unknown tool, values stay strings).

`answer` is the content outside call blocks, in every mode: each piece stripped, empty
pieces dropped, the rest joined with a newline (stray `</tool_call>` tags stay in it).
It is what the model wrote, not what a server returns beside its calls (vLLM returns
only the text before the first call): prose after a call that invents its result is
judged as the adapter's behaviour.

Status
------
- `no_call`: no call block at all.
- `ok`: the reading has calls (strict and lenient: every block parsed into calls).
- `unparseable`: at least one block failed (strict, lenient), or the server runs none
  of the output's call markup (served). In strict and lenient mode calls from the good
  blocks are still listed in `calls` (useful in reports), so a scorer must look at
  `status` first, never at `calls` alone.

Strict mode, Hermes: RFC 8259 JSON only, and also rejects a block not closed by
`</tool_call>`, an empty block, `NaN` / `Infinity` / numbers that overflow a float,
duplicate keys in any object (which value was meant is unknowable), a missing
`arguments` key, `arguments` that is not an object (a string holding JSON included), a
missing or empty or non-string `name`, a list of calls (vLLM's Hermes parser reads one
object a block and runs none of a list). Strict mode, XML: rejects what
vLLM silently drops or guesses: an empty function name, a name not closed by `>`, a
body not closed by `</function>`, a block not closed by `</tool_call>`, text before
`<function=` or after `</function>` inside the block, text outside the parameters, a
last parameter with no `</parameter>`, a parameter given twice or with an empty name.
A value that does not convert to its schema type is not a parse error: it stays a
string and fails the schema check. Lone UTF-16 surrogates (raw, or from `\\ud800`
escapes) are replaced by U+FFFD, never rejected, so every result can be written as
UTF-8 JSON.

Lenient mode runs only when strict did not give `ok`, re-reads only the blocks that
failed, and additionally accepts: for Hermes, an unclosed final block (a dangling
partial `</tool_call` is dropped), a block holding further `<tool_call>` tags (read as
several blocks), a list of calls in one block, duplicate keys (the last wins, as in
vLLM), raw control characters in strings, a Markdown code fence, several JSON values
in one block, JSON mended by `json_repair` (within `MAX_REPAIR_CHARS` a block and
`REPAIR_BUDGET_CHARS` an output), `arguments` given as a string holding a JSON object,
an empty or `null` or missing `arguments` read as `{}`, `"parameters"` for
`"arguments"`, an OpenAI-style `{"type": "function", "function": {...}}` wrapper,
whitespace around `name`, and a bare call with no tags at the start of the content
(text after it is the answer); for XML, an unclosed final block (it is closed: a last
parameter with no `</parameter>` keeps its value), stray text (dropped, as vLLM drops
it) and a parameter given twice (the last wins). It still rejects `NaN` / `Infinity`,
too-deep nesting, oversized blocks, empty names and anything not call-shaped.
`repaired` is true when at least one scored call needed a repair.

Limits (each keeps the time per output bounded; inputs beyond them are unparseable in
every mode, with the reason in `error`): at most `MAX_BLOCKS` blocks or XML calls, a
block (or XML function body) of at most `MAX_BLOCK_CHARS` characters, JSON nesting at
most `MAX_DEPTH` levels (deeper input, up to any depth, is caught, never a
`RecursionError`). Scanning is done with `str.find` loops and anchored matches, linear
in the text; no regular expression can backtrack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, get_args

from loragate.calls import hermes
from loragate.calls.hermes import (
    MAX_BLOCK_CHARS,
    MAX_BLOCKS,
    MAX_DEPTH,
    MAX_REPAIR_CHARS,
    REPAIR_BUDGET_CHARS,
    Budget,
    Reject,
)
from loragate.calls.qwen_xml import (
    FUNC_PREFIX,
    Cursor,
    XmlCall,
    coerce_arguments,
    scan_xml,
    xml_arguments,
)
from loragate.calls.reasoning import ReasoningParserName, ReasoningSplit, split_reasoning
from loragate.calls.served import served_hermes, served_xml
from loragate.common.surrogates import without_surrogates
from loragate.formats.records import (
    DEFAULT_PARSE_MODE,
    PARSE_MODES,
    CallFormat,
    ParseMode,
    ParseResult,
    ParseStatus,
    SampleFormat,
    ToolCall,
    parse_mode_named,
    trusted,
)

__all__ = [
    "CALL_FORMATS",
    "DEFAULT_STACK",
    "MAX_BLOCKS",
    "MAX_BLOCK_CHARS",
    "MAX_DEPTH",
    "MAX_REPAIR_CHARS",
    "REPAIR_BUDGET_CHARS",
    "ServingStack",
    "parse_output",
    "parse_sample",
]

CALL_FORMATS: tuple[str, ...] = get_args(CallFormat)

_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"
_XML_START = re.compile(r"\s*<function=")
_FIRST_CHAR = re.compile(r"\s*(\S)")


@dataclass(frozen=True, slots=True)
class ServingStack:
    """The serving stack a run models (see the module docstring)."""

    call_format: CallFormat = "hermes"
    """The format the chat template teaches (vLLM's `--tool-call-parser`)."""
    reasoning_parser: ReasoningParserName = "qwen3"
    """vLLM's `--reasoning-parser` (`none`: the server runs none)."""
    thinking: bool | None = None
    """The request's `enable_thinking` as the server sees it; None: unknown, read from
    each output (loose generations scored without a run config)."""

    def describe(self) -> str:
        """One line for run headers and reports."""
        parser = "qwen3_xml" if self.call_format == "qwen3_xml" else "hermes"
        reasoning = (
            "no reasoning parser"
            if self.reasoning_parser == "none"
            else f"--reasoning-parser {self.reasoning_parser}"
        )
        if self.reasoning_parser != "qwen3":
            thinking = ""
        elif self.thinking is None:
            thinking = ", thinking read from each output"
        else:
            thinking = f", enable_thinking {str(self.thinking).lower()}"
        return f"vLLM --tool-call-parser {parser}, {reasoning}{thinking}"


DEFAULT_STACK = ServingStack()
"""Loose generations with no run config: Hermes calls, vLLM's `qwen3` reasoning parser,
thinking read from each output."""


@dataclass(slots=True)
class _Block:
    """One call block: Hermes JSON (`xml` None) or one XML call."""

    content: str = ""
    closed: bool = True
    xml: XmlCall | None = None


# -- splitting the content into text and blocks ---------------------------------------


def _split(content: str) -> tuple[list[str], list[_Block], bool]:
    """The text pieces outside blocks, the blocks in order, and whether more than
    `MAX_BLOCKS` were found (the rest is then left unread)."""
    outside: list[str] = []
    blocks: list[_Block] = []
    opens = Cursor(content, _OPEN)
    funcs = Cursor(content, FUNC_PREFIX)
    closes = Cursor(content, _CLOSE)
    pos = 0
    while True:
        at_open = opens.next(pos)
        at_func = funcs.next(pos)
        if at_open < 0 and at_func < 0:
            outside.append(content[pos:])
            return outside, blocks, False
        if len(blocks) >= MAX_BLOCKS:
            return outside, blocks, True
        if at_func >= 0 and (at_open < 0 or at_func < at_open):
            outside.append(content[pos:at_func])
            calls, pos = scan_xml(content, at_func, bare=True, limit=MAX_BLOCKS - len(blocks))
            blocks.extend(_Block(xml=call) for call in calls)
            continue
        outside.append(content[pos:at_open])
        start = at_open + len(_OPEN)
        if _is_xml(content, start, closes, funcs):
            calls, pos = scan_xml(content, start, bare=False, limit=MAX_BLOCKS - len(blocks))
            blocks.extend(_Block(xml=call) for call in calls)
            continue
        close = closes.next(start)
        if close < 0:
            blocks.append(_Block(content[start:], closed=False))
            outside.append("")
            return outside, blocks, False
        blocks.append(_Block(content[start:close]))
        pos = close + len(_CLOSE)


def _is_xml(content: str, start: int, closes: Cursor, funcs: Cursor) -> bool:
    """Whether the block opened just before `start` holds an XML call: its content
    starts with `<function=`, or it is not JSON (no `{`, `[` or code fence first) and
    a `<function=` comes before its `</tool_call>` (vLLM drops the text before it)."""
    if _XML_START.match(content, start):
        return True
    first = _FIRST_CHAR.match(content, start)
    if first is None or first.group(1) in ("{", "[", "`"):
        return False
    func = funcs.next(start)
    close = closes.next(start)
    return func >= 0 and (close < 0 or func < close)


def _join_answer(pieces: list[str]) -> str:
    return "\n".join(filter(None, map(str.strip, pieces)))


# -- XML calls ---------------------------------------------------------------------------


def _xml_call(call: XmlCall, tools: Any, *, repair: bool) -> ToolCall:
    """The call of one XML block (`Reject` when refused)."""
    if not call.has_function:
        raise Reject("a <tool_call> with no <function=...> and no JSON", "shape")
    name = call.name.strip()
    if not name:
        raise Reject("<function=> has no name (vLLM drops the call)", "shape")
    if len(call.args) > MAX_BLOCK_CHARS:
        raise Reject(f"{len(call.args)} chars of parameters (limit {MAX_BLOCK_CHARS})", "too_large")
    problems: list[str] = []
    if call.preamble.strip():
        problems.append("text between <tool_call> and <function=")
    if not call.name_closed and call.function_closed:
        problems.append(f"<function={_cut(name)} is not closed by '>'")
    if not call.function_closed:
        problems.append("not closed (no </function>)")
    elif not call.bare and not call.block_closed:
        problems.append("not closed (no </tool_call>)")
    if call.between.strip():
        problems.append("text between </function> and </tool_call>")
    arguments = xml_arguments(call.args)
    problems.extend(arguments.problems)
    values = arguments.values
    if problems and not repair:
        raise Reject(_summarise(problems), "shape")
    if repair:
        if any(p.startswith("a parameter has an empty name") for p in problems):
            raise Reject("a parameter has an empty name", "shape")
        if arguments.partial is not None and arguments.partial[0]:
            values = {**values, arguments.partial[0]: arguments.partial[1]}
    tool = tools.by_name.get(name) if tools is not None else None
    typed = coerce_arguments(values, tool.function.parameters if tool is not None else None)
    for key, value in typed.items():
        if isinstance(value, dict | list) or (isinstance(value, str) and not value.isascii()):
            typed[key] = hermes.normalise(value)
    return trusted(
        ToolCall, {"name": without_surrogates(name), "arguments": typed, "arguments_json": None}
    )


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- per-block parses --------------------------------------------------------------------


def _strict(block: _Block, tools: Any) -> list[ToolCall]:
    if block.xml is not None:
        return [_xml_call(block.xml, tools, repair=False)]
    return hermes.strict_block(block.content, block.closed)


def _repaired(block: _Block, tools: Any, budget: Budget) -> list[ToolCall]:
    if block.xml is not None:
        return [_xml_call(block.xml, tools, repair=True)]
    if _OPEN not in block.content:
        return hermes.repaired_block(block.content, block.closed, budget)
    # Further `<tool_call>` tags inside one block: the model opened a block before
    # closing the last one. Read each piece as a block of its own.
    pieces = block.content.split(_OPEN)
    calls: list[ToolCall] = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        if not last and not piece.strip():
            continue
        calls.extend(hermes.repaired_block(piece, block.closed or not last, budget))
    return calls


# -- results ---------------------------------------------------------------------------


def _summarise(errors: list[str]) -> str:
    return errors[0] if len(errors) == 1 else f"{errors[0]} (+{len(errors) - 1} more)"


def _sample_format(blocks: list[_Block], stack: ServingStack) -> SampleFormat:
    kinds = {
        "qwen3_xml" if b.xml is not None else "hermes"
        for b in blocks
        if b.xml is not None or b.content.strip()
    }
    if not kinds:
        return "none"
    if len(kinds) == 1:
        return "qwen3_xml" if "qwen3_xml" in kinds else "hermes"
    return "hermes" if stack.call_format == "qwen3_xml" else "qwen3_xml"


def _calls_in(regions: tuple[str, ...]) -> int:
    count = 0
    for region in regions:
        blocks = region.count(_OPEN)
        count += blocks if blocks else region.count(FUNC_PREFIX)
    return count


@dataclass(frozen=True, slots=True)
class _Reading:
    """One reading of an output: what a mode would score."""

    status: ParseStatus
    calls: list[ToolCall]
    answer: str
    error: str | None = None
    repaired: bool = False


_NO_CALLS: list[ToolCall] = []  # shared by readings without calls; never mutated
_JSON_SPACE = " \t\n\r"


def _coerce_text(text: object) -> str:
    if isinstance(text, str):
        return text
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text).decode("utf-8", "replace")
    return str(text)


def _content_of(text: str, stack: ServingStack) -> tuple[str, ReasoningSplit | None, int]:
    """The content the stack hands its tool parser, the reasoning split it read the
    text by (None: no reasoning anywhere) and the calls written inside reasoning."""
    if (
        "think>" in text
        or stack.reasoning_parser == "deepseek_r1"
        or (stack.reasoning_parser == "qwen3" and stack.thinking)
    ):
        split = split_reasoning(text, stack.reasoning_parser, thinking=stack.thinking)
        return split.content, split, _calls_in(split.regions) if split.regions else 0
    # no reasoning tag, and a stack that reads untagged text as content
    return text, None, 0


def _without_blocks(content: str) -> tuple[_Reading, _Reading]:
    """The (strict, lenient) readings of content holding no `<tool_call>` and no
    `<function=`; only lenient may find a call (a bare JSON call). The server runs none
    (served reads as strict)."""
    answer = content.strip()
    strict = _Reading("no_call", _NO_CALLS, answer)
    bare = hermes.bare_calls(answer, Budget()) if answer[:1] in ("{", "[", "`") else None
    if bare is None:
        return strict, strict
    return strict, _Reading("ok", bare[0], bare[1], repaired=True)


def _one_hermes_block(content: str, stack: ServingStack) -> tuple[_Reading, _Reading] | None:
    """The common output, one closed Hermes block under a Hermes stack, decided as the
    general path decides it: (served, strict) readings, or None for the general path
    (the server runs exactly what strict reads here; the lenient reading of a strict
    `ok` is the strict one)."""
    if stack.call_format != "hermes" or FUNC_PREFIX in content:
        return None
    first = content.find(_OPEN)
    start = first + len(_OPEN)
    close = content.find(_CLOSE, start)
    if first < 0 or close < 0 or content.find(_OPEN, start) >= 0:
        return None
    body = content[start:close]
    if not _json_spaced(body):
        return None
    try:
        calls = hermes.strict_block(body, True)
    except Reject:
        return None  # the general path words the error and tries the repairs
    strict = _Reading("ok", calls, _join_answer([content[:first], content[close + len(_CLOSE) :]]))
    return strict, strict


def _json_spaced(body: str) -> bool:
    """Whether the whitespace around a block's JSON is JSON whitespace (`json.loads`,
    which the server uses, refuses any other; `str.strip` removes all)."""
    inner = body.strip(_JSON_SPACE)
    return not (inner[:1].isspace() or inner[-1:].isspace())


def _strict_reading(
    blocks: list[_Block], overflow: bool, tools: Any, answer: str
) -> tuple[_Reading, list[list[ToolCall] | None], list[str]]:
    """The strict reading, each block's calls (None: refused) and the errors."""
    calls: list[ToolCall] = []
    per_block: list[list[ToolCall] | None] = []
    errors: list[str] = []
    for index, block in enumerate(blocks, 1):
        try:
            found = _strict(block, tools)
        except Reject as exc:
            per_block.append(None)
            errors.append(f"block {index}: {exc.reason}")
        else:
            per_block.append(found)
            calls.extend(found)
    if overflow:
        errors.append(f"more than {MAX_BLOCKS} tool calls")
    if errors:
        return _Reading("unparseable", calls, answer, _summarise(errors)), per_block, errors
    return _Reading("ok", calls, answer), per_block, errors


def _lenient_reading(
    blocks: list[_Block],
    per_block: list[list[ToolCall] | None],
    strict_errors: list[str],
    overflow: bool,
    tools: Any,
    answer: str,
) -> _Reading:
    """The lenient reading of an output strict refused: the blocks strict refused read
    again with the repairs."""
    budget = Budget()
    calls: list[ToolCall] = []
    errors: list[str] = []
    repaired = False
    for index, (block, found) in enumerate(zip(blocks, per_block, strict=True), 1):
        if found is not None:
            calls.extend(found)
            continue
        try:
            calls.extend(_repaired(block, tools, budget))
            repaired = True
        except Reject as exc:
            errors.append(f"block {index}: {exc.reason}")
    if overflow:
        errors.append(f"more than {MAX_BLOCKS} tool calls")
    error = _summarise(strict_errors)
    if errors:
        error = f"{error}; after repair: {_summarise(errors)}"
        return _Reading("unparseable", calls, answer, error, repaired)
    return _Reading("ok", calls, answer, error, repaired)


def _served_reading(
    content: str, stack: ServingStack, tools: Any, blocks: list[_Block], strict: _Reading
) -> _Reading:
    """What the server runs of `content` (see `loragate.calls.served`). When strict read
    every block in the stack's format, the server runs those same calls."""
    xml = stack.call_format == "qwen3_xml"
    if strict.status == "ok" and all(
        (b.xml is not None) == xml and (xml or _json_spaced(b.content)) for b in blocks
    ):
        return strict
    reading = served_xml(content, tools) if xml else served_hermes(content)
    if reading.calls:
        return _Reading("ok", reading.calls, strict.answer, reading.error)
    error = reading.error or (
        f"the {stack.call_format} tool parser runs none of the output's call blocks"
    )
    return _Reading("unparseable", _NO_CALLS, strict.answer, error)


def _with_blocks(
    content: str, stack: ServingStack, tools: Any
) -> tuple[_Reading, _Reading, _Reading, SampleFormat]:
    """The (served, strict, lenient) readings of content with call markup, and the
    format the sample wrote."""
    outside, blocks, overflow = _split(content)
    answer = _join_answer(outside)
    strict, per_block, errors = _strict_reading(blocks, overflow, tools, answer)
    lenient = strict
    if strict.status != "ok":
        lenient = _lenient_reading(blocks, per_block, errors, overflow, tools, answer)
    served = _served_reading(content, stack, tools, blocks, strict)
    return served, strict, lenient, _sample_format(blocks, stack)


def _result(
    mode: ParseMode,
    readings: tuple[_Reading, _Reading, _Reading],
    sample_format: SampleFormat,
    in_reasoning: int,
) -> ParseResult:
    """The `ParseResult` of the readings (served, strict, lenient), scoring `mode`'s,
    built without re-validating its calls (they are valid already)."""
    served, strict, lenient = readings
    scored = served if mode == "served" else strict if mode == "strict" else lenient
    error = scored.error if scored.error is not None else strict.error
    return trusted(
        ParseResult,
        {
            "status": scored.status,
            "calls": scored.calls,
            "answer": scored.answer,
            "repaired": scored.repaired,
            "strict_status": strict.status,
            "lenient_status": lenient.status,
            "served_status": served.status,
            "error": error,
            "format": sample_format,
            "calls_in_reasoning": in_reasoning,
        },
    )


def _parse(
    text: str, mode: ParseMode, stack: ServingStack, tools: Any
) -> tuple[ParseResult, ReasoningSplit | None]:
    if type(text) is not str:
        text = _coerce_text(text)
    if not text.isascii():
        text = without_surrogates(text)
    content, split, in_reasoning = _content_of(text, stack)
    if _OPEN not in content and FUNC_PREFIX not in content:
        strict, lenient = _without_blocks(content)
        return _result(mode, (strict, strict, lenient), "none", in_reasoning), split
    one = _one_hermes_block(content, stack)
    if one is not None:
        served, strict = one
        return _result(mode, (served, strict, strict), "hermes", in_reasoning), split
    served, strict, lenient, fmt = _with_blocks(content, stack, tools)
    return _result(mode, (served, strict, lenient), fmt, in_reasoning), split


def _checked_mode(mode: object) -> ParseMode:
    """`mode`, or ValueError for anything but a parse mode (a caller bug); the old name
    `repaired` is read as `lenient` with a warning."""
    mode = parse_mode_named(mode, "parse_output(mode=...)")
    if mode not in PARSE_MODES:
        raise ValueError(f"`mode` must be one of {', '.join(PARSE_MODES)}, got {mode!r}")
    return mode  # type: ignore[return-value]


def parse_sample(
    text: str,
    mode: ParseMode = DEFAULT_PARSE_MODE,
    *,
    stack: ServingStack = DEFAULT_STACK,
    tools: Any = None,
) -> tuple[ParseResult, ReasoningSplit]:
    """`parse_output` and the reasoning split it read the text by (for the scorer:
    whether the sample stopped inside its reasoning, how much of it is reasoning)."""
    checked = _checked_mode(mode)
    try:
        result, split = _parse(text, checked, stack, tools)
    except Exception as exc:  # last line of defence: a verdict for every output
        return _failed(exc), ReasoningSplit("", "", (), False)
    return result, split if split is not None else ReasoningSplit(text, "", (), False)


def _failed(exc: Exception) -> ParseResult:
    return ParseResult(
        status="unparseable",
        strict_status="unparseable",
        lenient_status="unparseable",
        served_status="unparseable",
        error=f"internal parser error: {type(exc).__name__}",
    )


def parse_output(
    text: str,
    mode: ParseMode = DEFAULT_PARSE_MODE,
    *,
    stack: ServingStack = DEFAULT_STACK,
    tools: Any = None,
) -> ParseResult:
    """Parse one generated text into tool calls and answer text.

    `mode` picks which reading is scored (`status`, `calls`, `answer`, `repaired`);
    `served_status`, `strict_status` and `lenient_status` are always all filled.
    `stack` is the serving stack the run models; `tools` (a `Toolset`) types XML
    parameter values. Never raises on any `text` (bytes are decoded as UTF-8 with
    replacement); raises ValueError only for an unknown `mode`, which is a caller bug.
    See the module docstring for the exact rules.
    """
    checked = _checked_mode(mode)
    try:
        return _parse(text, checked, stack, tools)[0]
    except Exception as exc:  # last line of defence: a verdict for every output
        return _failed(exc)
