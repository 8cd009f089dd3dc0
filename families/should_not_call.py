"""Family F `should_not_call`: settled knowledge: a direct answer and no tool call."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.records import FaultKind, Verdict

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
        raise NotImplementedError
