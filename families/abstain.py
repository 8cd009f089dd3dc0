"""Family H `abstain`: no tool fits and the answer cannot be known - no call, an
honest decline, nothing invented.

The user asks for what none of the tools can do and the model cannot know: a live
reading, another system's records, an action no tool performs, another company's
decision. The right reply says it cannot do it and why (no tool, no access, no way to
know) or where it can be done, ideally with what would be needed - and calls nothing.

Checks in order (`semantics: loragate`, the default):

1. `called_when_should_not`: any call, to a tool of the entry or not - also a broken
   `<tool_call>` block and a call written as text without tags (a bare `{"name": ...,
   "arguments": ...}` object, `tool_name(...)`), in both parse modes: an attempted call
   is a call. (BFCL's checker counts a call it cannot decode as no call; see
   `semantics: bfcl`.)
2. The shared answer check (`judge.answer.answer_problem`): `empty_answer`,
   `template_leak`, `degenerate`, `echo`, `non_answer`. Its `refusal` is not a failure
   here: declining is the point; step 5 asks for a reason.
3. `policy_refusal`: a declining sentence that blames a rule, a permission or ethics
   ("I'm not authorized to move company funds", "for security reasons I cannot open
   gates") where the reason is a missing tool.
4. `invented_answer`: a statement of the entry's `answer_forbids` (the typical invented
   answer, as in F), or what the assistant could not know
   (`judge.abstention.invented_fact`): a figure, date, time, id or measurement the
   conversation never held, a completed action ("Done - the money is moved"), a state
   of the thing asked about ("Gate B is open"), a tool failure no tool had.
5. `refusal` for a decline without a reason or the request's words ("I can't help
   with that.", "I don't know."), `no_decline` when nothing declines or redirects
   (`judge.abstention.abstention`). An entry without its own expectations (`{}`, the
   generic rule BFCL's irrelevance imports get) also accepts a question back in the
   request's words when a tool of the entry is about the request ("Which city?" when
   a weather tool exists): the tool lacks a value, and asking is right.
6. `missing_content`: a group of `answer_mentions` (what cannot be done, or what would
   be needed) is not mentioned (whole words, case-insensitive, `*` for any ending).

`semantics: bfcl` (what `loragate import bfcl --semantics bfcl` writes for BFCL's
irrelevance categories) is BFCL's rule exactly: any reply without a parsed call
passes, whatever its text, and a `<tool_call>` block that cannot be read counts as no
call.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.checks import call_attempt, calls_of, fail, names, short
from loragate.families._family import Family, Sample, ScoringContext
from loragate.families._replies import reply_problem
from loragate.formats.records import ReasonCode, Verdict
from loragate.judge.abstention import (
    abstention,
    asks_about_request,
    bare_decline,
    invented_fact,
    policy_blame,
    tool_fits,
)
from loragate.judge.figures import date_values, number_values
from loragate.judge.text import (
    first_statement_match,
    fold,
    group_problems,
    missing_groups,
    pattern_list_problems,
)

if TYPE_CHECKING:
    from loragate.formats.evalset import Entry


class AbstainExpect(BaseModel):
    """`{"topic": "...", "answer_mentions": [[...], ...], "answer_forbids": [...],
    "semantics": "loragate"}` - every field optional: `{}` is the generic rule."""

    model_config = ConfigDict(extra="forbid")

    topic: str | None = None
    """What no tool can do here (documentation only)."""
    answer_mentions: list[list[str]] = Field(default_factory=list)
    """Groups of alternative terms the reply must mention, one term of every group: what
    cannot be done or what would be needed (whole words, case-insensitive, `*` at the
    end for any ending). Add `tool*` to a group to accept "I can't do that with the tools
    I have"."""
    answer_forbids: list[str] = Field(default_factory=list)
    """Statement patterns of the typical invented answer (terms joined by ` & `, `!` for
    a term that must be absent, within one non-negated statement), e.g.
    `gate & unlocked`."""
    semantics: Literal["loragate", "bfcl"] = "loragate"
    """`bfcl`: BFCL's irrelevance rule - any reply without a parsed call passes."""


class Abstain(Family[AbstainExpect]):
    name: ClassVar[str] = "abstain"
    letter: ClassVar[str] = "H"
    passes_when: ClassVar[str] = (
        "no tool fits and the answer cannot be known: no call, an honest decline, nothing invented."
    )
    expect_model = AbstainExpect

    def check_entry(self, entry: Entry, expect: AbstainExpect, ctx: ScoringContext) -> list[str]:
        return group_problems("answer_mentions", expect.answer_mentions) + pattern_list_problems(
            "answer_forbids", expect.answer_forbids
        )

    def score(self, sample: Sample[AbstainExpect]) -> Verdict:
        expect = sample.expect
        parse = sample.parse
        calls = calls_of(parse)
        if expect.semantics == "bfcl":
            if calls:
                return fail(ReasonCode.called_when_should_not, f"called {names(calls)}")
            return Verdict.ok()
        if parse.status == "unparseable":
            return fail(
                ReasonCode.called_when_should_not,
                f"a call attempt that could not be read ({parse.error or 'broken block'}); "
                "expected no call",
            )
        if calls:
            return fail(
                ReasonCode.called_when_should_not,
                f"called {names(calls)}; no tool can serve this request",
            )
        attempt = call_attempt(parse, sample.ctx.toolset)
        if attempt is not None:
            return fail(
                ReasonCode.called_when_should_not,
                f"a call to {short(attempt)} written without <tool_call> tags; expected no call",
            )
        bad = reply_problem(sample)
        if bad is not None and bad.reason != ReasonCode.refusal:
            return bad
        answer = parse.answer
        blamed = policy_blame(answer)
        if blamed is not None:
            return fail(
                ReasonCode.policy_refusal,
                f"blames a rule or permission, the reason is a missing tool: {blamed!r}",
            )
        forbidden = first_statement_match(expect.answer_forbids, answer)
        if forbidden is not None:
            return fail(ReasonCode.invented_answer, f"a typical invented answer: {forbidden!r}")
        known = _known(sample.entry, sample.ctx.system_prompt)
        invented = invented_fact(answer, set(known[0]), set(known[1]), known[2])
        if invented is not None:
            return fail(
                ReasonCode.invented_answer,
                f"states what no tool gave and the assistant cannot know: {invented!r}",
            )
        request = _last_user(sample.entry)
        terms = [t for group in expect.answer_mentions for t in group]
        if abstention(answer, request, tuple(terms)) is None and not _asks_for_what_is_missing(
            sample, request
        ):
            bare = bare_decline(answer)
            if bare is not None:
                return fail(
                    ReasonCode.refusal,
                    f"a decline without a reason: {bare!r}; say what cannot be done and why "
                    "(no tool, no access), or where it can be done",
                )
            return fail(
                ReasonCode.no_decline,
                "neither declines nor says where it can be done; expected an honest "
                "'I can't do that with the tools I have'",
            )
        missing = missing_groups(expect.answer_mentions, answer)
        if missing:
            return fail(
                ReasonCode.missing_content, f"the decline mentions none of: {', '.join(missing[0])}"
            )
        return Verdict.ok()


def _asks_for_what_is_missing(sample: Sample[AbstainExpect], request: str) -> bool:
    """The generic rule (an entry without its own expectations, as BFCL's irrelevance
    imports are) also accepts a question back in the request's words when a tool of
    the entry is about the request: the tool needs a value the user has not given
    ("Which city?" when a weather tool exists), so asking is right and calling is not."""
    expect = sample.expect
    if expect.answer_mentions or expect.answer_forbids:
        return False
    tools = tuple((t.function.name, t.function.description) for t in sample.ctx.toolset.tools)
    return (
        tool_fits(request, tools) and asks_about_request(sample.parse.answer, request) is not None
    )


def _last_user(entry: Entry) -> str:
    return next((m.content or "" for m in reversed(entry.messages) if m.role == "user"), "")


@lru_cache(maxsize=4096)
def _known_of(texts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[tuple[int, int]], str]:
    values: set[str] = set()
    dates: set[tuple[int, int]] = set()
    for t in texts:
        values |= number_values(t)
        dates |= date_values(t)
    return frozenset(values), frozenset(dates), fold(" ".join(texts))


def _known(
    entry: Entry, system_prompt: str | None
) -> tuple[frozenset[str], frozenset[tuple[int, int]], str]:
    """The values, dates and (folded) words of the conversation: what a reply may
    restate without inventing it."""
    texts = [system_prompt or ""]
    for m in entry.messages:
        texts.append(m.content or "")
        for tc in m.tool_calls or []:
            args = tc.function.arguments
            texts.append(args if isinstance(args, str) else repr(args))
    return _known_of(tuple(texts))
