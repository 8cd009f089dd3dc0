"""The corpus's tools, serving stacks and writers of calls, values and prose."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from loragate.calls.parsing import ServingStack
from loragate.calls.tools import ToolDef, Toolset


def _tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS: list[dict[str, Any]] = [
    _tool("get_invoice", {"invoice_id": {"type": "string"}}, ["invoice_id"]),
    _tool(
        "convert_currency",
        {
            "amount": {"type": "number"},
            "from_currency": {"type": "string", "enum": ["EUR", "CHF", "USD"]},
            "to_currency": {"type": "string"},
            "date": {"type": ["string", "null"]},
        },
        ["amount", "from_currency", "to_currency"],
    ),
    _tool(
        "search_documents",
        {
            "query": {"type": "string"},
            "top_k": {"type": "integer"},
            "exact": {"type": "boolean"},
            "collections": {"type": "array", "items": {"type": "string"}},
            "filters": {
                "type": "object",
                "properties": {"year": {"type": "integer"}, "lang": {"type": "string"}},
            },
        },
        ["query"],
    ),
    _tool(
        "set_flag",
        {
            "enabled": {"type": "boolean"},
            "level": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "note": {"type": "string"},
        },
        [],
    ),
    _tool(
        "create_ticket",
        {
            "title": {"type": "string"},
            "priority": {"enum": [1, 2, 3]},
            "estimate": {"type": "number"},
            "urgent": {"type": "boolean"},
            "due": {"oneOf": [{"type": "string"}, {"type": "null"}]},
            "assignee": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "email": {"type": "string"}},
            },
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                },
            },
            "labels": {"type": "array", "items": {"type": "string"}},
        },
        ["title"],
    ),
]
TOOL_NAMES = [t["function"]["name"] for t in TOOLS]

STACKS: tuple[ServingStack, ...] = tuple(
    ServingStack(fmt, parser, thinking)  # type: ignore[arg-type]
    for fmt in ("hermes", "qwen3_xml")
    for parser, thinking in (
        ("qwen3", True),
        ("qwen3", False),
        ("deepseek_r1", None),
        ("none", None),
    )
)


def toolset() -> Toolset:
    return Toolset([ToolDef.model_validate(t) for t in TOOLS])


@dataclass(frozen=True)
class Case:
    text: str
    stack: ServingStack
    kind: str


# -- words, prose, arguments -----------------------------------------------------------

WORDS = ["invoice", "status", "Basel", "Zürich", "报告", "日本語", "ünïcödé", "🙂", "naïve"]
WORDS += ["Ωmega", "مرحبا", "e\u0301t\u00e9", "𝔘𝔫𝔦"]
PROSE = ["Let me check that.", "Sure - looking it up now.", "I'll search the documents."]
PROSE += ["Done?", "Voilà, je vérifie.", "好的，我来查一下。", ""]
THOUGHTS = ["The user wants the invoice status.", "Two lookups, independent.", "Use the tool."]


def word(rnd: random.Random) -> str:
    return rnd.choice(WORDS) + str(rnd.randint(0, 99))


def prose(rnd: random.Random) -> str:
    return rnd.choice(PROSE)


def arguments(rnd: random.Random, name: str) -> dict[str, Any]:
    """Schema-valid arguments of `name`, with optional keys at random."""
    if name == "get_invoice":
        return {"invoice_id": f"INV-{rnd.randint(10000, 99999)}"}
    if name == "convert_currency":
        args: dict[str, Any] = {
            "amount": rnd.choice([12500, 12500.5, 0.25, 3, 1e3, -7, 1.5e-7]),
            "from_currency": rnd.choice(["EUR", "CHF", "USD"]),
            "to_currency": rnd.choice(["CHF", "EUR"]),
        }
        if rnd.random() < 0.4:
            args["date"] = rnd.choice(["2026-11-16", None])
        return args
    if name == "search_documents":
        args = {"query": " ".join(word(rnd) for _ in range(rnd.randint(1, 3)))}
        if rnd.random() < 0.6:
            args["top_k"] = rnd.randint(1, 20)
        if rnd.random() < 0.4:
            args["exact"] = rnd.random() < 0.5
        if rnd.random() < 0.4:
            args["collections"] = [word(rnd) for _ in range(rnd.randint(0, 3))]
        if rnd.random() < 0.4:
            args["filters"] = {"year": rnd.randint(2000, 2030), "lang": rnd.choice(["de", "en"])}
        return args
    if name == "set_flag":
        args = {"enabled": rnd.random() < 0.5}
        if rnd.random() < 0.5:
            args["level"] = rnd.choice([None, 1, 7])
        if rnd.random() < 0.5:
            args["note"] = word(rnd) + "\nsecond line"
        return args
    args = {"title": word(rnd) + " " + word(rnd)}
    for key, make in (
        ("priority", lambda: rnd.choice([1, 2, 3])),
        ("estimate", lambda: rnd.choice([0.5, 2, 13.25])),
        ("urgent", lambda: rnd.random() < 0.5),
        ("due", lambda: rnd.choice(["2026-12-01", None])),
        ("assignee", lambda: {"id": rnd.randint(1, 500), "email": "a@b.ch"}),
        ("items", lambda: [{"sku": word(rnd), "qty": rnd.randint(1, 9)} for _ in range(2)]),
        ("labels", lambda: [word(rnd) for _ in range(rnd.randint(0, 2))]),
    ):
        if rnd.random() < 0.4:
            args[key] = make()
    return args


def call(rnd: random.Random) -> tuple[str, dict[str, Any]]:
    name = rnd.choice(TOOL_NAMES)
    return name, arguments(rnd, name)


# -- writing calls ---------------------------------------------------------------------


def hermes_body(name: Any, args: Any, *, key: str = "arguments", ascii_only: bool = False) -> str:
    return json.dumps({"name": name, key: args}, ensure_ascii=ascii_only)


def hermes_block(name: Any, args: Any, *, compact: bool = False) -> str:
    body = hermes_body(name, args, ascii_only=compact)
    return f"<tool_call>{body}</tool_call>" if compact else f"<tool_call>\n{body}\n</tool_call>"


def wrap(body: str) -> str:
    return f"<tool_call>\n{body}\n</tool_call>"


def xml_value(value: Any, rnd: random.Random | None = None) -> str:
    """A value as the Qwen3.5 template writes it (`tojson` for mappings and lists,
    `string` for the rest: Python's `True`, `None`), or as models also write it."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if rnd is not None and isinstance(value, bool) and rnd.random() < 0.5:
        return "true" if value else "false"
    if rnd is not None and value is None and rnd.random() < 0.5:
        return "null"
    return str(value)


def xml_block(
    name: str,
    args: dict[str, Any],
    rnd: random.Random,
    *,
    newlines: bool = True,
    wrapper: bool = True,
    raw: dict[str, str] | None = None,
) -> str:
    nl = "\n" if newlines else ""
    params = raw if raw is not None else {k: xml_value(v, rnd) for k, v in args.items()}
    body = "".join(f"<parameter={k}>{nl}{v}{nl}</parameter>{nl}" for k, v in params.items())
    text = f"<function={name}>{nl}{body}</function>"
    return f"<tool_call>{nl}{text}{nl}</tool_call>" if wrapper else text


def calls_text(rnd: random.Random, fmt: str, count: int) -> str:
    blocks = []
    for _ in range(count):
        name, args = call(rnd)
        blocks.append(hermes_block(name, args) if fmt == "hermes" else xml_block(name, args, rnd))
    return rnd.choice(["\n", "", "\n\n"]).join(blocks)
