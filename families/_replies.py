"""The answer checks of `loragate.judge.answer` applied to a sample: the reply against
the sample's own conversation (echo sources), a text reply that should not be a call
written as text, and data in a reply that no tool returned.

Private to the families: each family module calls these on its `Sample`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from loragate.calls.checks import Call, call_attempt
from loragate.families._family import Sample
from loragate.formats.records import ReasonCode, Verdict
from loragate.judge.answer import answer_problem, conversation_sources, quoted
from loragate.judge.claims import invented_result, unknown_data
from loragate.judge.figures import date_values, number_values


def sample_sources(sample: Sample[Any]) -> tuple[tuple[str, str], ...]:
    """The echo sources of a sample: its conversation and the system prompt."""
    msgs = tuple((m.role, m.content) for m in sample.entry.messages)
    return conversation_sources(msgs, sample.ctx.system_prompt)


def reply_problem(sample: Sample[Any]) -> Verdict | None:
    """`answer_problem` on the sample's answer text against its own conversation."""
    return answer_problem(sample.parse.answer, sample_sources(sample))


def text_reply_problem(sample: Sample[Any]) -> Verdict | None:
    """The first problem of a turn that should be a text reply: `unparseable` for a call
    written as text (`call_attempt`), then `reply_problem`."""
    attempt = call_attempt(sample.parse, sample.ctx.toolset)
    if attempt is not None:
        return Verdict.fail(
            ReasonCode.unparseable, f"a call to {quoted(attempt)} written without <tool_call> tags"
        )
    return reply_problem(sample)


@lru_cache(maxsize=4096)
def _conversation_numbers(texts: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for t in texts:
        out |= number_values(t)
    return frozenset(out)


@lru_cache(maxsize=4096)
def _conversation_dates(texts: tuple[str, ...]) -> frozenset[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for t in texts:
        out |= date_values(t)
    return frozenset(out)


def unknown_data_problem(sample: Sample[Any]) -> Verdict | None:
    """`invented_result` when a text reply states an amount, time, rate, id or date that
    the conversation never held: after a failed call, data the call did not return."""
    texts = _argument_texts(sample)
    found = unknown_data(
        sample.parse.answer, set(_conversation_numbers(texts)), set(_conversation_dates(texts))
    )
    if found is None:
        return None
    return Verdict.fail(
        ReasonCode.invented_result,
        f"the reply states data that no tool returned: {quoted(found)}",
    )


def _argument_texts(sample: Sample[Any]) -> tuple[str, ...]:
    out = [sample.ctx.system_prompt or ""]
    for m in sample.entry.messages:
        out.append(m.content or "")
        for tc in m.tool_calls or []:
            args = tc.function.arguments
            out.append(args if isinstance(args, str) else _dumps(args))
    return tuple(out)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return ""


def invented_result_problem(sample: Sample[Any], calls: Sequence[Call]) -> Verdict | None:
    """`invented_result` when prose beside this turn's calls states their result."""
    answer = sample.parse.answer
    if not calls or not answer.strip():
        return None
    known = set(_conversation_numbers(_argument_texts(sample)))
    for c in calls:
        known |= number_values(_dumps(c.arguments))
    read_only = sample.ctx.policy.read_only_tools or ()
    found = invented_result(
        answer,
        known,
        lookup=any(c.name in read_only for c in calls),
        after_result=any(m.role == "tool" for m in sample.entry.messages),
    )
    if found is None:
        return None
    return Verdict.fail(
        ReasonCode.invented_result,
        f"the text beside the call already states its result: {quoted(found)}",
    )


__all__ = [
    "invented_result_problem",
    "reply_problem",
    "sample_sources",
    "text_reply_problem",
    "unknown_data_problem",
]
