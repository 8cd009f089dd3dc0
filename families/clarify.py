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
else.

Episodes reuse these checks for a question the scripted user answers
(`question_problem`, `unasked_call_problem`, `clarify_spec_problems`), so a question is
recognised the same way in an entry and in a trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.tools import Toolset
from loragate.families._base import Family, Sample, ScoringContext
from loragate.families._checks import (
    Call,
    asks_to_confirm,
    call_attempt,
    calls_of,
    fail,
    hygiene,
    names,
    short,
)
from loragate.formats.records import ParseResult, ReasonCode, Verdict
from loragate.judge.answer import answer_problem, invented_result_problem, sample_sources
from loragate.judge.language import reply_languages
from loragate.judge.questions import asking_sentences, user_words_of
from loragate.judge.text import missing_groups, pattern_list_problems, sentences

if TYPE_CHECKING:
    from loragate.evalset.load import Entry


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
        out = clarify_spec_problems(ctx.toolset, expect.tool, expect.missing)
        if expect.tool in expect.allowed_calls:
            out.append(
                f"`allowed_calls` holds `tool` {expect.tool!r}; the missing value would be "
                "invented, remove it from `allowed_calls`"
            )
        return pattern_list_problems("question_mentions", expect.question_mentions) + out

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


# -- the checks, shared with episodes (a question the scripted user answers) ----------


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
) -> Verdict | None:
    """The failing verdict of a text reply that should ask the user for a missing value,
    or None when it asks (see the module doc for the order of the checks).

    `sources` are the (name, text) pairs the reply must not merely copy; `user_texts`
    the user's messages (a yes/no question made only of their words does not ask).
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
    if question_mentions:
        where = _question_context(parse.answer, asking)
        if missing_groups([list(question_mentions)], where, langs):
            about = f" {', '.join(missing)}" if missing else " value"
            return fail(
                ReasonCode.no_question,
                f"the question is not about the missing{about}: it mentions none of "
                f"{', '.join(question_mentions)}",
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
