"""Qwen3 XML tool calls (Qwen3.5, Qwen3-Coder, Qwen3.6), read as vLLM's parser reads them.

The chat templates of these models teach::

    <tool_call>
    <function=get_invoice>
    <parameter=invoice_id>
    INV-58213
    </parameter>
    </function>
    </tool_call>

`scan_xml` walks the same state machine as vLLM 0.32's Qwen3 parser engine
(`vllm/parser/qwen3.py`, `qwen3_config`): from `<tool_call>` (or a bare `<function=`,
which vLLM also executes) through the function name, up to `>`, the argument body up
to `</function>`, and back to text at `</tool_call>`. Like vLLM it ignores tags that
mean nothing where they stand (a `</tool_call>` or `<tool_call>` inside an argument
value is part of the value) and starts a new call at a `<function=` or `<tool_call>`
after `</function>`. Unlike vLLM it also records what the model got wrong, so that
strict parsing can refuse it: text before `<function=` or after `</function>` (vLLM
drops it), a name that is empty or not closed by `>`, a body not closed by
`</function>`, a block not closed by `</tool_call>`.

`xml_arguments` reads the body's `<parameter=NAME>VALUE</parameter>` pairs exactly as
vLLM's `_qwen3_arg_converter` does (its regular expression, rewritten as a linear
scan: the expression itself is quadratic on a body of unclosed tags): a value ends at
`</parameter>` or at the next `<parameter=`, and loses one leading and one trailing
newline. It also reports text outside the pairs (vLLM ignores it), a last parameter
with no `</parameter>` (vLLM drops it), a name given twice (vLLM keeps the last) and
an empty name.

`coerce_arguments` types each value from the tool's JSON Schema as vLLM's
`ParserEngine._fix_arg_types` does with `coerce_to_schema_type`: by the types the
property's schema admits (`type`, `enum` values, `anyOf`/`oneOf`/`allOf`), in the
order null, integer, number, boolean, object/array (JSON), string; a value no type
takes is read as JSON when it is JSON and kept as the string otherwise (it then fails
the schema check with a worded detail). Parameters the schema does not name, and all
parameters of an unknown tool, stay strings.

Every scan is a loop of `str.find` / anchored matches: linear in the text.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FUNC_PREFIX",
    "TOOL_CLOSE",
    "TOOL_OPEN",
    "Cursor",
    "XmlCall",
    "coerce_arguments",
    "coerce_to_schema_type",
    "coerce_value",
    "scan_xml",
    "schema_types",
    "xml_arguments",
]

TOOL_OPEN = "<tool_call>"
TOOL_CLOSE = "</tool_call>"
FUNC_PREFIX = "<function="
FUNC_END = "</function>"
THINK_CLOSE = "</think>"


@dataclass(slots=True)
class XmlCall:
    """One call as vLLM's engine delimits it, with what strict parsing checks."""

    bare: bool
    """Started by `<function=` in text, with no `<tool_call>` before it."""
    preamble: str = ""
    """Text between `<tool_call>` and `<function=` (vLLM drops it)."""
    name: str = ""
    """The text between `<function=` and `>` (vLLM strips it)."""
    name_closed: bool = False
    args: str = ""
    """The body between `>` and `</function>`."""
    function_closed: bool = False
    between: str = ""
    """Text after `</function>` up to `</tool_call>` or the next call (vLLM drops it)."""
    block_closed: bool = False
    """Closed by `</tool_call>` (a bare call needs none)."""
    has_function: bool = False
    """A `<function=` was seen (a `<tool_call>` with none holds no XML call)."""
    extra: list[str] = field(default_factory=list)


class Cursor:
    """The next position of a fixed string at or after a moving position, cached:
    `find` is called again only once the cached hit is passed, so repeated lookups
    over one text stay linear."""

    __slots__ = ("at", "needle", "text")

    def __init__(self, text: str, needle: str) -> None:
        self.text = text
        self.needle = needle
        self.at = -2

    def next(self, pos: int) -> int:
        if self.at == -1 or (self.at >= pos):
            return self.at
        self.at = self.text.find(self.needle, pos)
        return self.at


_TAGS_WITH_GT = re.compile(r"<(?:/function|/tool_call|tool_call|think|/think|/parameter)>")
"""The terminals of vLLM's lexer that end in `>`: their `>` does not end a name."""


def _name_end(text: str, pos: int, gt: Cursor) -> tuple[int, bool]:
    """From inside a function name: (index, is_func_end) of the `>` or `</function>`
    that ends it, or (-1, False) at the end of the text. A `>` that closes another
    tag (`</tool_call>`, ...) belongs to that tag, as in vLLM's lexer."""
    while True:
        close = gt.next(pos)
        tag = _TAGS_WITH_GT.search(text, pos, close + 1 if close >= 0 else len(text))
        if tag is None:
            return close, False
        if tag.group() == FUNC_END:
            return tag.start(), True
        pos = tag.end()


def scan_xml(text: str, start: int, *, bare: bool, limit: int) -> tuple[list[XmlCall], int]:
    """The calls from `start` (just after `<tool_call>`, or at a bare `<function=`)
    until vLLM's engine is back in text, and the position where text resumes.

    At most `limit` calls are read; the rest of the text is then left unread (the
    caller reports the overflow)."""
    scan = _XmlScan(text, start, bare=bare, limit=limit)
    state: str | None = "name" if bare else "preamble"
    steps = {
        "preamble": scan.preamble,
        "name": scan.name,
        "args": scan.args,
        "between": scan.between,
    }
    while state is not None:
        state = steps[state]()
    return scan.calls, scan.resume


class _XmlScan:
    """The state of `scan_xml`: one method a state of vLLM's XML call lexer, each
    returning the next state, or None once `resume` (where text resumes) is set."""

    def __init__(self, text: str, start: int, *, bare: bool, limit: int) -> None:
        self.text = text
        self.limit = limit
        self.gt = Cursor(text, ">")
        self.func_prefix = Cursor(text, FUNC_PREFIX)
        self.tool_close = Cursor(text, TOOL_CLOSE)
        self.tool_open = Cursor(text, TOOL_OPEN)
        self.func_end = Cursor(text, FUNC_END)
        self.call = XmlCall(bare=bare)
        self.calls: list[XmlCall] = [self.call]
        self.pos = start
        self.resume = len(text)
        if bare:
            self.pos += len(FUNC_PREFIX)
            self.call.has_function = True

    def _done(self, resume: int) -> str | None:
        """No next state: text resumes at `resume`."""
        self.resume = resume
        return None

    def preamble(self) -> str | None:
        text, pos, call = self.text, self.pos, self.call
        f = self.func_prefix.next(pos)
        c = self.tool_close.next(pos)
        if f >= 0 and (c < 0 or f < c):
            call.preamble += text[pos:f]
            call.has_function = True
            self.pos = f + len(FUNC_PREFIX)
            return "name"
        if c >= 0:
            call.preamble += text[pos:c]
            call.block_closed = True
            return self._done(c + len(TOOL_CLOSE))
        call.preamble += text[pos:]
        return self._done(len(text))

    def name(self) -> str | None:
        text, pos, call = self.text, self.pos, self.call
        at, is_end = _name_end(text, pos, self.gt)
        if at < 0:
            call.name += text[pos:]
            return self._done(len(text))
        call.name += text[pos:at]
        if is_end:
            call.function_closed = True
            self.pos = at + len(FUNC_END)
            return "between"
        call.name_closed = True
        self.pos = at + 1
        return "args"

    def args(self) -> str | None:
        text, pos, call = self.text, self.pos, self.call
        f = self.func_end.next(pos)
        if f < 0:
            call.args += text[pos:]
            return self._done(len(text))
        call.args += text[pos:f]
        call.function_closed = True
        self.pos = f + len(FUNC_END)
        return "between"

    def between(self) -> str | None:
        """`</tool_call>` ends the block, `<tool_call>` / `<function=` start a call."""
        text, pos, call = self.text, self.pos, self.call
        c = self.tool_close.next(pos)
        o = self.tool_open.next(pos)
        f = self.func_prefix.next(pos)
        hits = [(i, k) for i, k in ((c, 0), (o, 1), (f, 2)) if i >= 0]
        if not hits:
            call.between += text[pos:]
            return self._done(len(text))
        at, kind = min(hits)
        call.between += text[pos:at]
        if kind == 0:
            call.block_closed = True
            return self._done(at + len(TOOL_CLOSE))
        if len(self.calls) >= self.limit:
            return self._done(at)
        if kind == 2:
            call.block_closed = True  # the next function continues the same block
        self.call = XmlCall(bare=False)
        self.calls.append(self.call)
        if kind == 1:
            self.pos = at + len(TOOL_OPEN)
            return "preamble"
        self.call.has_function = True
        self.pos = at + len(FUNC_PREFIX)
        return "name"


# -- arguments -----------------------------------------------------------------------

_TAG = re.compile(r"<\s*(?:(/)\s*parameter\s*>|parameter\s*=)")
"""The start of `</parameter>` or `<parameter=` with vLLM's optional spaces."""
_OPEN_TAG = re.compile(r"<\s*parameter\s*=\s*")


@dataclass(slots=True)
class XmlArguments:
    values: dict[str, str]
    """The parameters vLLM reads, by name."""
    problems: list[str]
    """What strict parsing refuses (empty when the body is well formed)."""
    partial: tuple[str, str] | None = None
    """A last parameter with no `</parameter>`: its name and the rest of the body
    (vLLM drops it; repaired mode closes it)."""


def _trim_wrapping_newlines(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def xml_arguments(body: str) -> XmlArguments:
    """The `<parameter=NAME>VALUE</parameter>` pairs of a function body, as vLLM's
    `_qwen3_arg_converter` reads them (`re.finditer` of its expression, as a linear
    scan), and what strict parsing refuses in the body."""
    values: dict[str, str] = {}
    problems: list[str] = []
    partial: tuple[str, str] | None = None
    gt = Cursor(body, ">")
    stray: list[str] = []
    pos = 0
    while True:
        opening = _OPEN_TAG.search(body, pos)
        if opening is None:
            stray.append(body[pos:])
            break
        stray.append(body[pos : opening.start()])
        close = gt.next(opening.end())
        if close < 0:
            problems.append("a <parameter= tag is not closed by '>'")
            break
        name = body[opening.end() : close]
        end = _TAG.search(body, close + 1)
        if end is None:
            problems.append(
                f"parameter {_short(name)} is not closed by </parameter> (vLLM drops it)"
            )
            partial = (name, _trim_wrapping_newlines(body[close + 1 :]))
            break
        if not name:
            problems.append("a parameter has an empty name")
        elif name in values:
            problems.append(f"parameter {_short(name)} is given twice (vLLM keeps the last)")
        values[name] = _trim_wrapping_newlines(body[close + 1 : end.start()])
        pos = end.start() if end.group(1) is None else end.end()
    leftover = "".join(stray).strip()
    if leftover:
        problems.append(f"text outside <parameter=...> tags: {_short(leftover)}")
    return XmlArguments(values, problems, partial)


def _short(value: object, limit: int = 40) -> str:
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- typing values from the schema -----------------------------------------------------

_TYPE_ALIASES: dict[str, str] = {
    "str": "string",
    "text": "string",
    "varchar": "string",
    "char": "string",
    "enum": "string",
    "int": "integer",
    "int32": "integer",
    "int64": "integer",
    "uint": "integer",
    "uint32": "integer",
    "uint64": "integer",
    "long": "integer",
    "short": "integer",
    "unsigned": "integer",
    "float": "number",
    "float32": "number",
    "float64": "number",
    "double": "number",
    "bool": "boolean",
    "dict": "object",
    "arr": "array",
    "list": "array",
    "sequence": "array",
}
"""vLLM's type-name aliases (`vllm/tool_parsers/utils.py`), kept identical."""

_PRIORITY = ("null", "integer", "number", "boolean", "object", "array", "string")


def schema_types(schema: Any, depth: int = 0) -> list[str]:
    """Every type a property's schema admits (vLLM's `extract_types_from_schema`)."""
    if not isinstance(schema, dict) or depth > 32:
        return ["string"]
    types: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(t for t in declared if isinstance(t, str))
    enum = schema.get("enum")
    if isinstance(enum, list):
        for value in enum:
            types.add(_json_type(value))
    for key in ("anyOf", "oneOf", "allOf"):
        choices = schema.get(key)
        if isinstance(choices, list):
            for choice in choices:
                types.update(schema_types(choice, depth + 1))
    return list(types) if types else ["string"]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _json_or_none(value: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(value)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return False, None


def coerce_to_schema_type(value: str, types: list[str]) -> Any:
    """`value` typed as vLLM's `coerce_to_schema_type` types it (same order, same
    fallbacks; a value too deep to read stays a string)."""
    wanted = {_TYPE_ALIASES.get(t.strip().lower(), t.strip().lower()) for t in types}
    for candidate in _PRIORITY:
        if candidate not in wanted:
            continue
        if candidate == "null":
            if value.lower() == "null":
                return None
        elif candidate == "string":
            return value
        elif candidate == "integer":
            try:
                return int(value)
            except (ValueError, TypeError):
                continue
        elif candidate == "number":
            try:
                number = float(value)
            except (ValueError, TypeError):
                continue
            if not math.isfinite(number):
                continue
            return number if number != int(number) else int(number)
        elif candidate == "boolean":
            lowered = value.lower().strip()
            if lowered in ("true", "1"):
                return True
            if lowered in ("false", "0"):
                return False
        else:  # object, array: any JSON value
            ok, parsed = _json_or_none(value)
            if ok and _finite(parsed):
                return parsed
    ok, parsed = _json_or_none(value)
    if not ok or not _finite(parsed):
        return value
    return parsed


def coerce_arguments(values: dict[str, str], parameters: Any) -> dict[str, Any]:
    """The string values of a call typed by its tool's `parameters` schema (None for
    an unknown tool: every value stays a string)."""
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict) or not properties:
        return dict(values)
    out: dict[str, Any] = {}
    for key, value in values.items():
        schema = properties.get(key)
        out[key] = (
            coerce_to_schema_type(value, schema_types(schema))
            if isinstance(schema, dict)
            else value
        )
    return out


def coerce_value(value: Any, schema: dict[str, Any], depth: int = 0) -> tuple[Any, bool]:
    """A decoded JSON value typed by its schema as vLLM's `ParserEngine._coerce_value`
    types it: a string as `coerce_to_schema_type`, an object's properties and an array's
    items recursively (in place), any other scalar through its JSON text. Returns the
    value and whether it changed (used for a function body that is JSON)."""
    if isinstance(value, str):
        coerced = coerce_to_schema_type(value, schema_types(schema))
        return coerced, coerced is not value
    if depth > 64:
        return value, False
    if isinstance(value, dict):
        nested = schema.get("properties")
        changed = False
        if isinstance(nested, dict):
            for key, item in value.items():
                sub = nested.get(key)
                if isinstance(sub, dict):
                    typed, moved = coerce_value(item, sub, depth + 1)
                    if moved:
                        value[key] = typed
                        changed = True
        return value, changed
    if isinstance(value, list):
        items = schema.get("items")
        changed = False
        if isinstance(items, dict):
            for index, item in enumerate(value):
                typed, moved = coerce_value(item, items, depth + 1)
                if moved:
                    value[index] = typed
                    changed = True
        return value, changed
    coerced = coerce_to_schema_type(json.dumps(value, ensure_ascii=False), schema_types(schema))
    if type(coerced) is not type(value) or coerced != value:
        return coerced, True
    return value, False
