"""Tool definitions (OpenAI style) and a toolset whose validators are compiled once."""

from __future__ import annotations

import json
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field

from loragate.fastschema import FastCheck, compile_fast_check
from loragate.records import ToolCall

_MEMO_MAX_ENTRIES = 50_000
_MEMO_MAX_KEY_CHARS = 4_000


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
    """The tools of an evalset, with validators compiled once per tool.

    Validation is layered for speed (scoring checks every call of every sample): a
    conservative fast check (`loragate.fastschema`) answers "surely valid" in a few
    microseconds for the simple schemas tools have; anything else goes to the
    `jsonschema` Draft 2020-12 validator, memoised on the tool name plus the arguments
    as canonical JSON (bounded; large or unserialisable arguments skip the memo).
    """

    def __init__(self, tools: list[ToolDef]) -> None:
        self.tools = tools
        self.by_name: dict[str, ToolDef] = {t.name: t for t in tools}
        self._validators: dict[str, Draft202012Validator] = {
            t.name: Draft202012Validator(t.function.parameters) for t in tools
        }
        self._fast: dict[str, FastCheck | None] = {
            t.name: compile_fast_check(t.function.parameters) for t in tools
        }
        self._memo: dict[tuple[str, str], list[str]] = {}

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
        fast = self._fast.get(name)
        if fast is not None and fast(arguments):
            return []
        try:
            key = json.dumps(arguments, sort_keys=True, allow_nan=True)
        except (RecursionError, TypeError, ValueError):
            return self._jsonschema_errors(validator, arguments)
        if len(key) > _MEMO_MAX_KEY_CHARS:
            return self._jsonschema_errors(validator, arguments)
        found = self._memo.get((name, key))
        if found is None:
            found = self._jsonschema_errors(validator, arguments)
            if len(self._memo) >= _MEMO_MAX_ENTRIES:
                self._memo.clear()  # bounded; refilling is cheap next to its upkeep
            self._memo[(name, key)] = found
        return list(found)

    @staticmethod
    def _jsonschema_errors(validator: Draft202012Validator, arguments: Any) -> list[str]:
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
