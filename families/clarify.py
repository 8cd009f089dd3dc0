"""Family E `clarify`: a required value is missing: no call that invents it, and a question back.

Checks in order: `unparseable`; a call to `tool` is `invented_argument` when it gives a
`missing` argument a value (anything but null, "", [] or {}), else
`called_when_should_not`; asking the policy's confirmation tool to approve `tool` is
`invented_argument` too (the request states a value that was never given); `unknown_tool`; a call to a tool outside `allowed_calls` is
`called_when_should_not`; `schema_invalid` for allowed calls; `invented_result` for
text beside them that states a result. Allowed calls alone pass (a lookup first is a
sane step; the question can follow).

With no call: a call written as text is `unparseable`; then the shared answer check
(`empty_answer`, `template_leak`, `degenerate`, `echo`, `refusal`, `non_answer`); a
reply with no asking sentence is `no_question` (what asks is
`loragate.judge.questions`: a question, a wh- or inverted question after a
comma, a request such as "send me ..." or "I'd need ..."; not an exclamation, not a
yes/no question made only of the user's own words); a reply whose asking sentences
(with the sentence before each) mention none of `question_mentions` (whole words,
case-insensitive, `*` for any ending) is `no_question` too: it asks about something
else; and so is one whose every question holds a pattern of `question_forbids` (a
question for a value the user already gave).

The question and early-call checks are `loragate.judge.clarification`'s
(`question_problem`, `unasked_call_problem`, `clarify_spec_problems`), shared with the
episodes' scripted user, so a question is recognised the same way in an entry and in a
trajectory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.checks import (
    calls_of,
    fail,
    hygiene,
    names,
    short,
)
from loragate.families._family import Family, Sample, ScoringContext
from loragate.families._replies import invented_result_problem, sample_sources
from loragate.formats.records import ReasonCode, Verdict
from loragate.judge.clarification import (
    clarify_spec_problems,
    question_problem,
    unasked_call_problem,
)
from loragate.judge.text import pattern_list_problems

if TYPE_CHECKING:
    from loragate.formats.evalset import Entry


class ClarifyExpect(BaseModel):
    """`{"tool", "missing": [...], "allowed_calls": [...], "question_mentions": [...]}`.

    `tool`: the tool the user is after. `missing`: its arguments the user did not give.
    `allowed_calls`: tools that may be called meanwhile (e.g. a lookup). The answer
    must ask a question; if `question_mentions` is given it must mention one of them
    (whole words): name the missing value, not words the user already said.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str
    missing: list[str] = Field(min_length=1)
    allowed_calls: list[str] = Field(default_factory=list)
    question_mentions: list[str] = Field(default_factory=list)
    question_forbids: list[str] = Field(default_factory=list)
    """(evalset format 6) Statement patterns of a question about something else - above
    all a value the user already gave (`into & currenc*` when the target currency was
    given and the source is missing): an asking sentence that holds one does not ask
    for the missing value."""


class Clarify(Family[ClarifyExpect]):
    name: ClassVar[str] = "clarify"
    letter: ClassVar[str] = "E"
    passes_when: ClassVar[str] = (
        "a required value is missing: no call that invents it, and a question back."
    )
    expect_model = ClarifyExpect

    def referenced_tools(self, expect: ClarifyExpect) -> list[str]:
        return [expect.tool, *expect.allowed_calls]

    def check_entry(self, entry: Entry, expect: ClarifyExpect, ctx: ScoringContext) -> list[str]:
        out = clarify_spec_problems(ctx.toolset, expect.tool, expect.missing)
        if expect.tool in expect.allowed_calls:
            out.append(
                f"`allowed_calls` holds `tool` {expect.tool!r}; the missing value would be "
                "invented, remove it from `allowed_calls`"
            )
        return (
            pattern_list_problems("question_mentions", expect.question_mentions)
            + pattern_list_problems("question_forbids", expect.question_forbids)
            + out
        )

    def score(self, sample: Sample[ClarifyExpect]) -> Verdict:
        expect = sample.expect
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        calls = calls_of(parse)
        if calls:
            return self._judge_calls(sample, calls)
        user_texts = [m.content or "" for m in sample.entry.messages if m.role == "user"]
        bad = question_problem(
            parse,
            sample.ctx.toolset,
            sample_sources(sample),
            user_texts,
            question_mentions=expect.question_mentions,
            missing=expect.missing,
            question_forbids=expect.question_forbids,
        )
        return bad or Verdict.ok()

    @staticmethod
    def _judge_calls(sample: Sample[ClarifyExpect], calls: list[Any]) -> Verdict:
        expect = sample.expect
        # Calls to `tool` first (whatever their order), then confirmations of it.
        for c in sorted(calls, key=lambda c: c.name != expect.tool):
            bad = unasked_call_problem(
                c, expect.tool, expect.missing, sample.ctx.policy.confirmation_tool
            )
            if bad is not None:
                return bad
        toolset = sample.ctx.toolset
        for c in calls:
            if c.name not in toolset:
                return fail(
                    ReasonCode.unknown_tool, f"{short(c.name)} is not a tool of this evalset"
                )
        disallowed = [c for c in calls if c.name not in expect.allowed_calls]
        if disallowed:
            return fail(
                ReasonCode.called_when_should_not,
                f"called {names(disallowed)}; expected a question about "
                f"{', '.join(expect.missing)}",
            )
        bad = hygiene(calls, toolset)
        if bad is not None:
            return bad
        return invented_result_problem(sample, calls) or Verdict.ok()
