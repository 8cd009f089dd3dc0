"""The calls a vLLM server executes on one output: the reading of the `served` parse mode.

Models vLLM 0.32.0 (`VLLM_VERSION`) as `vllm serve --enable-auto-tool-choice
--tool-call-parser P --reasoning-parser R` handles a finished chat completion with tools
and `tool_choice` auto: the reasoning parser splits off the reasoning
(`loragate.calls.reasoning`, done by the caller), then the tool parser reads the content.
What it hands the client - and so the tools - is modelled exactly: which calls run,
their names and their arguments (the JSON text the server passes, decoded).
`tests/test_vllm_agreement.py` holds this module to the installed vLLM's own parsers
on a generated corpus, in CI.

Hermes (`--tool-call-parser hermes`, `Hermes2ProToolParser.extract_tool_calls`): with no
`<tool_call>` in the content nothing runs. Otherwise every block - from `<tool_call>` to
the first `</tool_call>` after it, the last one to the end of the text when unclosed - is
decoded with Python's `json.loads` (NaN, Infinity, duplicate keys: the last wins, a
number past a float's range: Infinity) and must be an object with a `"name"` string and
an `"arguments"` key, whatever its value (`null`, `42`, a string, a list: passed on as
JSON text). One block that fails any of this, and the server runs none of the output's
calls (and returns the whole content as text).

Qwen3 XML (`--tool-call-parser qwen3_xml` / `qwen3_coder`, the parser engine of
`vllm/parser/qwen3.py`): `loragate.calls.qwen_xml.scan_xml` walks the engine's state
machine. A call with an empty name (after stripping) is dropped silently and the others
run; a `<tool_call>` holding no `<function=` (a Hermes JSON block, prose) is dropped;
text inside a block outside the tags is dropped; a last parameter with no
`</parameter>` is dropped, a parameter given twice keeps its last value, an empty
parameter name is passed on as the key `""`; values are typed from the tool's schema
(`coerce_arguments`). A `<function=>` with no name takes the first `"name": "..."`
string of its body as its name (and then has no parameters); one whose name is only
whitespace, or whose body names none that way, reads a JSON object body as `{"name":
..., "arguments" | "parameters": ...}` (a name that is not a string makes the server
fail the request).

Arguments that are not a JSON object of finite numbers (`42`, `"text"`, `null`, a
list, `{"amount": NaN}`) are kept as the text the server passes (`arguments_json`), so
the call runs and then fails the tool's schema; an empty name is a call to a tool that
does not exist. Lone UTF-16 surrogates (which the server passes on) become U+FFFD, as
everywhere in loragate: the one difference from vLLM, named in docs/call-formats.md.

loragate's limits hold here as in every mode (`MAX_BLOCKS` calls, `MAX_BLOCK_CHARS`
characters and `MAX_DEPTH` levels of nesting a block): an output beyond them is
unparseable, where vLLM would run it. Every function here is linear in the text and
never raises on any input.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from loragate.calls.hermes import MAX_BLOCK_CHARS, MAX_BLOCKS, MAX_DEPTH, short
from loragate.calls.qwen_xml import (
    FUNC_PREFIX,
    TOOL_CLOSE,
    TOOL_OPEN,
    Cursor,
    XmlCall,
    coerce_arguments,
    coerce_value,
    scan_xml,
    xml_arguments,
)
from loragate.common.jsonguard import too_deep
from loragate.common.surrogates import without_surrogates
from loragate.formats.records import ToolCall, trusted

__all__ = ["VLLM_VERSION", "ServedReading", "served_call", "served_hermes", "served_xml"]

VLLM_VERSION = "0.32.0"
"""The vLLM release whose parsers the served reading models."""

_NON_FINITE = re.compile(r"NaN|Infinity")
_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"]*)"')
"""The engine's `_try_extract_name`: the name of a `<function=>` with none written."""


@dataclass(frozen=True, slots=True)
class ServedReading:
    """What the server runs of one output."""

    calls: list[ToolCall]
    """The calls it executes, in order."""
    error: str | None = None
    """Why it runs none of the output's call markup, or what it dropped (None: every
    block ran, or there was none)."""


class _RequestFails(Exception):
    """The server raises while parsing (the request fails with an error, no reply)."""


def served_call(name: str, arguments_json: str) -> ToolCall:
    """A call as the server passes it: `arguments_json` decoded when it is a JSON object
    of finite numbers, else kept as the text (see the module docstring)."""
    name = without_surrogates(name)
    text = without_surrogates(arguments_json)
    value: Any = None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict) and not (_NON_FINITE.search(text) and not _finite(value)):
        fields: dict[str, Any] = {"name": name, "arguments": value, "arguments_json": None}
    else:
        fields = {"name": name, "arguments": {}, "arguments_json": text}
    return trusted(ToolCall, fields)


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, RecursionError):
        return False
    return True


# -- Hermes ------------------------------------------------------------------------------


def _hermes_bodies(content: str) -> list[str]:
    """The bodies vLLM's `<tool_call>(.*?)</tool_call>|<tool_call>(.*)` finds."""
    bodies: list[str] = []
    pos = 0
    while True:
        start = content.find(TOOL_OPEN, pos)
        if start < 0:
            return bodies
        start += len(TOOL_OPEN)
        end = content.find(TOOL_CLOSE, start)
        if end < 0:
            bodies.append(content[start:])
            return bodies
        bodies.append(content[start:end])
        pos = end + len(TOOL_CLOSE)


def _hermes_call(body: str) -> ToolCall:
    """One block's call as the Hermes parser builds it; `ValueError` with the reason
    when the server fails on it."""
    if len(body) > MAX_BLOCK_CHARS:
        raise ValueError(f"{len(body)} chars in one block (loragate's limit {MAX_BLOCK_CHARS})")
    if too_deep(body, MAX_DEPTH):
        raise ValueError(f"nesting deeper than {MAX_DEPTH} levels (loragate's limit)")
    try:
        value = json.loads(body)
    except RecursionError:
        raise ValueError("JSON too deep for the server") from None
    except ValueError as exc:
        raise ValueError(f"invalid JSON ({short(str(exc), 60)})") from None
    if not isinstance(value, dict):
        raise ValueError(f"the JSON is not an object with `name` and `arguments`: {short(value)}")
    if "name" not in value or "arguments" not in value:
        missing = "name" if "name" not in value else "arguments"
        raise ValueError(f"no `{missing}` key")
    name = value["name"]
    if not isinstance(name, str):
        raise ValueError(f"`name` is not a string: {short(name)}")
    try:
        arguments = json.dumps(value["arguments"], ensure_ascii=False)
    except (ValueError, RecursionError):
        raise ValueError("the arguments do not serialise") from None
    return served_call(name, arguments)


def served_hermes(content: str) -> ServedReading:
    """The calls `--tool-call-parser hermes` runs on the (reasoning-free) `content`."""
    if TOOL_OPEN not in content:
        return ServedReading([])
    bodies = _hermes_bodies(content)
    if len(bodies) > MAX_BLOCKS:
        return ServedReading([], f"more than {MAX_BLOCKS} tool calls")
    calls: list[ToolCall] = []
    for index, body in enumerate(bodies, 1):
        try:
            calls.append(_hermes_call(body))
        except ValueError as exc:
            return ServedReading([], f"block {index}: {exc}; the server runs none of the calls")
    return ServedReading(calls)


# -- Qwen3 XML -----------------------------------------------------------------------------


def _json_body(body: str) -> tuple[Any, str]:
    """The engine's `_extract_name_and_args` for a function with no name: (name, the
    arguments' JSON text)."""
    body = body.strip()
    try:
        parsed = json.loads(body) if len(body) <= MAX_BLOCK_CHARS else None
    except (ValueError, RecursionError):
        return "", body
    if not isinstance(parsed, dict):
        return "", body
    name = parsed.get("name", "")
    for key in ("arguments", "parameters"):
        if key in parsed:
            value = parsed[key]
            return name, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    rest = {k: v for k, v in parsed.items() if k != "name"}
    return name, json.dumps(rest, ensure_ascii=False)


def _typed_json(arguments_json: str, tool: Any) -> str:
    """The engine's `_fix_arg_types` on a JSON body's arguments: values typed from the
    tool's schema, recursively (the text unchanged when nothing changes)."""
    properties = tool.function.parameters.get("properties") if tool is not None else None
    if not isinstance(properties, dict) or not properties:
        return arguments_json
    try:
        args = json.loads(arguments_json)
    except (ValueError, RecursionError):
        return arguments_json
    if not isinstance(args, dict):
        return arguments_json
    changed = False
    for key, value in args.items():
        schema = properties.get(key)
        if isinstance(schema, dict):
            typed, moved = coerce_value(value, schema)
            if moved:
                args[key] = typed
                changed = True
    return json.dumps(args, ensure_ascii=False) if changed else arguments_json


def _xml_served_call(call: XmlCall, tools: Any) -> ToolCall | None:
    """The call the engine builds from one scanned call (None: dropped); `_RequestFails`
    when the server raises on it."""
    body = call.args
    name: Any = _engine_name(call).strip()
    from_json = False
    arguments_json = ""
    if not name and body.strip():
        name, arguments_json = _json_body(body)
        from_json = True
    if not name:
        return None
    if not isinstance(name, str):
        raise _RequestFails(f"a function named by a JSON {type(name).__name__}")
    tool = tools.by_name.get(name) if tools is not None else None
    if from_json:
        return served_call(name, _typed_json(arguments_json, tool))
    values = xml_arguments(body).values if body.strip() else {}
    typed = coerce_arguments(values, tool.function.parameters if tool is not None else None)
    return served_call(name, json.dumps(typed, ensure_ascii=False))


def _engine_name(call: XmlCall) -> str:
    """The name the engine gives a call as it streams it: the text after `<function=`
    as written, or when there is none the first `"name": "..."` string of the body
    (whose arguments are then read as parameters: none)."""
    if call.name:
        return call.name
    found = _JSON_NAME.search(call.args)
    return found.group(1) if found is not None else ""


def served_xml(content: str, tools: Any) -> ServedReading:
    """The calls `--tool-call-parser qwen3_xml` runs on the (reasoning-free) `content`."""
    scanned: list[XmlCall] = []
    opens = Cursor(content, TOOL_OPEN)
    funcs = Cursor(content, FUNC_PREFIX)
    pos = 0
    while True:
        at_open = opens.next(pos)
        at_func = funcs.next(pos)
        if at_open < 0 and at_func < 0:
            break
        if len(scanned) >= MAX_BLOCKS:
            return ServedReading([], f"more than {MAX_BLOCKS} tool calls")
        bare = at_func >= 0 and (at_open < 0 or at_func < at_open)
        start = at_func if bare else at_open + len(TOOL_OPEN)
        calls, pos = scan_xml(content, start, bare=bare, limit=MAX_BLOCKS - len(scanned))
        scanned.extend(calls)
    calls_run: list[ToolCall] = []
    dropped = 0
    try:
        for call in scanned:
            served = _xml_served_call(call, tools) if call.name or call.args else None
            if served is None:
                dropped += 1
            else:
                calls_run.append(served)
    except _RequestFails as exc:
        return ServedReading([], f"the server fails the request: {exc}")
    error = None
    if dropped:
        error = (
            f"{dropped} of {len(scanned)} call block(s) dropped by the server (no "
            "<function=NAME>, or an empty name)"
        )
    return ServedReading(calls_run, error)
