"""Hermes-format outputs of every kind: one function a kind, each given a seeded
`random.Random` and returning the text."""

from __future__ import annotations

import json
import random

from tests._vllm.shared_cases import add_shared_kinds, registry
from tests._vllm.tools import (
    THOUGHTS,
    TOOL_NAMES,
    call,
    calls_text,
    hermes_block,
    hermes_body,
    prose,
    word,
    wrap,
    xml_block,
)

KINDS, kind = registry()
add_shared_kinds(KINDS, "hermes")


def _block(rnd: random.Random) -> str:
    return hermes_block(*call(rnd))


def _calls(rnd: random.Random, low: int = 1, high: int = 3) -> str:
    return calls_text(rnd, "hermes", rnd.randint(low, high))


# -- well-formed calls, prose, reasoning -------------------------------------------------


@kind
def compact(rnd: random.Random) -> str:
    return hermes_block(*call(rnd), compact=True)


@kind
def prose_around(rnd: random.Random) -> str:
    return f"{prose(rnd)}\n{_calls(rnd)}\n{prose(rnd)}"


@kind
def extra_keys(rnd: random.Random) -> str:
    name, args = call(rnd)
    return wrap(json.dumps({"id": "call_1", "type": "function", "name": name, "arguments": args}))


@kind
def think_then_answer(rnd: random.Random) -> str:
    return f"<think>{rnd.choice(THOUGHTS)}</think>\n{prose(rnd)}"


@kind
def call_inside_think(rnd: random.Random) -> str:
    tail = rnd.choice(["", "\nNo tool needed.", "\n" + _calls(rnd)])
    return f"<think>{rnd.choice(THOUGHTS)} {_block(rnd)} maybe</think>{tail}"


@kind
def call_in_unclosed_think(rnd: random.Random) -> str:
    return f"<think>{rnd.choice(THOUGHTS)}\n{_block(rnd)}\nthen"


@kind
def unclosed_think(rnd: random.Random) -> str:
    return f"<think>{rnd.choice(THOUGHTS)} and more"


@kind
def think_tags_in_block(rnd: random.Random) -> str:
    name, args = call(rnd)
    tag = rnd.choice(["</think>", "<think>", "</think>\n"])
    return f"<tool_call>\n{tag}{hermes_body(name, args)}\n</tool_call>"


@kind
def nested(rnd: random.Random) -> str:
    depth = rnd.randint(2, 30)
    value: object = {"y": [True, None]}
    for _ in range(depth):
        value = rnd.choice([[value], {"x": value}])
    return hermes_block("search_documents", {"query": "q", "filters": {"year": 2026, "x": value}})


@kind
def unknown_tool(rnd: random.Random) -> str:
    return hermes_block(rnd.choice(["send_email", "delete_everything"]), {"to": word(rnd)})


@kind
def unicode_values(rnd: random.Random) -> str:
    return hermes_block(
        "search_documents", {"query": " ".join(word(rnd) for _ in range(5)), "top_k": 3}
    )


@kind
def unicode_name(rnd: random.Random) -> str:
    return hermes_block(rnd.choice(["get_invöice", "获取发票", "get invoice"]), {"a": 1})


# -- malformed JSON ----------------------------------------------------------------------


@kind
def malformed(rnd: random.Random) -> str:
    good = hermes_body(*call(rnd))
    bad = rnd.choice([good[:-1], good.replace('"', "'"), good[:-1] + ",}", good[: len(good) // 2]])
    return wrap(bad)


@kind
def trailing_comma(rnd: random.Random) -> str:
    name, args = call(rnd)
    body = hermes_body(name, args)
    return wrap(body[:-2] + rnd.choice(["},}", "}, }", ",}"]) if body.endswith("}}") else body)


@kind
def python_literals(rnd: random.Random) -> str:
    name, args = call(rnd)
    text = repr({"name": name, "arguments": args})
    return wrap(text if rnd.random() < 0.5 else text.replace("'", '"'))


@kind
def json_comment(rnd: random.Random) -> str:
    name, args = call(rnd)
    return wrap(f'{{"name": "{name}", // the tool\n"arguments": {json.dumps(args)}}}')


@kind
def extra_text_in_block(rnd: random.Random) -> str:
    return wrap(hermes_body(*call(rnd)) + rnd.choice([" done", "\nI called it.", "}"]))


@kind
def several_values(rnd: random.Random) -> str:
    return wrap(hermes_body(*call(rnd)) + rnd.choice(["\n", " ", ", "]) + hermes_body(*call(rnd)))


@kind
def control_character(rnd: random.Random) -> str:
    char = rnd.choice(["\t", "\x01", "\n"])
    return wrap(f'{{"name": "search_documents", "arguments": {{"query": "a{char}b"}}}}')


@kind
def odd_whitespace(rnd: random.Random) -> str:
    space = rnd.choice(["\u00a0", "\u3000", "\u2028", "\x0b", "\x1c", "\ufeff", "\u200b"])
    body = hermes_body(*call(rnd))
    return f"<tool_call>{space}{body}{rnd.choice([space, ''])}\n</tool_call>"


@kind
def empty_block(rnd: random.Random) -> str:
    return rnd.choice(["<tool_call></tool_call>", "<tool_call>\n \n</tool_call>"]) + rnd.choice(
        ["", "\n" + _block(rnd)]
    )


# -- call shapes -------------------------------------------------------------------------


@kind
def non_object_arguments(rnd: random.Random) -> str:
    return hermes_block(call(rnd)[0], rnd.choice([42, "invoice 7", [1, 2], None, True, 1.5, []]))


@kind
def string_arguments(rnd: random.Random) -> str:
    name, args = call(rnd)
    text = json.dumps(args, ensure_ascii=False)
    return hermes_block(name, rnd.choice([text, text.replace('"', "'"), "", " ", "{}"]))


@kind
def empty_name(rnd: random.Random) -> str:
    return hermes_block(rnd.choice(["", " ", "\n"]), call(rnd)[1])


@kind
def name_whitespace(rnd: random.Random) -> str:
    name, args = call(rnd)
    return hermes_block(rnd.choice([f" {name}", f"{name} ", f"\n{name}\t"]), args)


@kind
def non_string_name(rnd: random.Random) -> str:
    return wrap(json.dumps({"name": rnd.choice([7, None, ["a"], True]), "arguments": {}}))


@kind
def missing_arguments(rnd: random.Random) -> str:
    return wrap(json.dumps({"name": call(rnd)[0]}))


@kind
def null_arguments(rnd: random.Random) -> str:
    return wrap(json.dumps({"name": call(rnd)[0], "arguments": rnd.choice([None, {}, ""])}))


@kind
def missing_name(rnd: random.Random) -> str:
    return wrap(json.dumps({"arguments": call(rnd)[1]}))


@kind
def parameters_key(rnd: random.Random) -> str:
    return wrap(hermes_body(*call(rnd), key="parameters"))


@kind
def openai_wrapper(rnd: random.Random) -> str:
    name, args = call(rnd)
    inner = {"name": name, "arguments": rnd.choice([args, json.dumps(args)])}
    return wrap(json.dumps({"type": "function", "function": inner}, ensure_ascii=False))


@kind
def list_in_block(rnd: random.Random) -> str:
    items = [{"name": n, "arguments": a} for n, a in (call(rnd) for _ in range(rnd.randint(1, 3)))]
    return wrap(json.dumps(items, ensure_ascii=False))


@kind
def fence_in_block(rnd: random.Random) -> str:
    lang = rnd.choice(["json", "", "JSON"])
    return wrap(f"```{lang}\n{hermes_body(*call(rnd))}\n```")


@kind
def bare_json(rnd: random.Random) -> str:
    body = hermes_body(*call(rnd))
    return rnd.choice(
        [body, f"```json\n{body}\n```", f"{body}\n{prose(rnd)}", f"[{body}]", f"{body}</tool_call>"]
    )


@kind
def bare_json_after_prose(rnd: random.Random) -> str:
    return f"{prose(rnd)} {hermes_body(*call(rnd))}"


@kind
def duplicate_key(rnd: random.Random) -> str:
    body = rnd.choice(
        [
            '{"name": "get_invoice", "arguments": {"invoice_id": "A", "invoice_id": "B"}}',
            '{"name": "send", "name": "get_invoice", "arguments": {"invoice_id": "C"}}',
            '{"name": "get_invoice", "arguments": {}, "arguments": {"invoice_id": "D"}}',
        ]
    )
    return wrap(body)


# -- numbers -------------------------------------------------------------------------------


@kind
def nan(rnd: random.Random) -> str:
    value = rnd.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
    return wrap(
        f'{{"name": "convert_currency", "arguments": {{"amount": {value}, '
        '"from_currency": "EUR", "to_currency": "CHF"}}'
    )


@kind
def big_numbers(rnd: random.Random) -> str:
    value = rnd.choice(["12345678901234567890123", "1" * 40, "1e308", "-0", "0.1e-320", "5E2"])
    return wrap(f'{{"name": "search_documents", "arguments": {{"query": "q", "top_k": {value}}}}}')


@kind
def lone_surrogate(rnd: random.Random) -> str:
    escape = rnd.choice(["\\ud800", "\\udc00x", "\\ud83d", "\\ud83d\\ude00"])
    return wrap(f'{{"name": "search_documents", "arguments": {{"query": "a{escape}b"}}}}')


# -- tags in odd places ----------------------------------------------------------------------


@kind
def unclosed_block(rnd: random.Random) -> str:
    name, args = call(rnd)
    tail = rnd.choice(["", "\n", " ", "\nMore text"])
    return f"{_calls(rnd, 0, 2)}\n<tool_call>\n{hermes_body(name, args)}{tail}"


@kind
def partial_end_tag(rnd: random.Random) -> str:
    cut = rnd.choice(["</tool_ca", "</tool_call", "</", "</tool_call\n", "</tool"])
    return f"<tool_call>\n{hermes_body(*call(rnd))}\n{cut}"


@kind
def tool_call_in_string(rnd: random.Random) -> str:
    tag = rnd.choice(["<tool_call>", "<tool_call> x", "<function=f>", "</function>"])
    return hermes_block("search_documents", {"query": f"what is {tag} syntax"})


@kind
def close_tag_in_string(rnd: random.Random) -> str:
    body = hermes_body("search_documents", {"query": "the </tool_call> tag", "top_k": 2})
    return wrap(body) + rnd.choice(["", "\n" + _block(rnd)])


@kind
def think_tag_in_string(rnd: random.Random) -> str:
    tag = rnd.choice(["</think>", "<think>"])
    return hermes_block("search_documents", {"query": f"a {tag} b"})


@kind
def tool_call_inside_block(rnd: random.Random) -> str:
    first, second = hermes_body(*call(rnd)), hermes_body(*call(rnd))
    return rnd.choice(
        [
            f"<tool_call>\n{first}\n<tool_call>\n{second}\n</tool_call>",
            f"<tool_call>\n<tool_call>\n{first}\n</tool_call>",
            f"<tool_call>\n{first}\n<tool_call>\n{second}",
        ]
    )


@kind
def stray_close(rnd: random.Random) -> str:
    return rnd.choice(["</tool_call>\n", f"{prose(rnd)} </tool_call>"]) + rnd.choice(
        ["", _block(rnd)]
    )


@kind
def tag_in_prose(rnd: random.Random) -> str:
    return f"Use the <tool_call> tag to call {rnd.choice(TOOL_NAMES)}."


@kind
def other_format(rnd: random.Random) -> str:
    return xml_block(*call(rnd), rnd, wrapper=rnd.random() < 0.7)


@kind
def mixed_formats(rnd: random.Random) -> str:
    parts = [_block(rnd), xml_block(*call(rnd), rnd)]
    rnd.shuffle(parts)
    return "\n".join(parts)
