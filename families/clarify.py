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
`loragate.families._questions`: a question, a wh- or inverted question after a
comma, a request such as "send me ..." or "I'd need ..."; not an exclamation, not a
yes/no question made only of the user's own words); a reply whose asking sentences
(with the sentence before each) mention none of `question_mentions` (whole words,
case-insensitive, `*` for any ending) is `no_question` too: it asks about something
else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._answer import invented_result_problem, text_reply_problem
from loragate.families._base import Family, Sample, ScoringContext
from loragate.families._checks import asks_to_confirm, calls_of, fail, hygiene, names, short
from loragate.families._questions import asking_sentences, user_words_of
from loragate.families._text import missing_groups, pattern_list_problems, sentences
from loragate.records import ReasonCode, Verdict

if TYPE_CHECKING:
    from loragate.evalset import Entry


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


def _question_context(answer: str, asking: list[str]) -> str:
    """The asking sentences with the sentence before each: where the question names
    what it asks for ("I can't convert without the currency. Which one is it?")."""
    parts = sentences(answer)
    keep: list[str] = []
    for i, s in enumerate(parts):
        if s in asking:
            keep += parts[max(0, i - 1) : i + 1]
    return " ".join(keep)


def _given(value: Any) -> bool:
    """True when a value is a real value, not a placeholder for "not given"."""
    return value is not None and not (isinstance(value, (str, list, dict)) and not value)


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
        out: list[str] = pattern_list_problems("question_mentions", expect.question_mentions)
        tool = ctx.toolset.by_name.get(expect.tool)
        if tool is not None:
            props = tool.function.parameters.get("properties", {})
            if isinstance(props, dict):
                unknown = [m for m in expect.missing if m not in props]
                if unknown:
                    out.append(
                        f"`missing` names {', '.join(unknown)}, not parameters of "
                        f"{expect.tool!r} (it has {', '.join(props) or 'none'}); list "
                        "parameters of `tool`"
                    )
        if expect.tool in expect.allowed_calls:
            out.append(
                f"`allowed_calls` holds `tool` {expect.tool!r}; the missing value would be "
                "invented, remove it from `allowed_calls`"
            )
        return out

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
        bad = text_reply_problem(sample)
        if bad is not None:
            return bad
        user_texts = [m.content or "" for m in sample.entry.messages if m.role == "user"]
        asking = asking_sentences(parse.answer, user_words_of(user_texts))
        if not asking:
            return fail(ReasonCode.no_question, "the reply asks nothing")
        if expect.question_mentions:
            where = _question_context(parse.answer, asking)
            if missing_groups([expect.question_mentions], where):
                return fail(
                    ReasonCode.no_question,
                    "the question is not about the missing "
                    f"{', '.join(expect.missing)}: it mentions none of "
                    f"{', '.join(expect.question_mentions)}",
                )
        return Verdict.ok()

    @staticmethod
    def _judge_calls(sample: Sample[ClarifyExpect], calls: list[Any]) -> Verdict:
        expect = sample.expect
        for c in calls:
            if c.name != expect.tool:
                continue
            invented = [m for m in expect.missing if m in c.arguments and _given(c.arguments[m])]
            if invented:
                given = ", ".join(f"{m}={short(c.arguments[m])}" for m in invented)
                return fail(
                    ReasonCode.invented_argument, f"{c.name} called with {given}, never given"
                )
            return fail(
                ReasonCode.called_when_should_not,
                f"{c.name} called although {', '.join(expect.missing)} is missing",
            )
        conf = sample.ctx.policy.confirmation_tool
        for c in calls:
            if c.name == conf and asks_to_confirm(c, expect.tool):
                return fail(
                    ReasonCode.invented_argument,
                    f"asked to confirm {expect.tool} although {', '.join(expect.missing)} was "
                    "never given",
                )
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
