"""Helpers of the parser's tests (`test_parsing.py`, `test_parsing_vllm.py`)."""

from __future__ import annotations

import json
from typing import Any

from loragate.calls.parsing import parse_output
from loragate.formats.records import ParseResult


def block(payload: Any) -> str:
    """A well-formed block around `payload` (a JSON string is used as is)."""
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return f"<tool_call>\n{body}\n</tool_call>"


def both(text: str) -> tuple[ParseResult, ParseResult]:
    return parse_output(text, "strict"), parse_output(text, "lenient")


def calls_of(result: ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in result.calls]


def assert_serialisable(result: ParseResult) -> None:
    # results.jsonl is UTF-8 JSON: a result that cannot be written is a crash later.
    assert ParseResult.model_validate_json(result.model_dump_json()) == result
