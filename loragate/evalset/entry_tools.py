"""The tools each entry offers (evalset format 3): names from `tools.json` and inline
definitions, resolved into one shared `Toolset` per distinct tool list.

An entry's `tools` item is either a string, the name of a tool in the evalset's
`tools.json`, or a full OpenAI tool definition local to that entry. Entries without
`tools` offer every tool of `tools.json`. Inline definitions are read, checked and
compiled once per distinct definition (canonical JSON), however many entries repeat
them, and entries that list the same tools in the same order share one `Toolset`.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import ValidationError

from loragate.calls.tools import CompiledTool, ToolDef, Toolset, schema_errors
from loragate.common.errors import Problem, did_you_mean, validation_problems

TOOL_ITEM_FIX = (
    'name a tool of tools.json ("get_weather") or give a full definition '
    '({"type": "function", "function": {"name": ..., "parameters": {...}}})'
)


def _canonical(item: Any) -> bytes | None:
    """Canonical JSON of an inline definition (the de-duplication key), or None."""
    try:
        key = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        key = None
    if key is None or b"null" in key:
        # orjson writes NaN and Infinity as null: keep such definitions apart
        try:
            return json.dumps(item, sort_keys=True, separators=(",", ":")).encode()
        except (TypeError, ValueError, RecursionError):
            return None
    return key


class EntryTools:
    """Resolves entries' `tools` lists against one evalset's `tools.json` toolset.

    Keeps every distinct inline definition (compiled, or the problems it has) and every
    distinct tool list (its `Toolset`), so repeats cost a dictionary lookup.
    """

    def __init__(self, base: Toolset) -> None:
        self.base = base
        self._inline: dict[bytes, CompiledTool | list[tuple[str, str, str]]] = {}
        self._sets: dict[tuple[int, ...], Toolset] = {}

    @property
    def inline_definitions(self) -> int:
        """How many distinct inline definitions were read."""
        return len(self._inline)

    @property
    def toolsets(self) -> list[Toolset]:
        """Every distinct per-entry toolset built so far."""
        return list(self._sets.values())

    def _compile_inline(self, item: Any) -> CompiledTool | list[tuple[str, str, str]]:
        """The compiled definition, or its problems as (field suffix, message, fix)."""
        key = _canonical(item)
        if key is not None and key in self._inline:
            return self._inline[key]
        found: CompiledTool | list[tuple[str, str, str]]
        try:
            tool = ToolDef.model_validate(item)
        except ValidationError as exc:
            fix = 'use {"type": "function", "function": {"name", "description", "parameters"}}'
            found = [
                ("." + p.field if p.field else "", p.message, p.fix or fix)
                for p in validation_problems(exc, "", fix=fix)
            ]
        else:
            errors = schema_errors(tool.function.parameters)
            found = [(".function.parameters", msg, "fix the JSON Schema") for msg in errors]
            if not errors:
                found = CompiledTool(tool)
        if key is not None:
            self._inline[key] = found
        return found

    def resolve(
        self, items: list[str | dict[str, Any]], where: str, line: int
    ) -> tuple[Toolset, list[Problem]]:
        """The toolset an entry's `tools` list offers, and the list's problems
        (unknown names, bad definitions, a name given twice)."""
        problems: list[Problem] = []
        chosen: list[CompiledTool] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            at = f"tools[{i}]"
            tool: CompiledTool | None
            if isinstance(item, str):
                tool = self.base.compiled(item)
                if tool is None:
                    problems.append(
                        Problem(
                            where,
                            f"unknown tool {item!r}: tools.json has no tool of that name",
                            line=line,
                            field=at,
                            fix=f"{did_you_mean(item, self.base.names())}{TOOL_ITEM_FIX}",
                        )
                    )
                    continue
            else:
                found = self._compile_inline(item)
                if isinstance(found, list):
                    problems += [
                        Problem(where, msg, line=line, field=at + suffix, fix=fix)
                        for suffix, msg, fix in found
                    ]
                    continue
                tool = found
            if tool.name in seen:
                problems.append(
                    Problem(
                        where,
                        f"tool {tool.name!r} is offered twice (first at tools[{seen[tool.name]}])",
                        line=line,
                        field=f"{at}.function.name" if not isinstance(item, str) else at,
                        fix="offer each tool once per entry; rename or drop one",
                    )
                )
                continue
            seen[tool.name] = i
            chosen.append(tool)
        key = tuple(id(t) for t in chosen)
        toolset = self._sets.get(key)
        if toolset is None:
            toolset = self._sets[key] = Toolset(chosen)
        return toolset, problems
