"""Family F `should_not_call`: settled knowledge: a direct answer and no tool call.

Checks in order: `unparseable` (a broken call attempt is still an attempt to call),
`called_when_should_not` (any call, known tool or not), `empty_answer` (no text).
The answer's content is not judged: the family measures the decision not to call.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from loragate.families._base import Family, Sample
from loragate.families._checks import calls_of, expect_as, fail, names
from loragate.records import ReasonCode, Verdict


class ShouldNotCallExpect(BaseModel):
    """`{}`: a direct, non-empty answer with no tool call. `topic` is documentation only."""

    model_config = ConfigDict(extra="forbid")

    topic: str | None = None


class ShouldNotCall(Family):
    name: ClassVar[str] = "should_not_call"
    letter: ClassVar[str] = "F"
    passes_when: ClassVar[str] = "settled knowledge: a direct answer and no tool call."
    expect_model: ClassVar[type[BaseModel]] = ShouldNotCallExpect

    def score(self, sample: Sample) -> Verdict:
        expect_as(sample.expect, ShouldNotCallExpect)
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        calls = calls_of(parse)
        if calls:
            return fail(
                ReasonCode.called_when_should_not,
                f"called {names(calls)}; expected a direct answer",
            )
        if not parse.answer.strip():
            return fail(ReasonCode.empty_answer, "no call and no text")
        return Verdict.ok()
