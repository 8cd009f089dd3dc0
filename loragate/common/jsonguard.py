"""The one guard in front of every decode of untrusted JSON: users' and run folders'
files (whole documents and JSON lines), tool servers' results, imported benchmark data,
and the model output's tool-call blocks (`loragate.calls.parsing`, with its own limit).

What it bounds, so that no input can end in a traceback, a hang or an allocation the
input chose:

- **depth**: `too_deep(text, limit)` answers on the text with C-speed string
  operations before anything is decoded (Python's decoder raises `RecursionError` near
  1,000 levels, and deep values break every later `json.dumps`, pydantic model and
  schema check); a `RecursionError` that gets through anyway is caught as too deep;
- **size**: a document or line longer than its limit is refused undecoded;
- **lone surrogates**: the escape `"\\ud800"` decodes to a string that cannot be
  written as UTF-8; `mend_surrogates` replaces each (at any depth, keys too) with
  U+FFFD, or the caller refuses the text (`Surrogates`);
- **integers**: a literal of more than 4,300 digits is refused by Python's decoder
  (`ValueError`), reported as invalid JSON.

`loads` applies all of them and raises `JsonRefused` with a reason a message can quote;
`loads_or_none` is for text that may or may not be JSON (a tool result).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from loragate.common.surrogates import without_surrogates

MAX_FILE_DEPTH = 128
"""Nesting levels of a JSON document or line read from a file: above what loragate
writes (a result record holds a parsed call of at most 64 levels) and what evalsets
need (matchers nest at most 50 levels), far below where Python's decoder fails."""
MAX_RESULT_DEPTH = 64
"""Nesting levels of a tool server's result that is compacted as JSON (as deep as a
tool-call block may be); a deeper result reaches the model as its raw text."""
MAX_DOCUMENT_BYTES = 256 << 20
"""A JSON document read whole (summary, manifest, tools.json, a training log, ...)."""
MAX_LINE_BYTES = 64 << 20
"""One line of a JSON-lines file (a generation holds one output: 10 MB outputs are
scored)."""
MAX_RESULT_BYTES = 1 << 20
"""A tool result longer than this is not decoded (results are cut to 4,000 characters
before the model sees them)."""

Surrogates = Literal["mend", "refuse", "keep"]
"""What `loads` does with escaped lone surrogates: replace them by U+FFFD (and say so),
refuse the text, or keep them (the caller mends later)."""

_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING_LITERAL_B = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET_B = re.compile(rb"[^\[\]{}]+")


class JsonRefused(ValueError):
    """Text the guard refuses; `kind` is `too_deep`, `too_large`, `surrogate` or
    `invalid`, `reason` says what is wrong in words, `fix` what to do about it."""

    def __init__(self, kind: str, reason: str, fix: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.fix = fix


def bracket_count(text: str | bytes) -> int:
    """Opening brackets in `text`: a bound on its nesting depth."""
    if isinstance(text, bytes):
        return text.count(b"{") + text.count(b"[")
    return text.count("{") + text.count("[")


def too_deep(text: str | bytes, limit: int) -> bool:
    """True when the JSON text `text` nests deeper than `limit` levels (of valid JSON;
    any text is answered, in time linear in its length).

    Works on the text with C-speed string operations (a Python walk over a decoded
    megabyte takes about a second): drop string literals and everything but brackets,
    then peel the innermost pairs off, one level or more per round."""
    if bracket_count(text) <= limit:
        return False
    if isinstance(text, bytes):
        brackets_b = _NOT_BRACKET_B.sub(b"", _STRING_LITERAL_B.sub(b"", text))
        for _ in range(limit):
            if not brackets_b:
                return False
            brackets_b = brackets_b.replace(b"[]", b"").replace(b"{}", b"")
        return bool(brackets_b)
    brackets = _NOT_BRACKET.sub("", _STRING_LITERAL.sub("", text))
    for _ in range(limit):
        if not brackets:
            return False
        brackets = brackets.replace("[]", "").replace("{}", "")
    return bool(brackets)


def may_hold_surrogate(text: str) -> bool:
    """False when `text` surely escapes no lone surrogate (a cheap test first)."""
    return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None


def mend_surrogates(value: Any) -> tuple[Any, bool]:
    """`value` (decoded JSON) with every lone surrogate in its strings and keys replaced
    by U+FFFD; and whether any was. One C-speed `json.dumps`, and a `json.loads` only
    when something changed."""
    dumped = json.dumps(value, ensure_ascii=False)
    fixed = without_surrogates(dumped)
    if fixed is dumped:
        return value, False
    return json.loads(fixed), True


def loads(
    text: str,
    *,
    max_depth: int = MAX_FILE_DEPTH,
    max_chars: int = MAX_DOCUMENT_BYTES,
    surrogates: Surrogates = "mend",
) -> tuple[Any, bool]:
    """The JSON value of `text` and whether lone surrogates were mended in it;
    `JsonRefused` when it is too large, too deep, not JSON, or (with `refuse`) escapes
    a lone surrogate."""
    if len(text) > max_chars:
        raise JsonRefused(
            "too_large",
            f"{len(text):,} characters of JSON (the limit is {max_chars:,})",
            "split the data, or keep such values out of it",
        )
    if too_deep(text, max_depth):
        raise deep_error(max_depth)
    try:
        value = json.loads(text)
    except RecursionError:
        raise deep_error(max_depth) from None
    except ValueError as exc:  # JSONDecodeError, or an integer past 4,300 digits
        raise JsonRefused(
            "invalid", f"not valid JSON: {str(exc)[:200]}", "fix the JSON syntax"
        ) from None
    if not may_hold_surrogate(text) or surrogates == "keep":
        return value, False
    mended, changed = mend_surrogates(value)
    if changed and surrogates == "refuse":
        raise JsonRefused(
            "surrogate",
            "a \\uD800-\\uDFFF escape stands alone (a lone surrogate is not text)",
            "write the character itself, or a complete surrogate pair",
        )
    return mended, changed


def deep_error(limit: int) -> JsonRefused:
    return JsonRefused(
        "too_deep",
        f"nests deeper than {limit} levels",
        f"flatten the data to at most {limit} levels of nesting",
    )


def loads_or_none(
    text: str, *, max_depth: int = MAX_RESULT_DEPTH, max_chars: int = MAX_RESULT_BYTES
) -> Any:
    """The JSON value of `text` (lone surrogates mended), or None when it is not JSON
    or the guard refuses it: for text that is passed on as it is when it is not JSON."""
    try:
        return loads(text, max_depth=max_depth, max_chars=max_chars, surrogates="mend")[0]
    except JsonRefused:
        return None


def _containers(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [c for c in node.values() if isinstance(c, (dict, list))]
    if isinstance(node, list):
        return [c for c in node if isinstance(c, (dict, list))]
    return []


def check_tree(
    value: Any, *, max_depth: int = MAX_FILE_DEPTH, max_nodes: int = 1_000_000
) -> str | None:
    """What is wrong with the shape of a loaded value (YAML may share nodes through
    aliases and even refer to itself), or None: nesting deeper than `max_depth`, more
    than `max_nodes` containers once aliases are expanded, or a cycle. Iterative;
    linear in the distinct containers."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _containers(node)
        if done:
            active.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            depths[key] = 1 + max((depths[id(c)] for c in children), default=0)
            if depths[key] > max_depth:
                return f"nests deeper than {max_depth} levels"
            if sizes[key] > max_nodes:
                return f"holds more than {max_nodes:,} lists and maps once its aliases are expanded"
            continue
        if key in sizes:
            continue
        if key in active:
            return "refers to itself (an alias inside its own anchor)"
        if not isinstance(node, (dict, list)):
            continue
        active.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return None
