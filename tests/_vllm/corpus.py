"""The seeded corpus and random junk."""

from __future__ import annotations

import random

from tests._vllm import hermes_cases, xml_cases
from tests._vllm.tools import STACKS, TOOL_NAMES, Case, hermes_block, xml_block

OTHER_STACK = 0.1
"""Share of outputs read under a stack of any format, not only their own."""


def corpus(hermes: int = 6000, xml: int = 3000, seed: int = 22) -> list[Case]:
    """`hermes` Hermes and `xml` Qwen3 XML outputs, the kinds of each in turn, each under
    a random stack of its format (one in ten under any stack)."""
    rnd = random.Random(seed)
    cases: list[Case] = []
    for count, kinds, stacks, prefix in (
        (hermes, hermes_cases.KINDS, STACKS[:4], "hermes:"),
        (xml, xml_cases.KINDS, STACKS[4:], "xml:"),
    ):
        names = list(kinds)
        for i in range(count):
            name = names[i % len(names)]
            text = kinds[name](rnd)
            stack = rnd.choice(STACKS if rnd.random() < OTHER_STACK else stacks)
            cases.append(Case(text, stack, prefix + name))
    return cases


JUNK_FRAGMENTS = [
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<function=get_invoice>",
    "<function=", "</function>", "<parameter=invoice_id>", "</parameter>", "\n", " ",
    "x", ">", "{", "}", '"', "INV-1", "42", '{"name": "get_invoice", "arguments": {',
    '"invoice_id": "A"}', "NaN", "```", "[", "]", ",", "</tool_ca", "<parameter=",
]  # fmt: skip


def junk(count: int = 1500, seed: int = 7) -> list[Case]:
    """Random sequences of tags, call fragments and whole calls, under random stacks."""
    rnd = random.Random(seed)
    cases: list[Case] = []
    for _ in range(count):
        stack = rnd.choice(STACKS)
        parts = []
        for _ in range(rnd.randint(1, 12)):
            if rnd.random() < 0.25:
                name = rnd.choice(TOOL_NAMES)
                args = {"invoice_id": "A"} if name == "get_invoice" else {}
                parts.append(
                    xml_block(name, args, rnd)
                    if stack.call_format == "qwen3_xml"
                    else hermes_block(name, args)
                )
            else:
                parts.append(rnd.choice(JUNK_FRAGMENTS))
        cases.append(Case("".join(parts), stack, "junk"))
    return cases
