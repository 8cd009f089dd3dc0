"""Tool definitions (OpenAI style) and a toolset whose validators are compiled once."""

from __future__ import annotations

from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field

from loragate.records import ToolCall


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


def schema_errors(schema: Any) -> list[str]:
    """Problems with a tool's `parameters` as a Draft 2020-12 JSON Schema (empty if valid)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        path = "/".join(str(p) for p in exc.path)
        return [f"not a valid JSON Schema (Draft 2020-12) at `{path or '/'}`: {exc.message}"]
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ['`parameters` must be a JSON Schema with `"type": "object"`']
    return []


class Toolset:
    """The tools of an evalset, with one compiled validator per tool (built once)."""

    def __init__(self, tools: list[ToolDef]) -> None:
        self.tools = tools
        self.by_name: dict[str, ToolDef] = {t.name: t for t in tools}
        self._validators: dict[str, Draft202012Validator] = {
            t.name: Draft202012Validator(t.function.parameters) for t in tools
        }

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def names(self) -> list[str]:
        return list(self.by_name)

    def as_openai(self) -> list[dict[str, Any]]:
        """The tool definitions exactly as a chat template or server expects them."""
        return [t.model_dump(mode="json", exclude_none=True) for t in self.tools]

    def validate_arguments(self, name: str, arguments: Any) -> list[str]:
        """Schema errors of a call's arguments; `["unknown tool ..."]` for unknown names.

        Never raises: arbitrary model output goes through here.
        """
        validator = self._validators.get(name)
        if validator is None:
            return [f"unknown tool {name!r}"]
        try:
            errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
            return [
                f"{'/'.join(str(p) for p in e.path) or '(arguments)'}: {e.message[:200]}"
                for e in errors[:5]
            ]
        except (RecursionError, ValueError, TypeError) as exc:
            return [f"arguments could not be validated: {type(exc).__name__}"]

    def validate_call(self, call: ToolCall) -> list[str]:
        return self.validate_arguments(call.name, call.arguments)
