"""A small format-3 evalset whose entries carry their own tools.

Two entries define different tools under the same name `get_current_weather` (one
takes `location` and a `unit`, the other only `city`), one entry names two tools of
tools.json, and one offers every tool of tools.json (no `tools`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAI tool definition that accepts exactly `properties`."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} ({', '.join(properties)})",
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


WEATHER_BY_LOCATION = tool(
    "get_current_weather",
    {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    ["location"],
)
WEATHER_BY_CITY = tool("get_current_weather", {"city": {"type": "string"}}, ["city"])
CONVERT = tool(
    "convert_currency",
    {"amount": {"type": "number"}, "from_currency": {"type": "string"}, "to": {"type": "string"}},
    ["amount", "from_currency", "to"],
)
SEARCH = tool("search_web", {"query": {"type": "string"}}, ["query"])
TOOLS_JSON = [CONVERT, SEARCH]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


ENTRIES: list[dict[str, Any]] = [
    {
        "id": "W-loc",
        "family": "tool_call",
        "messages": [_user("What is the weather in Bern?")],
        "tools": [WEATHER_BY_LOCATION],
        "expect": {"calls": [{"name": "get_current_weather", "arguments": {"location": "Bern"}}]},
    },
    {
        "id": "W-city",
        "family": "tool_call",
        "messages": [_user("What is the weather in Bern?")],
        "tools": [WEATHER_BY_CITY],
        "expect": {"calls": [{"name": "get_current_weather", "arguments": {"city": "Bern"}}]},
    },
    {
        "id": "C-named",
        "family": "tool_call",
        "messages": [_user("Convert 5 EUR to CHF.")],
        "tools": ["convert_currency", "search_web"],
        "expect": {
            "calls": [
                {
                    "name": "convert_currency",
                    "arguments": {"amount": 5, "from_currency": "EUR", "to": "CHF"},
                }
            ]
        },
    },
    {
        "id": "C-all",
        "family": "tool_call",
        "messages": [_user("Search the web for loragate.")],
        "expect": {"calls": [{"name": "search_web", "arguments": {"query": "loragate"}}]},
    },
]


def write_perentry_evalset(
    root: Path,
    *,
    entries: list[dict[str, Any]] | None = None,
    tools: list[dict[str, Any]] | None = None,
    format_version: int = 3,
) -> Path:
    """Write the evalset (or one with other `entries` / tools.json) into `root`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "evalset.yaml").write_text(
        f"name: perentry\nversion: 0.1.0\nformat_version: {format_version}\n", encoding="utf-8"
    )
    (root / "tools.json").write_text(
        json.dumps(TOOLS_JSON if tools is None else tools), encoding="utf-8"
    )
    lines = [json.dumps(e) for e in (ENTRIES if entries is None else entries)]
    (root / "entries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root
