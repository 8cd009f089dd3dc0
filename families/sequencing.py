"""Family C `sequencing`: dependent steps: only the next step now, with values threaded from earlier tool results."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.checks import calls_of, fail, hygiene, match_calls, names, no_call_verdict
from loragate.families._family import Family, Sample, ScoringContext
from loragate.families._replies import invented_result_problem
from loragate.formats.evalset import CallSpec
from loragate.formats.records import ReasonCode, Verdict
from loragate.judge.text import TEXT_OPERATORS

if TYPE_CHECKING:
    from loragate.formats.evalset import Entry


class SequencingExpect(BaseModel):
    """`{"next_calls": [...], "later_tools": [...]}`.

    `next_calls`: the step(s) to take now (arguments may thread values from tool results
    in the history). `later_tools`: tools of dependent later steps; calling one now,
    before its input exists, is an `order_violation`.
    """

    model_config = ConfigDict(extra="forbid")

    next_calls: list[CallSpec] = Field(min_length=1)
    later_tools: list[str] = Field(default_factory=list)


class Sequencing(Family[SequencingExpect]):
    """Checks in order: `unparseable`, `no_call` (`unparseable` for a call written
    without tags), `order_violation` (any call to a
    `later_tools` tool, even a malformed one: the step came too early whatever its
    arguments), `unknown_tool`, `schema_invalid`, then the calls against `next_calls`
    as in `tool_call` (`wrong_tool`, `arg_mismatch`, `missing_call`, `extra_call`),
    and `invented_result` for text that states the step's result in advance."""

    name: ClassVar[str] = "sequencing"
    letter: ClassVar[str] = "C"
    passes_when: ClassVar[str] = (
        "dependent steps: only the next step now, with values threaded from earlier tool results."
    )
    expect_model = SequencingExpect

    def referenced_calls(self, expect: SequencingExpect) -> list[CallSpec]:
        return list(expect.next_calls)

    def referenced_tools(self, expect: SequencingExpect) -> list[str]:
        return list(expect.later_tools)

    def check_entry(self, entry: Entry, expect: SequencingExpect, ctx: ScoringContext) -> list[str]:
        both = sorted({s.name for s in expect.next_calls} & set(expect.later_tools))
        if both:
            return [
                f"`later_tools` and `next_calls` both name {', '.join(both)}; a tool is either "
                "the next step or a later one, remove it from one of them"
            ]
        return []

    def score(self, sample: Sample[SequencingExpect]) -> Verdict:
        expect = sample.expect
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        calls = calls_of(parse)
        if not calls:
            return no_call_verdict(parse, sample.ctx.toolset, "expected the next step")
        early = [c for c in calls if c.name in expect.later_tools]
        if early:
            return fail(
                ReasonCode.order_violation,
                f"{names(early)} called before the step it depends on "
                f"({', '.join(s.name for s in expect.next_calls)})",
            )
        bad = hygiene(calls, sample.ctx.toolset)
        if bad is not None:
            return bad
        verdict = match_calls(calls, expect.next_calls, text=TEXT_OPERATORS)
        if not verdict.passed:
            return verdict
        return invented_result_problem(sample, calls) or verdict
