"""The generated corpus of the vLLM agreement test (`_vllm_agreement.py`): the tools, the
serving stacks, and `corpus(n, seed)`, model outputs of every kind issue 22 lists in
both call formats, each with the stack it is read under."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from loragate.calls.parsing import ServingStack
from loragate.calls.tools import ToolDef, Toolset

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_invoice",
            "parameters": {
                "type": "object",
                "properties": {"invoice_id": {"type": "string"}},
                "required": ["invoice_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_currency",
            "parameters": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "from_currency": {"type": "string", "enum": ["EUR", "CHF", "USD"]},
                    "to_currency": {"type": "string"},
                    "date": {"type": ["string", "null"]},
                },
                "required": ["amount", "from_currency", "to_currency"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_documents",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "top_k": {"type": "integer"},
                    "exact": {"type": "boolean"},
                    "collections": {"type": "array", "items": {"type": "string"}},
                    "filters": {
                        "type": "object",
                        "properties": {"year": {"type": "integer"}, "lang": {"type": "string"}},
                    },
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_flag",
            "parameters": {
                "type": "object",
                "properties": {
                    "enabled": {"type": "boolean"},
                    "level": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                    "note": {"type": "string"},
                },
            },
        },
    },
]

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


# -- writing outputs -------------------------------------------------------------------

_WORDS = [
    "invoice",
    "status",
    "Basel",
    "Zürich",
    "报告",
    "日本語",
    "ünïcödé",
    "🙂",
    "naïve",
    "Ωmega",
]
_PROSE = ["Let me check that.", "Sure - looking it up now.", "I'll search the documents.", "Done?"]
_THOUGHTS = ["The user wants the invoice status.", "Two lookups, independent.", "Use the tool."]


def _word(rnd: random.Random) -> str:
    return rnd.choice(_WORDS) + str(rnd.randint(0, 99))


def _arguments(rnd: random.Random, name: str) -> dict[str, Any]:
    if name == "get_invoice":
        return {"invoice_id": f"INV-{rnd.randint(10000, 99999)}"}
    if name == "convert_currency":
        args: dict[str, Any] = {
            "amount": rnd.choice([12500, 12500.5, 0.25, 3, 1e3]),
            "from_currency": rnd.choice(["EUR", "CHF", "USD"]),
            "to_currency": rnd.choice(["CHF", "EUR"]),
        }
        if rnd.random() < 0.4:
            args["date"] = rnd.choice(["2026-11-16", None])
        return args
    if name == "search_documents":
        args = {"query": " ".join(_word(rnd) for _ in range(rnd.randint(1, 3)))}
        if rnd.random() < 0.6:
            args["top_k"] = rnd.randint(1, 20)
        if rnd.random() < 0.4:
            args["exact"] = rnd.random() < 0.5
        if rnd.random() < 0.4:
            args["collections"] = [_word(rnd) for _ in range(rnd.randint(0, 3))]
        if rnd.random() < 0.4:
            args["filters"] = {"year": rnd.randint(2000, 2030), "lang": rnd.choice(["de", "en"])}
        return args
    args = {"enabled": rnd.random() < 0.5}
    if rnd.random() < 0.5:
        args["level"] = rnd.choice([None, 1, 7])
    if rnd.random() < 0.5:
        args["note"] = _word(rnd) + "\nsecond line"
    return args


def _call(rnd: random.Random) -> tuple[str, dict[str, Any]]:
    name = rnd.choice([t["function"]["name"] for t in TOOLS])
    return name, _arguments(rnd, name)


def hermes_block(name: Any, arguments: Any, *, compact: bool = False) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=compact)
    return f"<tool_call>\n{body}\n</tool_call>" if not compact else f"<tool_call>{body}</tool_call>"


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
    arguments: dict[str, Any],
    rnd: random.Random,
    *,
    newlines: bool = True,
    wrapper: bool = True,
    raw: dict[str, str] | None = None,
) -> str:
    nl = "\n" if newlines else ""
    params = raw if raw is not None else {k: xml_value(v, rnd) for k, v in arguments.items()}
    body = "".join(f"<parameter={k}>{nl}{v}{nl}</parameter>{nl}" for k, v in params.items())
    call = f"<function={name}>{nl}{body}</function>"
    return f"<tool_call>{nl}{call}{nl}</tool_call>" if wrapper else call


def _calls_text(rnd: random.Random, fmt: str, count: int) -> str:
    blocks = []
    for _ in range(count):
        name, args = _call(rnd)
        blocks.append(hermes_block(name, args) if fmt == "hermes" else xml_block(name, args, rnd))
    return "\n".join(blocks)


def _hermes_case(rnd: random.Random, kind: str) -> str:
    name, args = _call(rnd)
    block = hermes_block(name, args)
    calls = _calls_text(rnd, "hermes", rnd.randint(1, 3))
    thought = rnd.choice(_THOUGHTS)
    match kind:
        case "single":
            return block
        case "parallel":
            return _calls_text(rnd, "hermes", rnd.randint(2, 4))
        case "compact":
            return hermes_block(name, args, compact=True)
        case "prose":
            return f"{rnd.choice(_PROSE)}\n{calls}\n{rnd.choice(_PROSE)}"
        case "plain_answer":
            return rnd.choice(_PROSE) + " " + _word(rnd)
        case "think_then_calls":
            return f"<think>\n{thought}\n</think>\n\n{calls}"
        case "empty_think":
            return f"<think>\n\n</think>\n\n{calls}"
        case "think_then_answer":
            return f"<think>{thought}</think>\n{rnd.choice(_PROSE)}"
        case "call_inside_think":
            tail = rnd.choice(["", "\nNo tool needed.", "\n" + calls])
            return f"<think>{thought} {block} maybe</think>{tail}"
        case "call_in_unclosed_think":
            return f"<think>{thought}\n{block}\nthen"
        case "unclosed_think":
            return f"<think>{thought} and more"
        case "template_opened_think":
            return f"{thought}\n</think>\n\n{calls}"
        case "malformed":
            good = json.dumps({"name": name, "arguments": args})
            bad = rnd.choice(
                [good[:-1], good.replace('"', "'"), good[:-1] + ",}", good[: len(good) // 2]]
            )
            return f"<tool_call>\n{bad}\n</tool_call>"
        case "unclosed_block":
            return f"{calls}\n<tool_call>\n" + json.dumps({"name": name, "arguments": args})
        case "nested":
            return hermes_block(
                "search_documents",
                {"query": "q", "filters": {"year": 2026, "x": [1, {"y": [True, None]}]}},
            )
        case "unknown_tool":
            return hermes_block(rnd.choice(["send_email", "delete_everything"]), {"to": _word(rnd)})
        case "tool_call_in_string":
            return hermes_block(
                "search_documents",
                {
                    "query": f"what is {rnd.choice(['<tool_call>', '<tool_call> x', '<function=f>'])} syntax"
                },
            )
        case "think_tag_in_string":
            return hermes_block(
                "search_documents", {"query": f"a {rnd.choice(['</think>', '<think>'])} b"}
            )
        case "non_object_arguments":
            return hermes_block(
                name, rnd.choice([42, "invoice 7", [1, 2], None, True, json.dumps(args)])
            )
        case "empty_name":
            return hermes_block("", args)
        case "lone_surrogate":
            return '<tool_call>\n{"name": "search_documents", "arguments": {"query": "a\\ud800b"}}\n</tool_call>'
        case "nan":
            return '<tool_call>\n{"name": "convert_currency", "arguments": {"amount": NaN, "from_currency": "EUR", "to_currency": "CHF"}}\n</tool_call>'
        case "duplicate_key":
            return '<tool_call>\n{"name": "get_invoice", "arguments": {"invoice_id": "A", "invoice_id": "B"}}\n</tool_call>'
        case "list_in_block":
            return (
                "<tool_call>\n"
                + json.dumps(
                    [
                        {"name": name, "arguments": args},
                        {"name": "get_invoice", "arguments": {"invoice_id": "X"}},
                    ]
                )
                + "\n</tool_call>"
            )
        case "missing_arguments":
            return "<tool_call>\n" + json.dumps({"name": name}) + "\n</tool_call>"
        case "non_string_name":
            return "<tool_call>\n" + json.dumps({"name": 7, "arguments": args}) + "\n</tool_call>"
        case "other_format":
            return xml_block(name, args, rnd)
    raise AssertionError(kind)


def _xml_case(rnd: random.Random, kind: str) -> str:
    name, args = _call(rnd)
    block = xml_block(name, args, rnd)
    calls = _calls_text(rnd, "qwen3_xml", rnd.randint(1, 3))
    thought = rnd.choice(_THOUGHTS)
    match kind:
        case "single":
            return block
        case "parallel":
            return _calls_text(rnd, "qwen3_xml", rnd.randint(2, 4))
        case "two_in_one_block":
            first = xml_block(name, args, rnd, wrapper=False)
            other = xml_block(*_call(rnd), rnd, wrapper=False)
            return f"<tool_call>\n{first}\n{other}\n</tool_call>"
        case "compact":
            return xml_block(name, args, rnd, newlines=False)
        case "prose":
            return f"{rnd.choice(_PROSE)}\n\n{calls}"
        case "plain_answer":
            return rnd.choice(_PROSE) + " " + _word(rnd)
        case "typed_values":
            raw = {
                "query": rnd.choice(["plain", "  spaced  ", "multi\nline", "42", "true", "null"]),
                "top_k": rnd.choice(["5", " 7 ", "3.0", "1e2", "five", "-2", "[1]"]),
                "exact": rnd.choice(["true", "True", "1", "false", "0", "yes", "null"]),
                "collections": rnd.choice(['["a", "b"]', "[]", "a, b", '"a"', "null"]),
                "filters": rnd.choice(['{"year": 2026}', "{}", "year=2026", "[1,2]", "3"]),
            }
            return xml_block("search_documents", {}, rnd, raw=raw)
        case "number_values":
            raw = {
                "amount": rnd.choice(
                    ["12500", "12500.50", "3.0", "1e3", "-0.5", "inf", "NaN", "12'500", "1_000"]
                ),
                "from_currency": rnd.choice(["EUR", "chf"]),
                "to_currency": "CHF",
                "date": rnd.choice(["null", "None", "2026-11-16", ""]),
            }
            return xml_block("convert_currency", {}, rnd, raw=raw)
        case "union_values":
            raw = {
                "enabled": rnd.choice(["true", "False", "1"]),
                "level": rnd.choice(["null", "3", "x"]),
                "note": "7",
            }
            return xml_block("set_flag", {}, rnd, raw=raw)
        case "think_then_calls":
            return f"<think>\n{thought}\n</think>\n\n{calls}"
        case "empty_think":
            return f"<think>\n\n</think>\n\n{calls}"
        case "call_inside_think":
            tail = rnd.choice(["", "\nNo tool needed.", "\n" + calls])
            return f"<think>{thought}\n{block}\n</think>{tail}"
        case "call_in_unclosed_think":
            return f"<think>{thought}\n{block}"
        case "unclosed_think":
            return f"<think>{thought} still thinking"
        case "template_opened_think":
            return f"{thought}\n</think>\n\n{calls}"
        case "unclosed_block":
            return block[: -len("\n</tool_call>")]
        case "function_not_closed":
            return block.replace("</function>", "")
        case "parameter_not_closed_then_next":
            raw = {"query": "budget 2026", "top_k": "5"}
            text = xml_block("search_documents", {}, rnd, raw=raw)
            return text.replace("</parameter>", "", 1)
        case "last_parameter_not_closed":
            text = xml_block("get_invoice", {"invoice_id": "INV-7"}, rnd)
            return text.replace("</parameter>", "")
        case "bare_function":
            return rnd.choice(["", "Calling it.\n"]) + xml_block(name, args, rnd, wrapper=False)
        case "empty_function_name":
            return block.replace(f"<function={name}>", "<function=>") + rnd.choice(
                ["", "\n" + calls]
            )
        case "name_not_closed":
            return f"<tool_call>\n<function={name}\n</function>\n</tool_call>"
        case "text_before_function":
            return block.replace("<tool_call>\n", "<tool_call>\nI will call\n")
        case "text_after_function":
            return block.replace("</function>\n", "</function>\ndone\n")
        case "text_outside_parameters":
            return block.replace("</parameter>\n", "</parameter>\nnote\n", 1) if args else block
        case "duplicate_parameter":
            return xml_block("get_invoice", {}, rnd, raw={"invoice_id": "A"}).replace(
                "</function>", "<parameter=invoice_id>\nB\n</parameter>\n</function>"
            )
        case "empty_parameter_name":
            return xml_block("get_invoice", {}, rnd, raw={"": "A"})
        case "unknown_tool":
            return xml_block(rnd.choice(["send_email", "wipe"]), {"to": _word(rnd), "n": 3}, rnd)
        case "unknown_parameter":
            return xml_block("get_invoice", {}, rnd, raw={"invoice_id": "A", "verbose": "true"})
        case "unicode":
            return xml_block(
                "search_documents", {"query": " ".join(_word(rnd) for _ in range(4))}, rnd
            )
        case "tags_in_value":
            value = rnd.choice(
                ["a <tool_call> b", "a </tool_call> b", "<b>bold</b>", "x > y", "<think>"]
            )
            return xml_block("search_documents", {}, rnd, raw={"query": value})
        case "other_format":
            return hermes_block(name, args)
    raise AssertionError(kind)


HERMES_KINDS = [
    "single",
    "parallel",
    "compact",
    "prose",
    "plain_answer",
    "think_then_calls",
    "empty_think",
    "think_then_answer",
    "call_inside_think",
    "call_in_unclosed_think",
    "unclosed_think",
    "template_opened_think",
    "malformed",
    "unclosed_block",
    "nested",
    "unknown_tool",
    "tool_call_in_string",
    "think_tag_in_string",
    "non_object_arguments",
    "empty_name",
    "lone_surrogate",
    "nan",
    "duplicate_key",
    "list_in_block",
    "missing_arguments",
    "non_string_name",
    "other_format",
]
XML_KINDS = [
    "single",
    "parallel",
    "two_in_one_block",
    "compact",
    "prose",
    "plain_answer",
    "typed_values",
    "number_values",
    "union_values",
    "think_then_calls",
    "empty_think",
    "call_inside_think",
    "call_in_unclosed_think",
    "unclosed_think",
    "template_opened_think",
    "unclosed_block",
    "function_not_closed",
    "parameter_not_closed_then_next",
    "last_parameter_not_closed",
    "bare_function",
    "empty_function_name",
    "name_not_closed",
    "text_before_function",
    "text_after_function",
    "text_outside_parameters",
    "duplicate_parameter",
    "empty_parameter_name",
    "unknown_tool",
    "unknown_parameter",
    "unicode",
    "tags_in_value",
    "other_format",
]


def corpus(n: int = 6000, seed: int = 22) -> list[Case]:
    """`n` outputs, half in each format, kinds in turn, each under a random stack of
    its format."""
    rnd = random.Random(seed)
    cases: list[Case] = []
    for i in range(n):
        if i % 2 == 0:
            kind = HERMES_KINDS[(i // 2) % len(HERMES_KINDS)]
            text = _hermes_case(rnd, kind)
            stack = rnd.choice(STACKS[:4])
        else:
            kind = XML_KINDS[(i // 2) % len(XML_KINDS)]
            text = _xml_case(rnd, kind)
            stack = rnd.choice(STACKS[4:])
        cases.append(Case(text, stack, ("hermes:" if i % 2 == 0 else "xml:") + kind))
    return cases
