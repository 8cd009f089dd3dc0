"""Family B `parallel`: every expected independent call in one turn, any order, no extras."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from loragate.families._family import Family, Sample
from loragate.families.tool_call import ToolCallExpect, judge_expected_calls
from loragate.formats.evalset import CallSpec
from loragate.formats.records import Verdict


class ParallelExpect(ToolCallExpect):
    """`{"calls": [...]}`: all of these independent calls in one turn, any order, no extras."""

    model_config = ConfigDict(extra="forbid")

    calls: list[CallSpec] = Field(min_length=2)


class Parallel(Family[ParallelExpect]):
    """Like `tool_call`, with at least two expected calls that must all come in this one
    turn: one call now and the rest later is `missing_call`. Checks in order:
    `unparseable`, `no_call`, `unknown_tool`, `schema_invalid`, then `wrong_tool`,
    `arg_mismatch`, `missing_call`, `extra_call`, `invented_result`."""

    name: ClassVar[str] = "parallel"
    letter: ClassVar[str] = "B"
    passes_when: ClassVar[str] = (
        "every expected independent call in one turn, any order, no extras."
    )
    expect_model = ParallelExpect

    def referenced_calls(self, expect: ParallelExpect) -> list[CallSpec]:
        return list(expect.calls)

    def score(self, sample: Sample[ParallelExpect]) -> Verdict:
        return judge_expected_calls(sample)
