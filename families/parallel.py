"""Family B `parallel`: every expected independent call in one turn, any order, no extras."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.records import FaultKind, Verdict

class ParallelExpect(BaseModel):
    """`{"calls": [...]}`: all of these independent calls in one turn, any order, no extras."""

    model_config = ConfigDict(extra="forbid")

    calls: list[CallSpec] = Field(min_length=2)


class Parallel(Family):
    name: ClassVar[str] = "parallel"
    letter: ClassVar[str] = "B"
    passes_when: ClassVar[str] = "every expected independent call in one turn, any order, no extras."
    expect_model: ClassVar[type[BaseModel]] = ParallelExpect

    def score(self, sample: Sample) -> Verdict:
        raise NotImplementedError
