"""Hermes JSON tool calls: `<tool_call>` JSON `</tool_call>`, strictly and with repairs.

The JSON half of `loragate.calls.parsing` (which finds the blocks, splits reasoning off
and words the result): decoding one block's JSON strictly (RFC 8259, no duplicate
keys, no NaN / Infinity, bounded nesting and size), reading call objects out of it,
and the repairs of repaired mode (json_repair within a character budget, string-
encoded arguments, a code fence, several values in one block, a tag-less call). The
rules are listed in `loragate.calls.parsing`'s docstring.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from loragate.common.jsonguard import too_deep
from loragate.common.surrogates import without_surrogates
from loragate.formats.records import ToolCall, trusted

__all__ = [
    "LENIENT",
    "MAX_BLOCKS",
    "MAX_BLOCK_CHARS",
    "MAX_DEPTH",
    "MAX_REPAIR_CHARS",
    "REPAIR_BUDGET_CHARS",
    "STRICT",
    "Budget",
    "Reject",
    "bare_calls",
    "decode",
    "decode_strict",
    "normalise",
    "repaired_block",
    "short",
    "strict_block",
    "strip_fence",
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

CLOSE = "</tool_call>"
_FENCE = "```"

RejectKind = Literal["syntax", "duplicate", "non_finite", "too_deep", "too_large", "shape"]
FATAL: frozenset[str] = frozenset({"non_finite", "too_deep", "too_large"})
"""Failures no repair may mend."""


class Reject(ValueError):
    """Why one block (or one value) was refused; `kind` decides whether repair may try."""

    def __init__(self, reason: str, kind: RejectKind = "syntax") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind: RejectKind = kind


class Budget:
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


def short(value: object, limit: int = 40) -> str:
    """An ASCII-only, bounded repr for error messages (safe to write as JSON)."""
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Reject(f"duplicate key {short(key)}", "duplicate")
            seen.add(key)
    return obj


def _reject_constant(name: str) -> Any:
    raise Reject(f"{name} is not a JSON number", "non_finite")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise Reject(f"number {short(literal, 24)} overflows a float", "non_finite")
    return value


# Linear regular expressions: the string alternatives start with disjoint characters,
# so nothing backtracks.
_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BARE_CONSTANT = re.compile(r"(?<![\w.])-?(?:NaN|Infinity)(?!\w)")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SEPARATORS = re.compile(r"[\s,]*")

# Built once: `json.loads(s, **hooks)` would build a decoder per call (about 2 us).
STRICT = json.JSONDecoder(
    object_pairs_hook=_unique_pairs, parse_constant=_reject_constant, parse_float=_finite_float
)
LENIENT = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float, strict=False)
_TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels"


def _too_deep(json_text: str) -> bool:
    """True when valid JSON text nests deeper than MAX_DEPTH levels (the shared guard,
    `loragate.common.jsonguard.too_deep`, with the block's limit)."""
    return too_deep(json_text, MAX_DEPTH)


def normalise(value: Any) -> Any:
    """Re-check a decoded value that did not come straight from the strict decoder.

    Refuses non-finite floats and too-deep nesting and replaces lone surrogates,
    all through one C-speed `json.dumps` (and one `json.loads` when something was
    replaced).
    """
    try:
        dumped = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise Reject(_TOO_DEEP, "too_deep") from None
    except ValueError:
        raise Reject("non-finite number", "non_finite") from None
    except TypeError:
        raise Reject("not JSON data", "shape") from None
    if _too_deep(dumped):
        raise Reject(_TOO_DEEP, "too_deep")
    fixed = without_surrogates(dumped)
    return value if fixed is dumped else json.loads(fixed)


def _decode_prefix(text: str, decoder: json.JSONDecoder, start: int = 0) -> tuple[Any, int]:
    """Decode the JSON value at `text[start:]` (no leading whitespace); return it and its end."""
    if len(text) > MAX_BLOCK_CHARS:
        raise Reject(f"{len(text)} chars of JSON (limit {MAX_BLOCK_CHARS})", "too_large")
    try:
        value, end = decoder.raw_decode(text, start)
    except Reject:
        raise
    except json.JSONDecodeError as exc:
        raise Reject(f"invalid JSON: {exc.msg} at char {exc.pos}") from None
    except RecursionError:
        raise Reject(_TOO_DEEP, "too_deep") from None
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise Reject(f"invalid JSON: {short(str(exc), 80)}") from None
    # Cheap pre-tests keep both checks off the hot path: depth needs that many
    # brackets, and a surrogate escape is the only way a lone surrogate gets past
    # the fix at `parse_output`'s entry.
    if text.count("{", start, end) + text.count("[", start, end) > MAX_DEPTH and _too_deep(
        text[start:end]
    ):
        raise Reject(_TOO_DEEP, "too_deep")
    if text.find("\\u", start, end) >= 0 and _SURROGATE_ESCAPE.search(text, start, end):
        value = normalise(value)
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


def decode_strict(text: str) -> Any:
    """`decode(text, STRICT)`, through `orjson` (about 5x faster) whenever it provably
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
    return decode(text, STRICT)


def decode(text: str, decoder: json.JSONDecoder) -> Any:
    """Decode `text` as exactly one JSON value (surrounding whitespace allowed)."""
    value, end = _decode_prefix(text, decoder)
    if end != len(text) and not text[end:].isspace():
        raise Reject(f"invalid JSON: extra data at char {end}")
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
            value, pos = _decode_prefix(text, LENIENT, pos)
        except Reject as exc:
            if exc.kind in FATAL:
                raise
            return None
        values.extend(value if isinstance(value, list) else [value])
        separators = _SEPARATORS.match(text, pos)
        pos = separators.end() if separators else pos
    else:
        return None
    return values if len(values) > 1 else None


def _decode_repaired(text: str, budget: Budget) -> Any:
    """Strict decoder, then the lenient stdlib one (also on a sequence of values), then
    `json_repair` within its limits."""
    try:
        return decode(text, STRICT)
    except Reject as exc:
        if exc.kind in FATAL:
            raise
    try:
        return decode(text, LENIENT)
    except Reject as exc:
        if exc.kind in FATAL:
            raise
    sequence = _decode_sequence(text)
    if sequence is not None:
        return sequence
    if "name" not in text:
        # Every call shape needs a `name` key: without the word no repair can yield a
        # call, so skip json_repair (the costliest step on junk).
        raise Reject("invalid JSON with no `name`; not repairable into a call", "shape")
    if len(text) > MAX_REPAIR_CHARS:
        raise Reject(
            f"invalid JSON; {len(text)} chars is too large to repair (limit {MAX_REPAIR_CHARS})",
            "too_large",
        )
    if not budget.take(len(text)):
        raise Reject(
            f"invalid JSON; repair budget of {REPAIR_BUDGET_CHARS} chars used up", "too_large"
        )
    # json_repair reads a bare NaN / Infinity as the string "NaN": refuse them first.
    if _BARE_CONSTANT.search(_STRING_LITERAL.sub("", text)):
        raise Reject("NaN / Infinity is not a JSON number", "non_finite")
    # Imported here: only failing outputs pay for it.
    from json_repair import loads as repair_loads

    try:
        value: Any = repair_loads(text, skip_json_loads=True)
    except Exception as exc:  # json_repair may raise anything on hostile input
        raise Reject(f"JSON repair failed: {type(exc).__name__}") from None
    return normalise(value)


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
            raise Reject("empty list of calls", "shape")
        return value
    if isinstance(value, dict):
        return [value]
    raise Reject(f"JSON is a {_json_type(value)}, not a call object or list", "shape")


def _make_call(name: str, arguments: dict[str, Any]) -> ToolCall:
    try:
        return ToolCall(name=name, arguments=arguments)
    except ValidationError as exc:
        raise Reject(f"not a valid call: {exc.error_count()} validation errors", "shape") from None


def _strict_calls(value: Any) -> list[ToolCall]:
    if isinstance(value, list):
        # vLLM's Hermes parser reads one call object per block and runs none of a list.
        raise Reject("a list of calls in one block (one call object a block)", "shape")
    calls: list[ToolCall] = []
    for item in _items(value):
        if not isinstance(item, dict):
            raise Reject(f"call is a {_json_type(item)}, not an object", "shape")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise Reject("`name` is missing, empty or not a string", "shape")
        if "arguments" not in item:
            hint = " (`parameters` given instead)" if "parameters" in item else ""
            raise Reject(f"`arguments` is missing{hint}", "shape")
        arguments = item["arguments"]
        if not isinstance(arguments, dict):
            raise Reject(f"`arguments` is a {_json_type(arguments)}, not an object", "shape")
        # Decoded from JSON text: a str name and an object with str keys, a valid call.
        calls.append(
            trusted(ToolCall, {"name": name, "arguments": arguments, "arguments_json": None})
        )
    return calls


def _arguments_from_string(text: str) -> dict[str, Any]:
    """Decode `arguments` serialised as a JSON string; only a real JSON object counts."""
    text = text.strip()
    if not text:
        return {}
    try:
        value = decode(text, STRICT)
    except Reject as exc:
        if exc.kind in FATAL:
            raise
        try:
            value = decode(text, LENIENT)
        except Reject:
            raise Reject("`arguments` is a string that holds no JSON object", "shape") from None
    if not isinstance(value, dict):
        raise Reject(f"`arguments` is a string holding a {_json_type(value)}", "shape")
    return value


def _repaired_call(item: Any) -> ToolCall:
    if not isinstance(item, dict):
        raise Reject(f"call is a {_json_type(item)}, not an object", "shape")
    if "name" not in item and isinstance(item.get("function"), dict):
        item = item["function"]  # OpenAI-style {"type": "function", "function": {...}}
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise Reject("`name` is missing, empty or not a string", "shape")
    arguments = item.get("arguments", item.get("parameters"))
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        arguments = _arguments_from_string(arguments)
    if not isinstance(arguments, dict):
        raise Reject(f"`arguments` is a {_json_type(arguments)}, not an object", "shape")
    return _make_call(name.strip(), arguments)


def _is_bare_call(item: Any) -> bool:
    """A tag-less JSON object only counts as a call when it says so explicitly."""
    if not isinstance(item, dict):
        return False
    if "name" not in item and isinstance(item.get("function"), dict):
        item = item["function"]
    return isinstance(item.get("name"), str) and ("arguments" in item or "parameters" in item)


def strip_fence(text: str) -> str:
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
    for size in range(len(CLOSE) - 1, 0, -1):
        if stripped.endswith(CLOSE[:size]):
            return stripped[:-size]
    return text


# -- per-block parses ----------------------------------------------------------------


def strict_block(content: str, closed: bool) -> list[ToolCall]:
    """The calls of one block's JSON (`closed`: ended by `</tool_call>`); `Reject` otherwise."""
    if not closed:
        raise Reject("not closed (no </tool_call>)", "shape")
    content = content.strip()
    if not content:
        raise Reject("empty block", "shape")
    return _strict_calls(decode_strict(content))


def repaired_block(content: str, closed: bool, budget: Budget) -> list[ToolCall]:
    """The calls of one block after the repairs of repaired mode; `Reject` otherwise."""
    if not closed:
        content = _strip_partial_close(content)
    content = strip_fence(content.strip())
    if not content:
        raise Reject("empty block", "shape")
    return [_repaired_call(item) for item in _items(_decode_repaired(content, budget))]


def bare_calls(text: str, budget: Budget) -> tuple[list[ToolCall], str] | None:
    """Repaired mode: read a tag-less call at the start of `text` (already stripped).

    Returns the calls and the remaining answer, or None when `text` is not a call.
    """
    body = strip_fence(text)
    if not body.startswith(("{", "[")) or "name" not in body:
        return None
    rest = ""
    try:
        value, end = _decode_prefix(body, LENIENT)
        rest = body[end:].strip()
        if rest.startswith(CLOSE):
            rest = rest[len(CLOSE) :].strip()
    except Reject as exc:
        if exc.kind in FATAL:
            return None
        try:
            value = _decode_repaired(body, budget)
        except Reject:
            return None
    try:
        items = _items(value)
        if not all(_is_bare_call(item) for item in items):
            return None
        return [_repaired_call(item) for item in items], rest
    except Reject:
        return None
