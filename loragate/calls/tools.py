"""Tool definitions (OpenAI style) and a toolset whose validators are compiled once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any, Literal

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.schemacheck import SchemaChecker
from loragate.common.regex import pattern_problem


class ToolFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class ToolDef(BaseModel):
    """`{"type": "function", "function": {"name", "description", "parameters"}}`."""

    model_config = ConfigDict(extra="allow")

    type: Literal["function"] = "function"
    function: ToolFunction

    @property
    def name(self) -> str:
        return self.function.name


def _patterns(schema: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every regex a schema holds (`pattern`, `patternProperties` keys), with its place."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{path}/{key}"
            if key == "pattern":
                yield here, value
            elif key == "patternProperties" and isinstance(value, dict):
                for pattern, sub in value.items():
                    yield f"{here}/{pattern}", pattern
                    yield from _patterns(sub, f"{here}/{pattern}")
                continue
            yield from _patterns(value, here)
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _patterns(item, f"{path}/{i}")


@cache
def _meta_validator() -> Any:
    """The Draft 2020-12 meta-schema, compiled once by `jsonschema-rs` (a few us a check)."""
    return jsonschema_rs.validator_for(Draft202012Validator.META_SCHEMA, validate_formats=True)


def _surely_valid_schema(schema: Any) -> bool:
    """True when the compiled meta-schema accepts `schema`; False when it rejects it or
    cannot read it (then `jsonschema` decides and words the error)."""
    try:
        return bool(_meta_validator().is_valid(schema))
    except (ValueError, TypeError, OverflowError):
        return False


def schema_errors(schema: Any) -> list[str]:
    """Problems with a tool's `parameters` as a Draft 2020-12 JSON Schema (empty if valid)."""
    if not _surely_valid_schema(schema):
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            path = "/".join(str(p) for p in exc.path)
            return [f"not a valid JSON Schema (Draft 2020-12) at `{path or '/'}`: {exc.message}"]
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ['`parameters` must be a JSON Schema with `"type": "object"`']
    out = []
    for where, pattern in _patterns(schema):
        problem = pattern_problem(pattern)
        if problem is not None:
            out.append(f"`{where}`: {problem}")
    return out


class CompiledTool:
    """A tool definition with its argument checker, compiled once and shared by every
    toolset that offers it (see `loragate.calls.schemacheck`)."""

    def __init__(self, tool: ToolDef) -> None:
        self.tool = tool
        self.checker = SchemaChecker(tool.function.parameters)
        self._property_checkers: dict[str, SchemaChecker] = {}

    @property
    def name(self) -> str:
        return self.tool.name

    def errors(self, arguments: Any) -> list[str]:
        """Schema errors of `arguments` (empty when valid). Never raises."""
        return self.checker.errors(arguments)

    def property_error(self, name: str, value: Any) -> str | None:
        """The first error of `value` against the schema of parameter `name` (None when
        valid or when the tool has no such parameter schema); for checking
        expectations at load time."""
        checker = self._property_checkers.get(name)
        if checker is None:
            props = self.tool.function.parameters.get("properties")
            sub = props.get(name) if isinstance(props, dict) else None
            if not isinstance(sub, dict):
                return None
            checker = self._property_checkers[name] = SchemaChecker(sub)
        return checker.first_message(value)


class Toolset:
    """The tools offered to a prompt: an evalset's `tools.json`, or one entry's own set.

    Built from `ToolDef`s (compiled here) or from `CompiledTool`s (shared with other
    toolsets, so a tool offered to many entries is compiled once).
    """

    def __init__(self, tools: Sequence[ToolDef | CompiledTool]) -> None:
        compiled = [t if isinstance(t, CompiledTool) else CompiledTool(t) for t in tools]
        self._compiled: dict[str, CompiledTool] = {c.name: c for c in compiled}
        self.tools: list[ToolDef] = [c.tool for c in compiled]
        self.by_name: dict[str, ToolDef] = {t.name: t for t in self.tools}
        self._openai: list[dict[str, Any]] | None = None

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __len__(self) -> int:
        return len(self.tools)

    def names(self) -> list[str]:
        return list(self.by_name)

    def compiled(self, name: str) -> CompiledTool | None:
        """The compiled tool of that name, to share with another toolset."""
        return self._compiled.get(name)

    def as_openai(self) -> list[dict[str, Any]]:
        """The tool definitions exactly as a chat template or server expects them (a new
        list each call; the definitions inside are shared, do not change them)."""
        if self._openai is None:
            self._openai = [t.model_dump(mode="json", exclude_none=True) for t in self.tools]
        return list(self._openai)

    def validate_arguments(self, name: str, arguments: Any) -> list[str]:
        """Schema errors of a call's arguments; `["unknown tool ..."]` for unknown names.

        Never raises: arbitrary model output goes through here.
        """
        tool = self._compiled.get(name)
        if tool is None:
            return [f"unknown tool {name!r}"]
        return tool.checker.errors(arguments)
