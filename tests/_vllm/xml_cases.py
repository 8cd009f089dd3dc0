"""Qwen3 XML outputs of every kind: one function a kind, each given a seeded
`random.Random` and returning the text."""

from __future__ import annotations

import json
import random

from tests._vllm.shared_cases import add_shared_kinds, registry
from tests._vllm.tools import (
    THOUGHTS,
    call,
    calls_text,
    hermes_block,
    hermes_body,
    prose,
    word,
    xml_block,
)

KINDS, kind = registry()
add_shared_kinds(KINDS, "qwen3_xml")


def _block(rnd: random.Random, **options: bool) -> str:
    return xml_block(*call(rnd), rnd, **options)


def _calls(rnd: random.Random, low: int = 1, high: int = 3) -> str:
    return calls_text(rnd, "qwen3_xml", rnd.randint(low, high))


# -- well-formed calls, prose, reasoning -------------------------------------------------


@kind
def two_in_one_block(rnd: random.Random) -> str:
    first, other = _block(rnd, wrapper=False), _block(rnd, wrapper=False)
    return f"<tool_call>\n{first}\n{other}\n</tool_call>"


@kind
def compact(rnd: random.Random) -> str:
    return _block(rnd, newlines=False)


@kind
def prose_around(rnd: random.Random) -> str:
    return f"{prose(rnd)}\n\n{_calls(rnd)}" + rnd.choice(["", f"\n{prose(rnd)}"])


@kind
def think_then_answer(rnd: random.Random) -> str:
    return f"<think>{rnd.choice(THOUGHTS)}</think>\n{prose(rnd)}" + rnd.choice(["", "</think>"])


@kind
def call_inside_think(rnd: random.Random) -> str:
    tail = rnd.choice(["", "\nNo tool needed.", "\n" + _calls(rnd)])
    return f"<think>{rnd.choice(THOUGHTS)}\n{_block(rnd)}\n</think>{tail}"


@kind
def call_in_unclosed_think(rnd: random.Random) -> str:
    return f"<think>{rnd.choice(THOUGHTS)}\n{_block(rnd)}"


@kind
def unclosed_think(rnd: random.Random) -> str:
    return f"<think>{rnd.choice(THOUGHTS)} still thinking"


@kind
def think_close_in_content(rnd: random.Random) -> str:
    return f"{prose(rnd)}</think>{rnd.choice(['', ' ok'])}\n{_calls(rnd)}\n</think>{prose(rnd)}"


# -- values ------------------------------------------------------------------------------


@kind
def typed_values(rnd: random.Random) -> str:
    raw = {
        "query": rnd.choice(["plain", "  spaced  ", "multi\nline", "42", "true", "null"]),
        "top_k": rnd.choice(["5", " 7 ", "3.0", "1e2", "five", "-2", "[1]"]),
        "exact": rnd.choice(["true", "True", "1", "false", "0", "yes", "null"]),
        "collections": rnd.choice(['["a", "b"]', "[]", "a, b", '"a"', "null", "[1e999]"]),
        "filters": rnd.choice(['{"year": 2026}', "{}", "year=2026", "[1,2]", "3", "{'a': 1}"]),
    }
    return xml_block("search_documents", {}, rnd, raw=raw)


@kind
def number_values(rnd: random.Random) -> str:
    raw = {
        "amount": rnd.choice(
            ["12500", "12500.50", "3.0", "1e3", "-0.5", "inf", "NaN", "12'500", "1_000", "1e400"]
        ),
        "from_currency": rnd.choice(["EUR", "chf", "XXX"]),
        "to_currency": "CHF",
        "date": rnd.choice(["null", "None", "2026-11-16", ""]),
    }
    return xml_block("convert_currency", {}, rnd, raw=raw)


@kind
def union_values(rnd: random.Random) -> str:
    raw = {
        "enabled": rnd.choice(["true", "False", "1"]),
        "level": rnd.choice(["null", "3", "x", "3.5"]),
        "note": rnd.choice(["7", "null", '{"a": 1}']),
    }
    return xml_block("set_flag", {}, rnd, raw=raw)


@kind
def nested_values(rnd: random.Random) -> str:
    raw = {
        "title": word(rnd),
        "priority": rnd.choice(["1", "2.0", "high", "null"]),
        "estimate": rnd.choice(["2", "2.5", "two"]),
        "due": rnd.choice(["null", "2026-12-01", ""]),
        "assignee": rnd.choice(['{"id": "7", "email": "a@b.ch"}', '{"id": 7}', "7"]),
        "items": rnd.choice(['[{"sku": "A", "qty": "2"}]', "[]", '[{"qty": 1.0}]']),
        "labels": rnd.choice(['["x", 1]', '"x"', "[]"]),
    }
    return xml_block("create_ticket", {}, rnd, raw=raw)


@kind
def string_value_encoding_object(rnd: random.Random) -> str:
    raw = {"query": json.dumps({"q": word(rnd), "k": 3}), "top_k": "2"}
    return xml_block("search_documents", {}, rnd, raw=raw)


@kind
def unicode_values(rnd: random.Random) -> str:
    return xml_block("search_documents", {"query": " ".join(word(rnd) for _ in range(4))}, rnd)


@kind
def tags_in_value(rnd: random.Random) -> str:
    value = rnd.choice(
        ["a <tool_call> b", "a </tool_call> b", "<b>bold</b>", "x > y", "<think>", "</think>"]
    )
    return xml_block("search_documents", {}, rnd, raw={"query": value})


@kind
def function_tag_in_value(rnd: random.Random) -> str:
    value = rnd.choice(["<function=get_invoice>", "call <function=x> now", "</function"])
    return xml_block("search_documents", {}, rnd, raw={"query": value, "top_k": "1"})


@kind
def spaced_parameter_tags(rnd: random.Random) -> str:
    opening = rnd.choice(["< parameter = invoice_id >", "<parameter= invoice_id>"])
    closing = rnd.choice(["</ parameter >", "</parameter >", "< /parameter>"])
    return f"<tool_call>\n<function=get_invoice>\n{opening}\nINV-1\n{closing}\n</function>\n</tool_call>"


# -- malformed calls ---------------------------------------------------------------------


@kind
def unclosed_block(rnd: random.Random) -> str:
    return _block(rnd)[: -len("\n</tool_call>")] + rnd.choice(["", "\n", "\nmore"])


@kind
def partial_end_tag(rnd: random.Random) -> str:
    cut = rnd.choice(["</tool_ca", "</function", "</", "</funct"])
    text = _block(rnd)
    return text[: text.index("</function>")] + cut


@kind
def function_not_closed(rnd: random.Random) -> str:
    return _block(rnd).replace("</function>", "")


@kind
def parameter_not_closed_then_next(rnd: random.Random) -> str:
    text = xml_block("search_documents", {}, rnd, raw={"query": "budget 2026", "top_k": "5"})
    return text.replace("</parameter>", "", 1)


@kind
def last_parameter_not_closed(rnd: random.Random) -> str:
    return xml_block("get_invoice", {"invoice_id": "INV-7"}, rnd).replace("</parameter>", "")


@kind
def bare_function(rnd: random.Random) -> str:
    return rnd.choice(["", "Calling it.\n"]) + _block(rnd, wrapper=False)


@kind
def empty_function_name(rnd: random.Random) -> str:
    name, args = call(rnd)
    text = xml_block(name, args, rnd).replace(f"<function={name}>", "<function=>")
    return text + rnd.choice(["", "\n" + _calls(rnd)])


@kind
def whitespace_function_name(rnd: random.Random) -> str:
    name, args = call(rnd)
    spaced = rnd.choice([" ", "\n", f" {name} ", f"\n{name}\n"])
    return xml_block(name, args, rnd).replace(f"<function={name}>", f"<function={spaced}>")


@kind
def json_body(rnd: random.Random) -> str:
    name, args = call(rnd)
    body = rnd.choice(
        [
            hermes_body(name, args),
            hermes_body(name, args, key="parameters"),
            json.dumps({"name": name, **args}),
            json.dumps({"name": name, "arguments": json.dumps(args)}),
            json.dumps({"name": "", "arguments": args}),
            json.dumps({"name": name, "arguments": {"amount": float("nan")}}),
        ]
    )
    opening = rnd.choice(["<function=>", "<function= >", "<function=\n>"])
    return f"<tool_call>\n{opening}\n{body}\n</function>\n</tool_call>"


@kind
def json_body_odd_name(rnd: random.Random) -> str:
    name = rnd.choice([7, 0, None, ["x"], True, False, {}, " ", "get_invoice"])
    opening = rnd.choice(["<function=>", "<function= >"])
    body = json.dumps({"name": name, "arguments": {"invoice_id": "A"}})
    return f"<tool_call>\n{opening}\n{body}\n</function>"


@kind
def name_not_closed(rnd: random.Random) -> str:
    name = call(rnd)[0]
    return rnd.choice(
        [
            f"<tool_call>\n<function={name}\n</function>\n</tool_call>",
            f"<tool_call>\n<function={name}\n<parameter=invoice_id>A</parameter>",
            f"<function={name}",
        ]
    )


@kind
def text_before_function(rnd: random.Random) -> str:
    return _block(rnd).replace("<tool_call>\n", "<tool_call>\nI will call\n")


@kind
def text_after_function(rnd: random.Random) -> str:
    return _block(rnd).replace("</function>\n", "</function>\ndone\n")


@kind
def text_outside_parameters(rnd: random.Random) -> str:
    text = xml_block("get_invoice", {"invoice_id": "INV-9"}, rnd)
    return text.replace("</parameter>\n", "</parameter>\nnote\n", 1)


@kind
def duplicate_parameter(rnd: random.Random) -> str:
    return xml_block("get_invoice", {}, rnd, raw={"invoice_id": "A"}).replace(
        "</function>", "<parameter=invoice_id>\nB\n</parameter>\n</function>"
    )


@kind
def empty_parameter_name(rnd: random.Random) -> str:
    return xml_block("get_invoice", {}, rnd, raw={"": "A", "invoice_id": "B"})


@kind
def parameter_outside_function(rnd: random.Random) -> str:
    return f"<parameter=invoice_id>A</parameter>\n{_block(rnd)}"


@kind
def nested_tool_call_tags(rnd: random.Random) -> str:
    block = _block(rnd)
    return rnd.choice(
        [block.replace("<tool_call>", "<tool_call><tool_call>", 1), f"<tool_call>{block}"]
    )


@kind
def empty_block(rnd: random.Random) -> str:
    return rnd.choice(["<tool_call></tool_call>", "<tool_call>\n</tool_call>"]) + rnd.choice(
        ["", "\n" + _block(rnd)]
    )


@kind
def unknown_tool(rnd: random.Random) -> str:
    return xml_block(rnd.choice(["send_email", "wipe"]), {"to": word(rnd), "n": 3}, rnd)


@kind
def unknown_parameter(rnd: random.Random) -> str:
    return xml_block("get_invoice", {}, rnd, raw={"invoice_id": "A", "verbose": "true"})


# -- the other format -------------------------------------------------------------------------


@kind
def hermes_block_in_run(rnd: random.Random) -> str:
    parts = [_block(rnd), hermes_block(*call(rnd))]
    rnd.shuffle(parts)
    return "\n".join(parts)


@kind
def other_format(rnd: random.Random) -> str:
    return hermes_block(*call(rnd))
