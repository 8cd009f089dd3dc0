"""Family E `clarify`: a required value is missing: no call that invents it, and a question back.

Checks in order: `unparseable`; a call to `tool` is `invented_argument` when it gives a
`missing` argument a value (anything but null, "", [] or {}), else
`called_when_should_not`; `unknown_tool`; a call to a tool outside `allowed_calls` is
`called_when_should_not`; `schema_invalid` for allowed calls. Allowed calls alone pass
(a lookup first is a sane step; the question can follow). With no call: no text is
`empty_answer`; text that asks nothing is `no_question` (what counts as asking is
`loragate.families._checks.QUESTION_RE`); text that mentions none of
`question_mentions` (case-insensitive substrings) is `no_question` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import Family, Sample, ScoringContext
from loragate.families._checks import (
    asks_question,
    calls_of,
    expect_as,
    fail,
    hygiene,
    names,
    short,
)
from loragate.records import ReasonCode, Verdict

if TYPE_CHECKING:
    from loragate.evalset import Entry


class ClarifyExpect(BaseModel):
    """`{"tool", "missing": [...], "allowed_calls": [...], "question_mentions": [...]}`.

    `tool`: the tool the user is after. `missing`: its arguments the user did not give.
    `allowed_calls`: tools that may be called meanwhile (e.g. a lookup). The answer
    must ask a question; if `question_mentions` is given it must mention one of them.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str
    missing: list[str] = Field(min_length=1)
    allowed_calls: list[str] = Field(default_factory=list)
    question_mentions: list[str] = Field(default_factory=list)


def _given(value: Any) -> bool:
    """True when a value is a real value, not a placeholder for "not given"."""
    return value is not None and not (isinstance(value, (str, list, dict)) and not value)


class Clarify(Family):
    name: ClassVar[str] = "clarify"
    letter: ClassVar[str] = "E"
    passes_when: ClassVar[str] = (
        "a required value is missing: no call that invents it, and a question back."
    )
    expect_model: ClassVar[type[BaseModel]] = ClarifyExpect

    def referenced_tools(self, expect: BaseModel) -> list[str]:
        exp = expect_as(expect, ClarifyExpect)
        return [exp.tool, *exp.allowed_calls]

    def check_entry(self, entry: Entry, expect: BaseModel, ctx: ScoringContext) -> list[str]:
        exp = expect_as(expect, ClarifyExpect)
        out: list[str] = []
        tool = ctx.toolset.by_name.get(exp.tool)
        if tool is not None:
            props = tool.function.parameters.get("properties", {})
            if isinstance(props, dict):
                unknown = [m for m in exp.missing if m not in props]
                if unknown:
                    out.append(
                        f"`missing` names {', '.join(unknown)}, not parameters of {exp.tool!r} "
                        f"(it has {', '.join(props) or 'none'}); list parameters of `tool`"
                    )
        if exp.tool in exp.allowed_calls:
            out.append(
                f"`allowed_calls` holds `tool` {exp.tool!r}; the missing value would be "
                "invented, remove it from `allowed_calls`"
            )
        return out

    def score(self, sample: Sample) -> Verdict:
        expect = expect_as(sample.expect, ClarifyExpect)
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        calls = calls_of(parse)
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
                f"called {names(disallowed)}; expected a question about {', '.join(expect.missing)}",
            )
        if calls:
            bad = hygiene(calls, toolset)
            return bad if bad is not None else Verdict.ok()
        answer = parse.answer.strip()
        if not answer:
            return fail(ReasonCode.empty_answer, "no call and no text")
        if not asks_question(answer):
            return fail(ReasonCode.no_question, "the answer asks nothing")
        if expect.question_mentions:
            folded = answer.casefold()
            if not any(m.casefold() in folded for m in expect.question_mentions):
                return fail(
                    ReasonCode.no_question,
                    f"the question mentions none of {', '.join(expect.question_mentions)}",
                )
        return Verdict.ok()
