"""Split a generated text into reasoning and content the way a serving stack does.

A server such as `vllm serve --reasoning-parser NAME` hands its tool parser only the
*content* of an output; what it calls reasoning is returned beside the answer and
never executed. Which text that is depends on the reasoning parser, so a run names
the stack it models (`reasoning_parser` in the run config) and the parser judges the
content that stack would execute. Measured on vLLM 0.32 (its own parsers, run by
`tests/test_vllm_agreement.py`):

`qwen3` (vLLM's Qwen3 parser engine) with thinking on (`enable_thinking` true or not
passed, vLLM's default): the output starts *inside* reasoning. `</think>` ends it; so
does a `<tool_call>` (an implicit end: the call and everything after it is content,
so a call drafted inside `<think>` is executed). `<think>` tags inside reasoning are
dropped; after the end every `</think>` is dropped (also inside a call's JSON) and a
later `<think>` is plain text. With neither `</think>` nor `<tool_call>` the whole
output is reasoning: the client sees no content at all.

`qwen3` with thinking off (`enable_thinking: false`): no reasoning; the text is
content as written (think tags included) for the Hermes tool parser. vLLM's Qwen3 XML
tool parser still drops every `</think>` from the content.

`deepseek_r1`: the text after the first `<think>` (or all of it) up to the first
`</think>` is reasoning, the rest content; text before `<think>` is lost. Without a
`</think>` everything is reasoning. A call inside reasoning is never executed.

`none` (no reasoning parser): everything is content; a call anywhere is executed.

Thinking unknown (`thinking=None`: loose generations scored without a run config):
a `qwen3` output that holds `<think>` or `</think>` is read as thinking on, any other
as thinking off. A server decides per request, not per output; this is the one named
difference (`docs/call-formats.md`), so that outputs with and without reasoning score
as their writer meant them.

Independently of the stack, `regions` are the spans the model itself wrote as
reasoning (`<think>` ... `</think>`, an unclosed `<think>` to the end, a `</think>`
with no `<think>` before it closing reasoning that the template opened, and with a
prompt that opened reasoning the text up to the first `</think>`): calls written there
are counted as `calls_in_reasoning` whichever stack runs them. `open_at_end` is true
when the output stops inside reasoning (in the model's regions or in the stack's
reading), the condition of `truncated_reasoning` when the token limit was hit.

Every function here is a few `str.find` loops: linear in the text, never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "REASONING_PARSERS",
    "ReasoningParserName",
    "ReasoningSplit",
    "reasoning_prefix",
    "split_reasoning",
    "thinking_of",
]

ReasoningParserName = Literal["qwen3", "deepseek_r1", "none"]
REASONING_PARSERS: tuple[str, ...] = get_args(ReasoningParserName)

_LEADING_SPACE = re.compile(r"\s*")
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
TOOL_OPEN = "<tool_call>"


@dataclass(frozen=True, slots=True)
class ReasoningSplit:
    """One output as a stack reads it."""

    content: str
    """What the stack hands its tool parser and shows as the answer."""
    reasoning: str
    """What the stack returns as reasoning (never executed)."""
    regions: tuple[str, ...]
    """The spans the model wrote as reasoning (see the module docstring)."""
    open_at_end: bool
    """The output stops inside reasoning."""


def thinking_of(text: str, thinking: bool | None) -> bool:
    """The thinking switch a `qwen3` stack applies to `text`: the given one, or when
    unknown (None) whether the text writes reasoning tags."""
    if thinking is not None:
        return thinking
    return THINK_OPEN in text or THINK_CLOSE in text


def written_regions(text: str, *, opened: bool = False) -> tuple[tuple[str, ...], bool]:
    """The spans the model wrote as reasoning and whether the text ends inside one.

    `opened`: the prompt ended inside reasoning (a template that writes `<think>` into
    the generation prompt), so the text starts inside it.
    """
    first_open = text.find(THINK_OPEN)
    first_close = text.find(THINK_CLOSE)
    if first_open < 0 and first_close < 0:
        return ((text,), True) if opened and text else ((), opened)
    regions: list[str] = []
    pos = 0
    if first_close >= 0 and (opened or first_open < 0 or first_close < first_open):
        regions.append(text[:first_close])
        pos = first_close + len(THINK_CLOSE)
    elif opened:
        # `<think>` inside prompt-opened reasoning: one region up to its close.
        end = text.find(THINK_CLOSE)
        if end < 0:
            return (text,), True
        regions.append(text[:end])
        pos = end + len(THINK_CLOSE)
    while True:
        start = text.find(THINK_OPEN, pos)
        if start < 0:
            return tuple(regions), False
        end = text.find(THINK_CLOSE, start + len(THINK_OPEN))
        if end < 0:
            regions.append(text[start + len(THINK_OPEN) :])
            return tuple(regions), True
        regions.append(text[start + len(THINK_OPEN) : end])
        pos = end + len(THINK_CLOSE)


def _qwen3_thinking(text: str) -> tuple[str, str, bool]:
    """(content, reasoning, ended) of vLLM's Qwen3 engine starting inside reasoning.

    Reasoning ends at the first `</think>` or `<tool_call>`; every `<think>` before it
    is dropped. Two `find` calls and one `replace`: linear in the text."""
    close = text.find(THINK_CLOSE)
    tool = text.find(TOOL_OPEN, 0, close if close >= 0 else len(text))
    if tool >= 0:
        return text[tool:].replace(THINK_CLOSE, ""), text[:tool].replace(THINK_OPEN, ""), True
    if close < 0:
        return "", text.replace(THINK_OPEN, ""), False
    rest = text[close + len(THINK_CLOSE) :]
    return rest.replace(THINK_CLOSE, ""), text[:close].replace(THINK_OPEN, ""), True


def _deepseek_r1(text: str) -> tuple[str, str, bool]:
    """(content, reasoning, ended) of vLLM's `BaseThinkingReasoningParser`."""
    before, tag, after = text.partition(THINK_OPEN)
    body = after if tag else before
    reasoning, close, content = body.partition(THINK_CLOSE)
    if not close:
        return "", body, False
    return content, reasoning, True


def split_reasoning(
    text: str,
    parser: ReasoningParserName = "qwen3",
    *,
    thinking: bool | None = None,
    opened: bool = False,
) -> ReasoningSplit:
    """`text` as the stack `parser` reads it (see the module docstring).

    `thinking`: the request's `enable_thinking` as the stack sees it (None: unknown,
    read from the text); `opened`: the prompt ended inside reasoning.
    """
    if parser == "deepseek_r1":
        content, reasoning, ended = _deepseek_r1(text)
    elif parser == "qwen3" and (
        thinking if thinking is not None else opened or thinking_of(text, None)
    ):
        content, reasoning, ended = _qwen3_thinking(text)
    else:
        content, reasoning, ended = text, "", True
    if THINK_OPEN not in text and THINK_CLOSE not in text and not opened:
        return ReasoningSplit(content, reasoning, (), not ended)
    regions, inside = written_regions(text, opened=opened)
    return ReasoningSplit(content, reasoning, regions, inside or not ended)


def reasoning_prefix(
    text: str, parser: ReasoningParserName = "qwen3", *, thinking: bool | None = None
) -> int:
    """How many leading characters of `text` are reasoning, tags included (0: none):
    what the stack reads as reasoning before its content starts, or with no reasoning
    parser (or thinking off) a leading `<think>` block or text up to a lone `</think>`.
    Reasoning tokens are counted on this prefix (a runner tokenizes it; a summary
    without counts takes its share of the characters)."""
    if parser == "deepseek_r1":
        opened = text.find(THINK_OPEN)
        close = text.find(THINK_CLOSE, opened + len(THINK_OPEN) if opened >= 0 else 0)
        return close + len(THINK_CLOSE) if close >= 0 else len(text)
    if parser == "qwen3" and (thinking if thinking is not None else thinking_of(text, None)):
        _, _, ended = _qwen3_thinking(text)
        if not ended:
            return len(text)
        at_tool = text.find(TOOL_OPEN)
        at_close = text.find(THINK_CLOSE)
        if at_tool >= 0 and (at_close < 0 or at_tool < at_close):
            return at_tool
        return at_close + len(THINK_CLOSE)
    stripped = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    if text.startswith(THINK_OPEN, stripped):
        close = text.find(THINK_CLOSE, stripped)
        return close + len(THINK_CLOSE) if close >= 0 else len(text)
    close = text.find(THINK_CLOSE)
    if close >= 0 and THINK_OPEN not in text[:close]:
        return close + len(THINK_CLOSE)
    return 0
