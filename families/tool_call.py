"""Family A `tool_call`: exactly the expected call(s), schema-valid, argument matchers hold."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.checks import calls_of, expect_calls_prelude, match_calls
from loragate.families._family import Family, Sample
from loragate.families._replies import invented_result_problem
from loragate.formats.evalset import CallSpec
from loragate.formats.records import Verdict
from loragate.judge.text import TEXT_OPERATORS


class ToolCallExpect(BaseModel):
    """`{"calls": [{"name", "arguments": {matchers}}]}`: exactly these calls, any order."""

    model_config = ConfigDict(extra="forbid")

    calls: list[CallSpec] = Field(min_length=1)


def judge_expected_calls(sample: Sample[ToolCallExpect]) -> Verdict:
    """The verdict of families that expect exactly `calls` in this turn (A and B)."""
    calls = calls_of(sample.parse)
    early = expect_calls_prelude(sample.parse, calls, sample.ctx.toolset)
    if early is not None:
        return early
    verdict = match_calls(calls, sample.expect.calls, text=TEXT_OPERATORS)
    if not verdict.passed:
        return verdict
    return invented_result_problem(sample, calls) or verdict


class ToolCallFamily(Family[ToolCallExpect]):
    """Checks in order: `unparseable`, `no_call`, `unknown_tool`, `schema_invalid`, then
    the calls against `calls` as a multiset: `wrong_tool`, `arg_mismatch`,
    `missing_call`, `extra_call` (see `loragate.calls.checks.match_calls`); last,
    `invented_result` when the text beside the calls already states their result
    (see `loragate.judge.claims.invented_result`)."""

    name: ClassVar[str] = "tool_call"
    letter: ClassVar[str] = "A"
    passes_when: ClassVar[str] = (
        "exactly the expected call(s), schema-valid, argument matchers hold."
    )
    expect_model = ToolCallExpect

    def referenced_calls(self, expect: ToolCallExpect) -> list[CallSpec]:
        return list(expect.calls)

    def score(self, sample: Sample[ToolCallExpect]) -> Verdict:
        return judge_expected_calls(sample)
