"""Family A `tool_call`: exactly the expected call(s), schema-valid, argument matchers hold."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.families._checks import calls_of, expect_as, expect_calls_prelude, match_calls
from loragate.records import Verdict


class ToolCallExpect(BaseModel):
    """`{"calls": [{"name", "arguments": {matchers}}]}`: exactly these calls, any order."""

    model_config = ConfigDict(extra="forbid")

    calls: list[CallSpec] = Field(min_length=1)


class ToolCallFamily(Family):
    """Checks in order: `unparseable`, `no_call`, `unknown_tool`, `schema_invalid`, then
    the calls against `calls` as a multiset: `wrong_tool`, `arg_mismatch`,
    `missing_call`, `extra_call` (see `loragate.families._checks.match_calls`)."""

    name: ClassVar[str] = "tool_call"
    letter: ClassVar[str] = "A"
    passes_when: ClassVar[str] = (
        "exactly the expected call(s), schema-valid, argument matchers hold."
    )
    expect_model: ClassVar[type[BaseModel]] = ToolCallExpect

    def referenced_calls(self, expect: BaseModel) -> list[CallSpec]:
        return list(expect_as(expect, ToolCallExpect).calls)

    def score(self, sample: Sample) -> Verdict:
        expect = expect_as(sample.expect, ToolCallExpect)
        calls = calls_of(sample.parse)
        early = expect_calls_prelude(sample.parse, calls, sample.ctx.toolset)
        if early is not None:
            return early
        return match_calls(calls, expect.calls)
