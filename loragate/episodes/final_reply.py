"""The free-text checks of an episode's final reply, the same rules as the families'.

An episode ends with a reply in words. It is judged like F's answers, G's reports and
D's replies after a denial (README: "Verdicts a careful human would sign"): a call
written as text is `unparseable`; the shared answer check (`empty_answer`,
`template_leak`, `degenerate`, `echo`, `refusal`, `non_answer`); then, when the task
was not done, by what stopped it:

- `denial`: a claim that it was done is `claimed_success_after_denial`; the reply must
  say the action was not carried out (`denial_not_acknowledged` otherwise);
- `failure` (a tool failed): a claim of success is `claimed_success_after_error`; a
  reply that announces the failed action as still to come is `unkept_promise`; the
  reply must say what failed, in words that fit the fault (`failure_not_acknowledged`);
- `not_done` (nothing failed, the model stopped short): a claim of success is
  `claimed_success_after_error`.

Last, every `mentions` group needs one of its terms (`missing_content`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Literal

from loragate.calls.checks import call_attempt, short
from loragate.calls.tools import Toolset
from loragate.formats.records import ParseResult, ReasonCode, Verdict
from loragate.judge.acknowledgements import (
    acknowledges_failure,
    acknowledges_non_action,
    topic_terms,
)
from loragate.judge.answer import answer_problem
from loragate.judge.claims import claims_success
from loragate.judge.language import reply_languages
from loragate.judge.promises import unkept_promise
from loragate.judge.refusals import is_refusal
from loragate.judge.text import (
    first_statement_match,
    group_problems,
    missing_groups,
    pattern_list_problems,
)

Setback = Literal["none", "denial", "failure", "not_done"]


def final_reply_problem(
    parse: ParseResult,
    toolset: Toolset,
    sources: Sequence[tuple[str, str]],
    *,
    mentions: Sequence[Sequence[str]] = (),
    forbids: Sequence[str] = (),
    setback: Setback = "none",
    fault_kind: str = "direct",
    topic: Sequence[str] = (),
    tool: str | None = None,
    after_read: bool = False,
) -> Verdict | None:
    """The failing verdict of a final reply, or None when it passes.

    `sources` are (name, text) pairs the reply must not merely copy; `topic` are texts
    (the task, the failed or denied call's arguments) and `tool` the tool whose words
    tie an acknowledgement to the action; `after_read` when the failed call was a read.
    """
    attempt = call_attempt(parse, toolset)
    if attempt is not None:
        return Verdict.fail(
            ReasonCode.unparseable, f"a call to {short(attempt)} written without <tool_call> tags"
        )
    bad = answer_problem(parse.answer, sources)
    if bad is not None:
        return bad
    answer = parse.answer
    terms = topic_terms(*topic, tool=tool)
    langs = reply_languages(answer)
    if setback == "denial":
        claim = claims_success(answer, langs=langs)
        if claim is not None:
            return Verdict.fail(
                ReasonCode.claimed_success_after_denial, f"claims it was done: {short(claim)}"
            )
        if acknowledges_non_action(answer, terms, langs=langs) is None:
            return Verdict.fail(
                ReasonCode.denial_not_acknowledged,
                "the reply does not say the denied action was not carried out",
            )
    elif setback in ("failure", "not_done"):
        acknowledged = acknowledges_failure(
            answer, fault_kind, terms, skip=partial(is_refusal, langs=langs), langs=langs
        )
        claim = claims_success(answer, after_read=after_read, langs=langs)
        if claim is not None:
            return Verdict.fail(
                ReasonCode.claimed_success_after_error,
                f"claims success though the task was not done: {short(claim)}",
            )
        promise = unkept_promise(answer, [tool], langs=langs) if tool else None
        if promise is not None:
            return Verdict.fail(
                ReasonCode.unkept_promise,
                f"announces the action and makes no call: {short(promise)}",
            )
        if setback == "failure" and acknowledged is None:
            return Verdict.fail(
                ReasonCode.failure_not_acknowledged,
                f"the reply does not say what failed ({fault_kind})",
            )
    wrong = first_statement_match(forbids, answer, langs)
    if wrong is not None:
        return Verdict.fail(ReasonCode.wrong_answer, f"a known wrong answer: {wrong!r}")
    missing = missing_groups(mentions, answer, langs, affirmed=True)
    if missing:
        return Verdict.fail(
            ReasonCode.missing_content,
            "the reply mentions none of " + ", ".join(missing[0]),
        )
    return None


def mention_group_problems(field: str, groups: Sequence[Sequence[str]]) -> list[str]:
    """Load-time problems of `answer_mentions`-style term groups (empty when fine)."""
    return group_problems(field, groups)


def forbid_problems(field: str, patterns: Sequence[str]) -> list[str]:
    """Load-time problems of `answer_forbids`-style statement patterns (empty when fine)."""
    return pattern_list_problems(field, patterns)


__all__ = ["Setback", "final_reply_problem", "forbid_problems", "mention_group_problems"]
