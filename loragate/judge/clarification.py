"""Asking the user for a missing value: the checks a `clarify` entry and an episode's
scripted user share, so a question is recognised the same way in both.

`question_problem` judges a text reply that should ask for the missing value (a call
written as text is `unparseable`; then the shared answer check; a reply with no asking
sentence, one whose question mentions none of `question_mentions`, or one whose every
question asks for something else - a pattern of `question_forbids` - is
`no_question`); `unasked_call_problem` judges a call made before the value was given;
`clarify_spec_problems` checks a (`tool`, `missing`) pair at load time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loragate.calls.checks import Call, asks_to_confirm, call_attempt, fail, short
from loragate.calls.tools import Toolset
from loragate.formats.records import ParseResult, ReasonCode, Verdict
from loragate.judge.answer import answer_problem
from loragate.judge.language import reply_languages
from loragate.judge.questions import asking_sentences, user_words_of
from loragate.judge.text import missing_groups, sentences

_EXCLAIMS = re.compile(r"!\W*$")


def _question_contexts(answer: str, asking: list[str]) -> list[tuple[str, str]]:
    """(asking sentence, its context) pairs: the sentence with the one before it, where
    the question names what it asks for ("I can't convert without the currency. Which
    one is it?"). An exclamation before the question is no part of it ("What a saga
    with the agreed amount! Which account should I pay from?" does not ask for the
    amount)."""
    parts = sentences(answer)
    out: list[tuple[str, str]] = []
    for i, s in enumerate(parts):
        if s in asking:
            before = parts[i - 1] if i > 0 else ""
            if before and before not in asking and not _EXCLAIMS.search(before):
                out.append((s, f"{before} {s}"))
            else:
                out.append((s, s))
    return out


def _given(value: Any) -> bool:
    """True when a value is a real value, not a placeholder for "not given"."""
    return value is not None and not (isinstance(value, (str, list, dict)) and not value)


def clarify_spec_problems(toolset: Toolset, tool: str, missing: Sequence[str]) -> list[str]:
    """Load-time problems of a (`tool`, `missing`) pair: every missing value must be a
    parameter of the tool."""
    spec = toolset.by_name.get(tool)
    if spec is None:
        return []
    props = spec.function.parameters.get("properties", {})
    if not isinstance(props, dict):
        return []
    unknown = [m for m in missing if m not in props]
    if not unknown:
        return []
    return [
        f"`missing` names {', '.join(unknown)}, not parameters of {tool!r} (it has "
        f"{', '.join(props) or 'none'}); list parameters of `tool`"
    ]


def question_problem(
    parse: ParseResult,
    toolset: Toolset,
    sources: Sequence[tuple[str, str]],
    user_texts: Sequence[str],
    *,
    question_mentions: Sequence[str] = (),
    missing: Sequence[str] = (),
    question_forbids: Sequence[str] = (),
) -> Verdict | None:
    """The failing verdict of a text reply that should ask the user for a missing value,
    or None when it asks (see the module doc for the order of the checks).

    `sources` are the (name, text) pairs the reply must not merely copy; `user_texts`
    the user's messages (a yes/no question made only of their words does not ask). An
    asking sentence that holds a pattern of `question_forbids` asks for something else
    (a value the user gave: "which currency should I convert the 1'200 into?" when the
    target was given and the source is missing).
    """
    attempt = call_attempt(parse, toolset)
    if attempt is not None:
        return fail(
            ReasonCode.unparseable, f"a call to {short(attempt)} written without <tool_call> tags"
        )
    bad = answer_problem(parse.answer, sources)
    if bad is not None:
        return bad
    langs = reply_languages(parse.answer)
    asking = asking_sentences(parse.answer, user_words_of(list(user_texts)), langs=langs)
    if not asking:
        return fail(ReasonCode.no_question, "the reply asks nothing")
    if not question_mentions and not question_forbids:
        return None
    about = f" {', '.join(missing)}" if missing else " value"
    contexts = _question_contexts(parse.answer, asking)
    if question_mentions and all(
        missing_groups([list(question_mentions)], where, langs) for _, where in contexts
    ):
        return fail(
            ReasonCode.no_question,
            f"the question is not about the missing{about}: it mentions none of "
            f"{', '.join(question_mentions)}",
        )
    forbidden = [list(question_forbids)]
    if question_forbids and all(
        not missing_groups(forbidden, s, langs)
        or (question_mentions and missing_groups([list(question_mentions)], where, langs))
        for s, where in contexts
    ):
        return fail(
            ReasonCode.no_question,
            f"the question asks for something else than the missing{about} (one of "
            f"{', '.join(question_forbids)})",
        )
    return None


def asks_user(answer: str, user_texts: Sequence[str]) -> bool:
    """True when a text reply asks the user something (`asking_sentences`)."""
    return bool(asking_sentences(answer, user_words_of(list(user_texts))))


def unasked_call_problem(
    call: Call, tool: str, missing: Sequence[str], confirmation_tool: str | None
) -> Verdict | None:
    """The failing verdict of a call made before the user gave `tool`'s `missing`
    values: a call to `tool` that fills one is `invented_argument`, one that leaves them
    out `called_when_should_not`; asking the confirmation tool to approve `tool` is
    `invented_argument`. None for any other call."""
    if call.name == tool:
        invented = [m for m in missing if m in call.arguments and _given(call.arguments[m])]
        if invented:
            given = ", ".join(f"{m}={short(call.arguments[m])}" for m in invented)
            return fail(
                ReasonCode.invented_argument, f"{call.name} called with {given}, never given"
            )
        return fail(
            ReasonCode.called_when_should_not,
            f"{call.name} called although {', '.join(missing)} is missing",
        )
    if call.name == confirmation_tool and asks_to_confirm(call, tool):
        return fail(
            ReasonCode.invented_argument,
            f"asked to confirm {tool} although {', '.join(missing)} was never given",
        )
    return None


__all__ = ["asks_user", "clarify_spec_problems", "question_problem", "unasked_call_problem"]
