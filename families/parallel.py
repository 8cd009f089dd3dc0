"""Family B `parallel`: every expected independent call in one turn, any order, no extras."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.families._checks import calls_of, expect_as, expect_calls_prelude, match_calls
from loragate.records import Verdict


class ParallelExpect(BaseModel):
    """`{"calls": [...]}`: all of these independent calls in one turn, any order, no extras."""

    model_config = ConfigDict(extra="forbid")

    calls: list[CallSpec] = Field(min_length=2)


class Parallel(Family):
    """Like `tool_call`, with at least two expected calls that must all come in this one
    turn: one call now and the rest later is `missing_call`. Checks in order:
    `unparseable`, `no_call`, `unknown_tool`, `schema_invalid`, then `wrong_tool`,
    `arg_mismatch`, `missing_call`, `extra_call`."""

    name: ClassVar[str] = "parallel"
    letter: ClassVar[str] = "B"
    passes_when: ClassVar[str] = (
        "every expected independent call in one turn, any order, no extras."
    )
    expect_model: ClassVar[type[BaseModel]] = ParallelExpect

    def referenced_calls(self, expect: BaseModel) -> list[CallSpec]:
        return list(expect_as(expect, ParallelExpect).calls)

    def score(self, sample: Sample) -> Verdict:
        expect = expect_as(sample.expect, ParallelExpect)
        calls = calls_of(sample.parse)
        early = expect_calls_prelude(sample.parse, calls, sample.ctx.toolset)
        if early is not None:
            return early
        return match_calls(calls, expect.calls)
