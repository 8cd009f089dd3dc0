"""Read `<tool_call>` blocks out of one generated text, strictly and with repairs.

`parse_output(text, mode)` turns any text into a `ParseResult`; it never raises on
any input and its run time is bounded (see "Limits"). Both parses are always
reported: `strict_status` and `repaired_status`; `mode` only picks whose calls,
answer and status are the scored ones.

Format
------
A block is `<tool_call>` JSON `</tool_call>`. The JSON is a call object
`{"name": <non-empty string>, "arguments": <object>}` or a non-empty list of call
objects; other keys of a call object (`"id"`, `"type"`, ...) are ignored. An output
may hold several blocks. `<think>...</think>` regions are removed before anything
else, so a `<tool_call>` inside reasoning never counts:

- a `<think>` with no `</think>` after it runs to the end of the text (reasoning
  cut off by the token limit);
- a `</think>` with no `<think>` before it closes reasoning that the chat
  template opened in the prompt (QwQ / DeepSeek-R1 style): the text up to it is
  dropped.

`answer` is the text outside blocks and reasoning: each piece stripped, empty
pieces dropped, the rest joined with a newline. Stray `</tool_call>` tags stay in
the answer (they are not calls).

Status
------
- `no_call`: no `<tool_call>` block at all.
- `ok`: at least one block, and every block parsed into calls.
- `unparseable`: at least one block failed. One bad block makes the whole output
  unparseable; calls from the good blocks are still listed in `calls` (useful in
  reports), so a scorer must look at `status` first, never at `calls` alone.

Strict mode accepts only the format above, as RFC 8259 JSON, and also rejects:
a block not closed by `</tool_call>` (at the end of the text, or before the next
`<tool_call>`), an empty block, `NaN` / `Infinity` / numbers that overflow a
float, duplicate keys in any object (which value was meant is unknowable; other
decoders disagree on which one wins), a missing `arguments` key, `arguments`
that is not an object (a string holding JSON included), a missing or empty or
non-string `name`, an empty list. Lone UTF-16 surrogates (raw in the text or
from `\\ud800`-style escapes) are replaced by U+FFFD, never rejected, so every
result can be written as UTF-8 JSON.

Repaired mode runs only when strict did not give `ok`, re-reads only the blocks
that failed, and additionally accepts:

- an unclosed final block (a dangling partial `</tool_call` is dropped), and a
  block cut by the next `<tool_call>`;
- duplicate keys (last one wins, as Python's and vLLM's `json.loads` do) and raw
  control characters inside strings (stdlib decoder with `strict=False`);
- a Markdown code fence around the JSON inside a block;
- several JSON values one after another in one block (read by the stdlib
  decoder first: json_repair would merge two objects with the same keys, i.e.
  two calls of one tool, into one);
- broken JSON mended by the `json_repair` package (unclosed braces, trailing
  commas, single quotes, Python literals, text around the JSON, ...), on
  blocks of at most `MAX_REPAIR_CHARS` characters and at most
  `REPAIR_BUDGET_CHARS` characters per output (json_repair is pure Python,
  about 10 microseconds a character at worst); larger blocks stay unparseable;
- `arguments` given as a string holding a JSON object (decoded with the stdlib
  decoder only: a string that merely looks structured, e.g. `"{hello}"`, stays
  unparseable), an empty string or `null` or a missing `arguments` read as `{}`,
  `"parameters"` in place of `"arguments"`, an OpenAI-style wrapper
  `{"type": "function", "function": {"name", "arguments"}}`, and whitespace
  around `name`;
- a bare call with no tags at all: when the text (outside reasoning, optionally
  in a code fence) starts with a JSON call object or list of them, each with a
  `name` and an explicit `arguments` or `parameters` key. Small models often
  emit exactly that, and it is what a scaffold's repair loop would win back.
  Text after the JSON becomes the answer (the only case where the two modes'
  answers differ). A JSON answer without those keys stays a plain answer
  (`no_call`), never `unparseable`.

Repaired mode still rejects `NaN` / `Infinity` (also as a bare token outside
double-quoted strings of a broken block, which json_repair would read as the
string "NaN"), too-deep nesting, oversized blocks, and any value that is not
call-shaped after repair. `repaired` is true when at least one scored call
needed one of these repairs.

Limits (each keeps the time per output bounded; inputs beyond them are
unparseable, with the reason in `error`): at most `MAX_BLOCKS` blocks, a block of
at most `MAX_BLOCK_CHARS` characters, JSON nesting at most `MAX_DEPTH` levels
(deeper input, up to any depth, is caught, never a `RecursionError`). Scanning is
done with `str.find` loops, linear in the text length; the only regular
expressions (on the repair path) cannot backtrack.

Differences from vLLM's `hermes` tool parser
--------------------------------------------
(`vllm/tool_parsers/hermes_tool_parser.py`, non-streaming `extract_tool_calls`;
the shared cases are ported in `tests/test_parsing.py`.)

1. When any block fails, vLLM reports no tool calls and returns the whole raw
   output as content; we report `unparseable` (an eval must not count a broken
   call as a plain answer).
2. vLLM accepts an unclosed final block (its regex `<tool_call>(.*)`); we accept
   it in repaired mode only.
3. vLLM's content is the raw text before the first `<tool_call>` (or None); our
   `answer` is all text outside blocks and reasoning, stripped.
4. vLLM expects one object per block; a list there fails. We accept a list.
5. vLLM passes `arguments` that is a string holding JSON through unchanged and
   JSON-encodes any other string; strict mode rejects both, repaired mode
   decodes a string holding an object and rejects every other string.
6. A missing `arguments` fails in vLLM (KeyError); strict mode rejects it too,
   repaired mode reads `{}`.
7. vLLM's tool parser does not know `<think>` (its reasoning parser removes
   reasoning first); we strip it here, including the template-opened form.
8. vLLM's `json.loads` accepts `NaN` / `Infinity` and duplicate keys (last
   wins); we reject non-finite numbers in both modes and duplicate keys in
   strict mode.
9. vLLM does no JSON repair: a block with broken JSON fails there; repaired mode
   here mends it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal, NamedTuple

import orjson
from pydantic import ValidationError

from loragate.common.text import without_surrogates
from loragate.formats.records import ParseResult, ParseStatus, ToolCall, trusted

__all__ = [
    "MAX_BLOCKS",
    "MAX_BLOCK_CHARS",
    "MAX_DEPTH",
    "MAX_REPAIR_CHARS",
    "REPAIR_BUDGET_CHARS",
    "parse_output",
]

MAX_BLOCKS = 64
"""Blocks read per output; more make the output unparseable."""
MAX_BLOCK_CHARS = 1_000_000
"""Characters of JSON in one block; a longer block is unparseable (degenerate output)."""
MAX_DEPTH = 64
"""Nesting levels of one block's JSON (the call object is level 1, `arguments` level 2)."""
MAX_REPAIR_CHARS = 16_384
"""Longest block handed to `json_repair`."""
REPAIR_BUDGET_CHARS = 32_768
"""Characters handed to `json_repair` per output, over all its blocks."""

_OPEN = "<tool_call>"
_CLOSE = "</tool_call>"
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_FENCE = "```"

_BlockEnd = Literal["closed", "cut", "unclosed"]
_RejectKind = Literal["syntax", "duplicate", "non_finite", "too_deep", "too_large", "shape"]
_FATAL: frozenset[str] = frozenset({"non_finite", "too_deep", "too_large"})
"""Failures no repair may mend."""


class _Reject(ValueError):
    """Why one block (or one value) was refused; `kind` decides whether repair may try."""

    def __init__(self, reason: str, kind: _RejectKind = "syntax") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind: _RejectKind = kind


class _Block(NamedTuple):
    content: str
    end: _BlockEnd
    """`closed` by `</tool_call>`, `cut` by the next `<tool_call>`, or `unclosed` at the end."""


class _Budget:
    """Characters still allowed through `json_repair` for this output."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = REPAIR_BUDGET_CHARS

    def take(self, chars: int) -> bool:
        if chars > self.left:
            return False
        self.left -= chars
        return True


# -- JSON decoding -------------------------------------------------------------------


def _short(value: object, limit: int = 40) -> str:
    """An ASCII-only, bounded repr for error messages (safe to write as JSON)."""
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Reject(f"duplicate key {_short(key)}", "duplicate")
            seen.add(key)
    return obj


def _reject_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a JSON number", "non_finite")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Reject(f"number {_short(literal, 24)} overflows a float", "non_finite")
    return value


# Linear regular expressions: the string alternatives start with disjoint characters,
# so nothing backtracks.
_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BARE_CONSTANT = re.compile(r"(?<![\w.])-?(?:NaN|Infinity)(?!\w)")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SEPARATORS = re.compile(r"[\s,]*")

# Built once: `json.loads(s, **hooks)` would build a decoder per call (about 2 us).
_STRICT = json.JSONDecoder(
    object_pairs_hook=_unique_pairs, parse_constant=_reject_constant, parse_float=_finite_float
)
_LENIENT = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, strict=False
)
_TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels"


def _too_deep(json_text: str) -> bool:
    """True when valid JSON text nests deeper than MAX_DEPTH levels.

    Works on the text with C-speed string operations (a Python walk over a decoded
    megabyte takes about a second): drop string literals and everything but
    brackets, then peel the innermost pairs off, one level or more per round.
    """
    if json_text.count("{") + json_text.count("[") <= MAX_DEPTH:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING_LITERAL.sub("", json_text))
    for _ in range(MAX_DEPTH):
        if not brackets:
            return False
        brackets = brackets.replace("[]", "").replace("{}", "")
    return bool(brackets)


def _normalise(value: Any) -> Any:
    """Re-check a decoded value that did not come straight from the strict decoder.

    Refuses non-finite floats and too-deep nesting and replaces lone surrogates,
    all through one C-speed `json.dumps` (and one `json.loads` when something was
    replaced).
    """
    try:
        dumped = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise _Reject(_TOO_DEEP, "too_deep") from None
    except ValueError:
        raise _Reject("non-finite number", "non_finite") from None
    except TypeError:
        raise _Reject("not JSON data", "shape") from None
    if _too_deep(dumped):
        raise _Reject(_TOO_DEEP, "too_deep")
    fixed = without_surrogates(dumped)
    return value if fixed is dumped else json.loads(fixed)


def _decode_prefix(text: str, decoder: json.JSONDecoder, start: int = 0) -> tuple[Any, int]:
    """Decode the JSON value at `text[start:]` (no leading whitespace); return it and its end."""
    if len(text) > MAX_BLOCK_CHARS:
        raise _Reject(f"{len(text)} chars of JSON (limit {MAX_BLOCK_CHARS})", "too_large")
    try:
        value, end = decoder.raw_decode(text, start)
    except _Reject:
        raise
    except json.JSONDecodeError as exc:
        raise _Reject(f"invalid JSON: {exc.msg} at char {exc.pos}") from None
    except RecursionError:
        raise _Reject(_TOO_DEEP, "too_deep") from None
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise _Reject(f"invalid JSON: {_short(str(exc), 80)}") from None
    # Cheap pre-tests keep both checks off the hot path: depth needs that many
    # brackets, and a surrogate escape is the only way a lone surrogate gets past
    # the fix at `parse_output`'s entry.
    if text.count("{", start, end) + text.count("[", start, end) > MAX_DEPTH and _too_deep(
        text[start:end]
    ):
        raise _Reject(_TOO_DEEP, "too_deep")
    if text.find("\\u", start, end) >= 0 and _SURROGATE_ESCAPE.search(text, start, end):
        value = _normalise(value)
    return value, end


_ORJSON_DIFFERS = re.compile(r"[0-9]{19}|\\u[dD][89a-fA-F]")
"""Where `orjson` may read a text differently: a run of 19 digits (an integer past 64
bits becomes a float), an escaped surrogate (a lone one is refused)."""


_JSON_SPACE = frozenset(" \t\n\r")


def _key_count(value: Any) -> int:
    """Keys of every object inside a decoded JSON value."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += len(item)
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return count


def _decode_strict(text: str) -> Any:
    """`_decode(text, _STRICT)`, through `orjson` (about 5x faster) whenever it provably
    gives the same value, else through the reference decoder (which also words errors).

    `orjson` agrees with the strict stdlib decoder on RFC 8259 JSON but for: duplicate
    keys (it keeps the last), integers past 64 bits (it makes floats), and escaped lone
    surrogates (it refuses them). So it is used only when the text escapes no surrogate,
    has no run of 19 digits, and exactly as many `:` as the decoded value has keys (each
    object member has one colon outside strings, so equality rules out a duplicate; with
    no `\\u` escape, the colons of the value written back by `orjson` count the same);
    nesting and size are bounded as `_decode_prefix` bounds them. `orjson` refuses NaN,
    Infinity and numbers that overflow a float, as the strict decoder does: those go to
    the reference, which says why. `tests/test_parsing_fast.py` holds both to the same
    results.
    """
    if (
        len(text) <= MAX_BLOCK_CHARS
        and text[:1] not in _JSON_SPACE  # the reference reads from the first character
        and text.count("{") + text.count("[") <= MAX_DEPTH
        and _ORJSON_DIFFERS.search(text) is None
    ):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the reference decoder says what is wrong
        else:
            # Without escapes, the colons of the value written back are its keys plus
            # the colons inside its strings, which the text holds too: equal counts
            # mean no member was dropped as a duplicate.
            written = _key_count(value) if "\\u" in text else orjson.dumps(value).count(b":")
            if text.count(":") == written:
                return value
    return _decode(text, _STRICT)


def _decode(text: str, decoder: json.JSONDecoder) -> Any:
    """Decode `text` as exactly one JSON value (surrounding whitespace allowed)."""
    value, end = _decode_prefix(text, decoder)
    if end != len(text) and not text[end:].isspace():
        raise _Reject(f"invalid JSON: extra data at char {end}")
    return value


def _decode_sequence(text: str) -> list[Any] | None:
    """Several JSON values one after another (whitespace or commas between), as a list.

    Handled before `json_repair`, which merges consecutive objects that share their
    keys into one: two calls of the same tool would silently become one.
    """
    values: list[Any] = []
    pos = 0
    size = len(text)
    for _ in range(MAX_BLOCKS + 1):  # no sane block holds more values; bounds the loop
        if pos >= size:
            break
        try:
            value, pos = _decode_prefix(text, _LENIENT, pos)
        except _Reject as exc:
            if exc.kind in _FATAL:
                raise
            return None
        values.extend(value if isinstance(value, list) else [value])
        separators = _SEPARATORS.match(text, pos)
        pos = separators.end() if separators else pos
    else:
        return None
    return values if len(values) > 1 else None


def _decode_repaired(text: str, budget: _Budget) -> Any:
    """Strict decoder, then the lenient stdlib one (also on a sequence of values), then
    `json_repair` within its limits."""
    try:
        return _decode(text, _STRICT)
    except _Reject as exc:
        if exc.kind in _FATAL:
            raise
    try:
        return _decode(text, _LENIENT)
    except _Reject as exc:
        if exc.kind in _FATAL:
            raise
    sequence = _decode_sequence(text)
    if sequence is not None:
        return sequence
    if "name" not in text:
        # Every call shape needs a `name` key: without the word no repair can yield a
        # call, so skip json_repair (the costliest step on junk).
        raise _Reject("invalid JSON with no `name`; not repairable into a call", "shape")
    if len(text) > MAX_REPAIR_CHARS:
        raise _Reject(
            f"invalid JSON; {len(text)} chars is too large to repair (limit {MAX_REPAIR_CHARS})",
            "too_large",
        )
    if not budget.take(len(text)):
        raise _Reject(
            f"invalid JSON; repair budget of {REPAIR_BUDGET_CHARS} chars used up", "too_large"
        )
    # json_repair reads a bare NaN / Infinity as the string "NaN": refuse them first.
    if _BARE_CONSTANT.search(_STRING_LITERAL.sub("", text)):
        raise _Reject("NaN / Infinity is not a JSON number", "non_finite")
    # Imported here: only failing outputs pay for it.
    from json_repair import loads as repair_loads

    try:
        value: Any = repair_loads(text, skip_json_loads=True)
    except Exception as exc:  # json_repair may raise anything on hostile input
        raise _Reject(f"JSON repair failed: {type(exc).__name__}") from None
    return _normalise(value)


# -- call shapes ---------------------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _items(value: Any) -> list[Any]:
    if isinstance(value, list):
        if not value:
            raise _Reject("empty list of calls", "shape")
        return value
    if isinstance(value, dict):
        return [value]
    raise _Reject(f"JSON is a {_json_type(value)}, not a call object or list", "shape")


def _make_call(name: str, arguments: dict[str, Any]) -> ToolCall:
    try:
        return ToolCall(name=name, arguments=arguments)
    except ValidationError as exc:
        raise _Reject(f"not a valid call: {exc.error_count()} validation errors", "shape") from None


def _strict_calls(value: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for item in _items(value):
        if not isinstance(item, dict):
            raise _Reject(f"call is a {_json_type(item)}, not an object", "shape")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _Reject("`name` is missing, empty or not a string", "shape")
        if "arguments" not in item:
            hint = " (`parameters` given instead)" if "parameters" in item else ""
            raise _Reject(f"`arguments` is missing{hint}", "shape")
        arguments = item["arguments"]
        if not isinstance(arguments, dict):
            raise _Reject(f"`arguments` is a {_json_type(arguments)}, not an object", "shape")
        # Decoded from JSON text: a str name and an object with str keys, a valid call.
        calls.append(trusted(ToolCall, {"name": name, "arguments": arguments}))
    return calls


def _arguments_from_string(text: str) -> dict[str, Any]:
    """Decode `arguments` serialised as a JSON string; only a real JSON object counts."""
    text = text.strip()
    if not text:
        return {}
    try:
        value = _decode(text, _STRICT)
    except _Reject as exc:
        if exc.kind in _FATAL:
            raise
        try:
            value = _decode(text, _LENIENT)
        except _Reject:
            raise _Reject("`arguments` is a string that holds no JSON object", "shape") from None
    if not isinstance(value, dict):
        raise _Reject(f"`arguments` is a string holding a {_json_type(value)}", "shape")
    return value


def _repaired_call(item: Any) -> ToolCall:
    if not isinstance(item, dict):
        raise _Reject(f"call is a {_json_type(item)}, not an object", "shape")
    if "name" not in item and isinstance(item.get("function"), dict):
        item = item["function"]  # OpenAI-style {"type": "function", "function": {...}}
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Reject("`name` is missing, empty or not a string", "shape")
    arguments = item.get("arguments", item.get("parameters"))
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        arguments = _arguments_from_string(arguments)
    if not isinstance(arguments, dict):
        raise _Reject(f"`arguments` is a {_json_type(arguments)}, not an object", "shape")
    return _make_call(name.strip(), arguments)


def _is_bare_call(item: Any) -> bool:
    """A tag-less JSON object only counts as a call when it says so explicitly."""
    if not isinstance(item, dict):
        return False
    if "name" not in item and isinstance(item.get("function"), dict):
        item = item["function"]
    return isinstance(item.get("name"), str) and ("arguments" in item or "parameters" in item)


# -- text structure ------------------------------------------------------------------


def _strip_think(text: str) -> str:
    """Remove reasoning regions; see the module docstring for the unclosed forms."""
    first_open = text.find(_THINK_OPEN)
    first_close = text.find(_THINK_CLOSE)
    if first_open < 0 and first_close < 0:
        return text
    pos = 0
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        pos = first_close + len(_THINK_CLOSE)
    kept: list[str] = []
    while True:
        start = text.find(_THINK_OPEN, pos)
        if start < 0:
            kept.append(text[pos:])
            break
        kept.append(text[pos:start])
        end = text.find(_THINK_CLOSE, start + len(_THINK_OPEN))
        if end < 0:
            break
        pos = end + len(_THINK_CLOSE)
    # A newline, not "", so that removing a region never glues a tag together.
    return "\n".join(kept)


def _split_blocks(text: str) -> tuple[list[str], list[_Block], bool]:
    """Split into outside pieces and blocks; True when more than MAX_BLOCKS were found.

    Each `find` starts past the previous hit (the close position is cached until
    passed), so the scan is linear even for a text made only of opening tags.
    """
    outside: list[str] = []
    blocks: list[_Block] = []
    pos = 0
    open_at = text.find(_OPEN)
    close_at = -2  # -2: not searched yet; -1: no `</tool_call>` left
    overflow = False
    while open_at >= 0:
        if len(blocks) == MAX_BLOCKS:
            overflow = True
            break
        outside.append(text[pos:open_at])
        start = open_at + len(_OPEN)
        if close_at != -1 and close_at < start:
            close_at = text.find(_CLOSE, start)
        next_open = text.find(_OPEN, start)
        if close_at >= 0 and (next_open < 0 or close_at < next_open):
            blocks.append(_Block(text[start:close_at], "closed"))
            pos = close_at + len(_CLOSE)
        elif next_open >= 0:
            blocks.append(_Block(text[start:next_open], "cut"))
            pos = next_open
        else:
            blocks.append(_Block(text[start:], "unclosed"))
            pos = len(text)
        open_at = next_open
    if not overflow:
        outside.append(text[pos:])
    return outside, blocks, overflow


def _join_answer(pieces: list[str]) -> str:
    return "\n".join(filter(None, map(str.strip, pieces)))


def _strip_fence(text: str) -> str:
    """Drop a Markdown code fence (```json ... ```) around `text`, if any."""
    if not text.startswith(_FENCE):
        return text
    newline = text.find("\n")
    body = text[newline + 1 :] if newline >= 0 else text[len(_FENCE) :]
    body = body.rstrip()
    if body.endswith(_FENCE):
        body = body[: -len(_FENCE)]
    return body.strip()


def _strip_partial_close(text: str) -> str:
    """Drop a cut-off `</tool_call>` (e.g. `</tool_ca`) from the end of an unclosed block."""
    stripped = text.rstrip()
    for size in range(len(_CLOSE) - 1, 0, -1):
        if stripped.endswith(_CLOSE[:size]):
            return stripped[:-size]
    return text


# -- per-block parses ----------------------------------------------------------------


def _strict_block(block: _Block) -> list[ToolCall]:
    if block.end == "cut":
        raise _Reject("not closed before the next <tool_call>", "shape")
    if block.end == "unclosed":
        raise _Reject("not closed (no </tool_call>)", "shape")
    content = block.content.strip()
    if not content:
        raise _Reject("empty block", "shape")
    return _strict_calls(_decode_strict(content))


def _repaired_block(block: _Block, budget: _Budget) -> list[ToolCall]:
    content = block.content
    if block.end == "unclosed":
        content = _strip_partial_close(content)
    content = _strip_fence(content.strip())
    if not content:
        raise _Reject("empty block", "shape")
    return [_repaired_call(item) for item in _items(_decode_repaired(content, budget))]


def _bare_calls(text: str, budget: _Budget) -> tuple[list[ToolCall], str] | None:
    """Repaired mode: read a tag-less call at the start of `text` (already stripped).

    Returns the calls and the remaining answer, or None when `text` is not a call.
    """
    body = _strip_fence(text)
    if not body.startswith(("{", "[")) or "name" not in body:
        return None
    rest = ""
    try:
        value, end = _decode_prefix(body, _LENIENT)
        rest = body[end:].strip()
        if rest.startswith(_CLOSE):
            rest = rest[len(_CLOSE) :].strip()
    except _Reject as exc:
        if exc.kind in _FATAL:
            return None
        try:
            value = _decode_repaired(body, budget)
        except _Reject:
            return None
    try:
        items = _items(value)
        if not all(_is_bare_call(item) for item in items):
            return None
        return [_repaired_call(item) for item in items], rest
    except _Reject:
        return None


# -- entry point ---------------------------------------------------------------------


def _coerce_text(text: object) -> str:
    if isinstance(text, str):
        return text
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text).decode("utf-8", "replace")
    return str(text)


def _summarise(errors: list[str]) -> str:
    return errors[0] if len(errors) == 1 else f"{errors[0]} (+{len(errors) - 1} more)"


def _parse_result(
    status: ParseStatus,
    calls: list[ToolCall],
    answer: str,
    strict_status: ParseStatus,
    repaired_status: ParseStatus,
) -> ParseResult:
    """A `ParseResult` of the common outcomes, built without re-validating its calls."""
    return trusted(
        ParseResult,
        {
            "status": status,
            "calls": calls,
            "answer": answer,
            "repaired": False,
            "strict_status": strict_status,
            "repaired_status": repaired_status,
            "error": None,
        },
    )


def _parse(text: str, mode: Literal["strict", "repaired"]) -> ParseResult:
    if type(text) is not str:
        text = _coerce_text(text)
    if not text.isascii():
        text = without_surrogates(text)
    if "think>" in text:
        text = _strip_think(text)

    if _OPEN not in text:
        answer = text.strip()
        bare = _bare_calls(answer, _Budget()) if answer[:1] in ("{", "[", "`") else None
        if bare is None:
            return _parse_result("no_call", [], answer, "no_call", "no_call")
        if mode == "repaired":
            calls, rest = bare
            return ParseResult(
                status="ok",
                calls=calls,
                answer=rest,
                repaired=True,
                strict_status="no_call",
                repaired_status="ok",
            )
        return ParseResult(
            status="no_call", answer=answer, strict_status="no_call", repaired_status="ok"
        )

    # The common output, one closed block, decided as the general path below decides it.
    first = text.find(_OPEN)
    start = first + len(_OPEN)
    close = text.find(_CLOSE, start)
    if close >= 0 and text.find(_OPEN, start) < 0:
        try:
            calls = _strict_block(_Block(text[start:close], "closed"))
        except _Reject:
            pass  # the general path words the error and tries the repairs
        else:
            answer = _join_answer([text[:first], text[close + len(_CLOSE) :]])
            return _parse_result("ok", calls, answer, "ok", "ok")

    outside, blocks, overflow = _split_blocks(text)
    answer = _join_answer(outside)
    strict_calls: list[ToolCall] = []
    per_block: list[list[ToolCall] | None] = []
    errors: list[str] = []
    for index, block in enumerate(blocks, 1):
        try:
            calls = _strict_block(block)
        except _Reject as exc:
            per_block.append(None)
            errors.append(f"block {index}: {exc.reason}")
        else:
            per_block.append(calls)
            strict_calls.extend(calls)
    if overflow:
        errors.append(f"more than {MAX_BLOCKS} <tool_call> blocks")
    if not errors:
        return _parse_result("ok", strict_calls, answer, "ok", "ok")

    budget = _Budget()
    repaired_calls: list[ToolCall] = []
    repair_errors: list[str] = []
    any_repaired = False
    for index, (block, calls_or_none) in enumerate(zip(blocks, per_block, strict=True), 1):
        if calls_or_none is not None:
            repaired_calls.extend(calls_or_none)
            continue
        try:
            repaired_calls.extend(_repaired_block(block, budget))
            any_repaired = True
        except _Reject as exc:
            repair_errors.append(f"block {index}: {exc.reason}")
    if overflow:
        repair_errors.append(f"more than {MAX_BLOCKS} <tool_call> blocks")
    repaired_status: ParseStatus = "unparseable" if repair_errors else "ok"
    error = _summarise(errors)

    if mode == "strict":
        return ParseResult(
            status="unparseable",
            calls=strict_calls,
            answer=answer,
            strict_status="unparseable",
            repaired_status=repaired_status,
            error=error,
        )
    if repair_errors:
        error = f"{error}; after repair: {_summarise(repair_errors)}"
    return ParseResult(
        status=repaired_status,
        calls=repaired_calls,
        answer=answer,
        repaired=any_repaired,
        strict_status="unparseable",
        repaired_status=repaired_status,
        error=error,
    )


def parse_output(text: str, mode: Literal["strict", "repaired"] = "strict") -> ParseResult:
    """Parse one generated text into tool calls and answer text.

    `mode` picks which parse is scored (`status`, `calls`, `answer`, `repaired`);
    `strict_status` and `repaired_status` are always both filled. Never raises on
    any `text` (bytes are decoded as UTF-8 with replacement); raises ValueError only
    for an unknown `mode`, which is a caller bug. See the module docstring for the
    exact rules.
    """
    if mode not in ("strict", "repaired"):
        raise ValueError(f"`mode` must be 'strict' or 'repaired', got {mode!r}")
    try:
        return _parse(text, mode)
    except Exception as exc:  # last line of defence: a verdict for every output
        return ParseResult(
            status="unparseable",
            strict_status="unparseable",
            repaired_status="unparseable",
            error=f"internal parser error: {type(exc).__name__}",
        )
